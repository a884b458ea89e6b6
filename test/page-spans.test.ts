import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { sql } from 'kysely';
import { Migrator } from 'kysely';
import { pino } from 'pino';
import type { Dataset, TransferRecord } from '../src/dataset/types.ts';
import { generateSyntheticDataset } from '../src/devnet/synthetic.ts';
import { createWarehouse, type Warehouse } from '../src/warehouse/db.ts';
import { copyTransfers } from '../src/warehouse/copy.ts';
import { migrateToLatest, migrationsFrom, MIGRATIONS_DIR } from '../src/warehouse/migrate.ts';
import { createRange } from '../src/warehouse/ranges.ts';
import { freshDatabase } from './helpers/database.ts';
import { startDevnet, type RunningDevnet } from './helpers/devnet.ts';
import { captureLogger, datasetTransfers, job, migratedWarehouse, rowToTransfer, runExport, warehouseTransfers } from './helpers/exporter.ts';

const OPTIONS = { seed: 23, blocks: 400, tokens: 3, transfers: 2500, startBlock: 2_000_000 };
const LAST = OPTIONS.startBlock + OPTIONS.blocks - 1;

const key = (t: { transactionHash: string; logIndex: number }) => `${t.transactionHash}:${t.logIndex}`;

/** A row the chain never had: a copy of a real transfer under another log index, in the given block. */
function phantom(dataset: Dataset, like: TransferRecord, blockNumber: number, n: number): TransferRecord {
  const header = dataset.headers.find((h) => Number(BigInt(h.number!)) === blockNumber)!;
  const blockTimestamp = new Date(Number(BigInt(header.timestamp!)) * 1000).toISOString();
  return { ...like, blockNumber, blockHash: header.hash, blockTimestamp, logIndex: 100_000 + n };
}

/** Rows of chain 1 written by run 1; `before chains`: into a warehouse older than migration 0009 (no chain_id). */
async function insertRows(warehouse: Warehouse, rows: readonly TransferRecord[], schema: 'keyed by chain' | 'before chains' = 'keyed by chain'): Promise<void> {
  const client = await warehouse.pool.connect();
  try {
    if (schema === 'before chains') await copyTransfers(client, 'token_transfers', rows, ['inserted_by_run', 'updated_by_run'], '1\t1');
    else await copyTransfers(client, 'token_transfers', rows, ['chain_id', 'inserted_by_run', 'updated_by_run'], '1\t1\t1');
  } finally {
    client.release();
  }
}

/** An open range of the whole chain, as an older version recorded it (written without today's code). */
async function openRange(warehouse: Warehouse, jobName: string, contract: string): Promise<string> {
  const { rows } = await sql<{ id: string }>`
    INSERT INTO export_ranges (job, contract_address, from_block, to_block, created_by_run)
    VALUES (${jobName}, ${contract}, ${OPTIONS.startBlock}, ${LAST}, 1) RETURNING id`.execute(warehouse.db);
  return rows[0]!.id;
}

describe('loading by page spans', () => {
  let dataset: Dataset;
  let devnet: RunningDevnet;
  let contract: string;
  beforeAll(async () => {
    dataset = generateSyntheticDataset(OPTIONS);
    devnet = await startDevnet(dataset);
    // the busiest token: many blocks hold several of its transfers, so small pages split blocks
    const counts = new Map<string, number>();
    for (const t of dataset.transfers) counts.set(t.contractAddress, (counts.get(t.contractAddress) ?? 0) + 1);
    contract = [...counts].sort((a, b) => b[1] - a[1])[0]![0];
  });
  afterAll(async () => {
    await devnet.close();
  });

  const backfill = (name: string, pageSize: number) => job(name, [{ address: contract, fromBlock: OPTIONS.startBlock, toBlock: LAST }], { pageSize, concurrency: 3 });
  const truth = () => datasetTransfers(dataset, [contract]);

  it('removes rows the chain lost, inside pages and on the blocks two pages share, at every page size', async () => {
    const target = await migratedWarehouse('page_spans_removed');
    try {
      await runExport(target.url, devnet.base, backfill('spans', 1000));
      expect(await warehouseTransfers(target.warehouse)).toEqual(truth());
      const real = truth();
      const busy = [...new Set(real.map((t) => t.blockNumber))];
      const empty = Array.from({ length: OPTIONS.blocks }, (_, i) => OPTIONS.startBlock + i).filter((b) => !busy.includes(b));
      expect(empty.length).toBeGreaterThan(0);
      for (const pageSize of [1, 3, 7, 50]) {
        // a phantom in every block that has transfers (each an edge at some page size) and in some empty ones
        const phantoms = [...busy, ...empty.slice(0, 20)].map((b, i) => phantom(dataset, real[i % real.length]!, b, i));
        await insertRows(target.warehouse, phantoms);
        const summary = await runExport(target.url, devnet.base, backfill('spans', pageSize));
        expect(await warehouseTransfers(target.warehouse), `page size ${pageSize}`).toEqual(real);
        expect(summary.totals.rowsRemoved).toBe(phantoms.length);
        expect(summary.totals.rowsInserted + summary.totals.rowsUpdated).toBe(0);
        const removed = await target.warehouse.db.selectFrom('token_transfers_removed').selectAll().where('removed_by_run', '=', summary.runId).execute();
        expect(removed.map((r) => key(rowToTransfer(r))).sort()).toEqual(phantoms.map(key).sort());
        await target.warehouse.db.deleteFrom('token_transfers_removed').execute();
      }
      // nothing of the ranges' bookkeeping outlives them
      for (const table of ['export_missing', 'export_chunks'] as const) {
        expect(await target.warehouse.db.selectFrom(table).select(sql<number>`count(*)::int`.as('n')).executeTakeFirstOrThrow()).toEqual({ n: 0 });
      }
    } finally {
      await target.drop();
    }
  });

  it('a chunk that meets rows another job loaded after it started merges them instead of copying', async () => {
    const target = await migratedWarehouse('page_spans_fallback');
    try {
      // job "late" planned its range and found its blocks empty (fresh) … then job "early" loaded them
      const range = await createRange(target.warehouse.db, {
        chainId: 1,
        job: 'late',
        contract,
        fromBlock: OPTIONS.startBlock,
        toBlock: LAST,
        runId: '0',
        chunks: [{ fromBlock: OPTIONS.startBlock, toBlock: LAST }],
      });
      await target.warehouse.db.updateTable('export_chunks').set({ fresh: true }).where('range_id', '=', range.id).execute();
      const early = await runExport(target.url, devnet.base, backfill('early', 100));
      expect(early.totals.rowsInserted).toBe(truth().length);

      const log = captureLogger();
      const late = await runExport(target.url, devnet.base, backfill('late', 100), log.logger);
      expect(log.text()).toMatch(/merging the page instead of copying it/);
      expect(await warehouseTransfers(target.warehouse)).toEqual(truth());
      expect(late.totals).toMatchObject({ rowsInserted: 0, rowsUpdated: 0, rowsRemoved: 0 });
      expect(late.totals.rowsUnchanged).toBe(truth().length);
    } finally {
      await target.drop();
    }
  });

  it('a range left open by the first schema version reconciles exactly after migrating', async () => {
    const database = await freshDatabase('page_spans_upgrade');
    const warehouse = createWarehouse({ databaseUrl: database.url, logger: pino({ level: 'silent' }), maxConnections: 4 });
    try {
      const migrator = new Migrator({ db: warehouse.db, provider: migrationsFrom(MIGRATIONS_DIR) });
      const first = await migrator.migrateTo('0001_initial');
      expect(first.error).toBeUndefined();
      // the old version read the whole range into one chunk and recorded every key it saw, then stopped
      // before reconciling; the warehouse also holds rows the chain no longer has
      const real = truth();
      const blocks = [...new Set(real.map((t) => t.blockNumber))];
      const withSeenKeys = blocks[5]!;
      const emptyBlock = Array.from({ length: OPTIONS.blocks }, (_, i) => OPTIONS.startBlock + i).find((b) => !blocks.includes(b))!;
      const phantoms = [phantom(dataset, real[0]!, withSeenKeys, 1), phantom(dataset, real[1]!, emptyBlock, 2)];
      await insertRows(warehouse, [...real, ...phantoms], 'before chains');
      const rangeId = await openRange(warehouse, 'upgrade', contract);
      await sql`
        INSERT INTO export_chunks (range_id, from_block, to_block, resume_to_block, pages, rows, done)
        VALUES (${rangeId}, ${OPTIONS.startBlock}, ${LAST}, ${real[0]!.blockNumber}, 3, ${real.length}, true)`.execute(warehouse.db);
      for (const t of real) {
        await sql`INSERT INTO export_seen (range_id, transaction_hash, log_index) VALUES (${rangeId}, ${t.transactionHash}, ${t.logIndex})`.execute(warehouse.db);
      }

      await migrateToLatest(warehouse);
      const summary = await runExport(database.url, devnet.base, {
        ...backfill('upgrade', 1000),
        contracts: [{ address: contract, fromBlock: OPTIONS.startBlock, toBlock: LAST }],
      });
      expect(await warehouseTransfers(warehouse)).toEqual(real);
      expect(summary.totals.rowsRemoved).toBe(2);
      // the resumed range had nothing left to read: its reconciliation did all of it
      expect(summary.totals.rowsUnchanged + summary.totals.rowsInserted).toBe(0);
    } finally {
      await warehouse.close();
      await database.drop();
    }
  });
  it('a chunk the previous version left part-way, with keys of shared blocks, reconciles exactly after migrating', async () => {
    const database = await freshDatabase('page_spans_open_block');
    const warehouse = createWarehouse({ databaseUrl: database.url, logger: pino({ level: 'silent' }), maxConnections: 4 });
    try {
      const migrator = new Migrator({ db: warehouse.db, provider: migrationsFrom(MIGRATIONS_DIR) });
      expect((await migrator.migrateTo('0002_page_spans')).error).toBeUndefined();
      // newest first, as the API pages them: find a page size where page 2 goes on with page 1's last
      // block (a block both pages share) and page 3 with page 2's (the block the chunk stopped in)
      const sorted = [...truth()].sort((a, b) => b.blockNumber - a.blockNumber || b.logIndex - a.logIndex);
      const size = Array.from({ length: 200 }, (_, i) => i + 10).find(
        (n) =>
          sorted[n - 1]!.blockNumber === sorted[n]!.blockNumber &&
          sorted[2 * n - 1]!.blockNumber === sorted[2 * n]!.blockNumber &&
          sorted[n - 1]!.blockNumber !== sorted[2 * n - 1]!.blockNumber,
      )!;
      expect(size).toBeDefined();
      const shared = sorted[size - 1]!.blockNumber;
      const stoppedIn = sorted[2 * size - 1]!.blockNumber;
      let pageKey: string | undefined;
      for (let page = 0; page < 2; page++) {
        const query = new URLSearchParams({ contractAddress: contract, fromBlock: String(OPTIONS.startBlock), toBlock: String(LAST), pageSize: String(size) });
        if (pageKey) query.set('pageKey', pageKey);
        pageKey = ((await (await fetch(`${devnet.base}/builder/getTokenTransfers?${query}`)).json()) as { nextPageKey: string }).nextPageKey;
      }
      const committed = sorted.slice(0, 2 * size);
      const phantoms = [phantom(dataset, sorted[0]!, shared, 1), phantom(dataset, sorted[1]!, stoppedIn, 2)];
      await insertRows(warehouse, [...committed, ...phantoms], 'before chains');
      const rangeId = await openRange(warehouse, 'part-way', contract);
      await sql`
        INSERT INTO export_chunks (range_id, from_block, to_block, page_key, resume_to_block, pages, rows, done, fresh)
        VALUES (${rangeId}, ${OPTIONS.startBlock}, ${LAST}, ${pageKey}, ${stoppedIn}, 2, ${committed.length}, false, false)`.execute(warehouse.db);
      // what that version recorded: the keys of the blocks its pages shared or left open
      for (const t of committed.filter((r) => r.blockNumber === shared || r.blockNumber === stoppedIn)) {
        await sql`
          INSERT INTO export_seen (range_id, transaction_hash, log_index, block_number)
          VALUES (${rangeId}, ${t.transactionHash}, ${t.logIndex}, ${t.blockNumber})`.execute(warehouse.db);
      }

      await migrateToLatest(warehouse);
      const missing = await warehouse.db.selectFrom('export_missing').select(['transaction_hash', 'log_index']).execute();
      expect(missing.map((m) => `${m.transaction_hash}:${m.log_index}`)).toEqual([key(phantoms[0]!)]);
      const chunk = await warehouse.db.selectFrom('export_chunks').select(['open_hashes', 'open_log_indexes']).executeTakeFirstOrThrow();
      const openKeys = chunk.open_hashes.map((h, i) => `${h}:${chunk.open_log_indexes[i]}`).sort();
      expect(openKeys).toEqual(
        committed
          .filter((r) => r.blockNumber === stoppedIn)
          .map(key)
          .sort(),
      );

      const summary = await runExport(database.url, devnet.base, {
        ...backfill('part-way', size),
        contracts: [{ address: contract, fromBlock: OPTIONS.startBlock, toBlock: LAST }],
      });
      expect(await warehouseTransfers(warehouse)).toEqual(truth());
      expect(summary.totals.rowsRemoved).toBe(2);
      expect(summary.totals.rowsInserted).toBe(truth().length - committed.length);
      const removed = await warehouse.db.selectFrom('token_transfers_removed').selectAll().execute();
      expect(removed.map((r) => key(rowToTransfer(r))).sort()).toEqual(phantoms.map(key).sort());
    } finally {
      await warehouse.close();
      await database.drop();
    }
  });
});
