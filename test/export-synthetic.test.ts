import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { sql } from 'kysely';
import { MAX_UINT256 } from '../src/dataset/validate.ts';
import type { Dataset } from '../src/dataset/types.ts';
import { generateSyntheticDataset } from '../src/devnet/synthetic.ts';
import { startDevnet, type RunningDevnet } from './helpers/devnet.ts';
import { datasetTransfers, job, migratedWarehouse, runExport, truthOf, warehouseTransfers } from './helpers/exporter.ts';

const OPTIONS = { seed: 5, blocks: 600, tokens: 7, transfers: 4000, startBlock: 1_000_000 };

describe('exporting a synthetic chain', () => {
  let dataset: Dataset;
  let devnet: RunningDevnet;
  let target: Awaited<ReturnType<typeof migratedWarehouse>>;
  beforeAll(async () => {
    dataset = generateSyntheticDataset(OPTIONS);
    devnet = await startDevnet(dataset);
    target = await migratedWarehouse('export_synthetic');
  });
  afterAll(async () => {
    await target.drop();
    await devnet.close();
  });

  const contracts = () => [...new Set(dataset.transfers.map((t) => t.contractAddress))].sort();
  const followHead = () =>
    job(
      'synthetic',
      contracts().map((address) => ({ address, fromBlock: OPTIONS.startBlock })),
      { finality: 64, pageSize: 250 },
    );

  it('exports the chain exactly: both symbol spellings, unknown metadata, non-ASCII names, 0 and 2^256−1', async () => {
    const summary = await runExport(target.url, devnet.base, followHead());
    expect(summary.head).toBe(OPTIONS.startBlock + OPTIONS.blocks - 1);
    expect(await warehouseTransfers(target.warehouse)).toEqual(datasetTransfers(dataset));

    const tokens = await target.warehouse.db.selectFrom('tokens').selectAll().orderBy('contract_address').execute();
    expect(tokens).toHaveLength(7);
    for (const t of tokens) {
      const line = dataset.tokens.find((k) => k.contractAddress === t.contract_address);
      expect({ name: t.name, symbol: t.symbol, decimals: t.decimals }).toEqual(
        line
          ? { name: line.contractName, symbol: line.contractSymbol ?? line.contractSymbols, decimals: Number(line.contractDecimals) }
          : { name: null, symbol: null, decimals: null },
      );
    }
    expect(dataset.tokens.some((k) => k.contractSymbols !== undefined)).toBe(true);
    expect(tokens.some((t) => t.name !== null && /\P{ASCII}/u.test(t.name))).toBe(true);
    const { rows } = await sql<{ max: string; min: string }>`SELECT max(value)::text AS max, min(value)::text AS min FROM token_transfers`.execute(target.warehouse.db);
    expect(rows[0]).toEqual({ max: MAX_UINT256.toString(), min: '0' });
  });

  it('reconciles after a reorg: the warehouse equals the new chain, orphaned rows move to token_transfers_removed', async () => {
    const before = await warehouseTransfers(target.warehouse);
    const res = await fetch(`${devnet.origin}/__control/reorg`, { method: 'POST', body: JSON.stringify({ depth: 20 }) });
    const reorg = (await res.json()) as { forkBlock: number; orphanedHeaders: string[] };
    const truth = await truthOf(devnet.origin);

    const summary = await runExport(target.url, devnet.base, followHead());
    expect(await warehouseTransfers(target.warehouse)).toEqual(datasetTransfers(truth));

    const key = (t: { transactionHash: string; logIndex: number }) => `${t.transactionHash}:${t.logIndex}`;
    const now = new Set(truth.transfers.map(key));
    const gone = before.filter((t) => !now.has(key(t)));
    expect(gone.length).toBeGreaterThan(0);
    expect(gone.every((t) => t.blockNumber >= reorg.forkBlock)).toBe(true);
    const removed = await target.warehouse.db.selectFrom('token_transfers_removed').selectAll().execute();
    expect(removed.map((r) => `${r.transaction_hash}:${r.log_index}`).sort()).toEqual(gone.map(key).sort());
    expect(new Set(removed.map((r) => r.removed_by_run))).toEqual(new Set([summary.runId]));
    expect(summary.totals.rowsRemoved).toBe(gone.length);

    // the new blocks' headers were fetched; the orphaned ones stay, marked non-canonical
    const hashes = new Set((await target.warehouse.db.selectFrom('block_headers').select('hash').execute()).map((r) => r.hash));
    for (const t of truth.transfers) expect(hashes.has(t.blockHash)).toBe(true);
    const stored = await target.warehouse.db.selectFrom('block_headers').select(['hash', 'canonical']).execute();
    const orphaned = new Set(reorg.orphanedHeaders);
    const storedOrphans = stored.filter((h) => orphaned.has(h.hash));
    expect(storedOrphans.length).toBeGreaterThan(0);
    expect(storedOrphans.every((h) => !h.canonical)).toBe(true);
    expect(stored.filter((h) => !orphaned.has(h.hash)).every((h) => h.canonical)).toBe(true);
  });

  it('moves nothing when the run fails part-way', async () => {
    const res = await fetch(`${devnet.origin}/__control/reorg`, { method: 'POST', body: JSON.stringify({ depth: 10 }) });
    expect(res.status).toBe(200);
    const keys = async () => new Set((await warehouseTransfers(target.warehouse)).map((t) => `${t.transactionHash}:${t.logIndex}`));
    const before = await keys();
    const removedBefore = (await target.warehouse.db.selectFrom('token_transfers_removed').select('id').execute()).length;
    // the plan's capacity runs out after 3 pages (403): the run fails after committing some of them
    const broken = await startDevnet(await truthOf(devnet.origin), { quota: 3 });
    try {
      await expect(runExport(target.url, broken.base, followHead())).rejects.toThrow(/plan capacity/);
    } finally {
      await broken.close();
    }
    const after = await keys();
    expect([...before].filter((k) => !after.has(k))).toEqual([]);
    expect((await target.warehouse.db.selectFrom('token_transfers_removed').select('id').execute()).length).toBe(removedBefore);
    const last = await target.warehouse.db.selectFrom('export_runs').selectAll().orderBy('id', 'desc').executeTakeFirstOrThrow();
    expect(last.status).toBe('failed');
    expect(last.error).toMatch(/plan capacity/);
  });
});
