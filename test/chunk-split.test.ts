import { spawn } from 'node:child_process';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { Dataset } from '../src/dataset/types.ts';
import { waitFor } from './helpers/chaos.ts';
import { BIN, collect, REPO_DIR } from './helpers/cli.ts';
import { startDevnet, type RunningDevnet } from './helpers/devnet.ts';
import { BLOCKS, CONCURRENCY, PAGE_SIZE, skewedChain, START } from './helpers/skewed-chain.ts';
import type { Warehouse } from '../src/warehouse/db.ts';
import { captureLogger, datasetTransfers, job, migratedWarehouse, runExport, warehouseTransfers } from './helpers/exporter.ts';

describe('a run whose last chunk holds most of the rows', () => {
  let chain: Dataset;
  let devnet: RunningDevnet;
  beforeAll(async () => {
    chain = skewedChain();
    devnet = await startDevnet(chain, { faults: { latencyMs: [2, 6] } });
  });
  afterAll(() => devnet?.close());

  const contract = () => chain.transfers[0]!.contractAddress;
  const distinctBlocks = () => new Set(chain.transfers.map((t) => t.blockHash)).size;

  it('splits that chunk so the idle connections share it, and still exports exactly, within the API bounds', async () => {
    const target = await migratedWarehouse('chunk_split');
    try {
      const log = captureLogger();
      const config = job('split', [{ address: contract(), fromBlock: START, toBlock: START + BLOCKS - 1 }], { pageSize: PAGE_SIZE, concurrency: CONCURRENCY });
      const summary = await runExport(target.url, devnet.base, config, log.logger);
      const splits = log
        .text()
        .split('\n')
        .filter((line) => line.includes('"msg":"chunk split"'))
        .map((line) => JSON.parse(line) as { chunk: string; kept: string; given: string });
      expect(splits.length).toBeGreaterThanOrEqual(1);
      expect(splits.length).toBeLessThanOrEqual(CONCURRENCY);
      // the first split is the lowest chunk's, which gives away the lower half of what it has not read
      expect(Number(splits[0]!.given.split('–')[0])).toBe(START);

      expect(await warehouseTransfers(target.warehouse)).toEqual(datasetTransfers(chain));
      expect(summary.totals.rowsInserted).toBe(chain.transfers.length);
      const stats = await devnet.stats();
      expect(stats.rpcCalls['erigon_getHeaderByHash']).toBe(distinctBlocks());
      // each split costs at most one request: the bound of the API target holds
      expect(stats.getTokenTransfers).toBeLessThanOrEqual(1.01 * Math.ceil(chain.transfers.length / PAGE_SIZE) + 2 * CONCURRENCY);
      const coverage = await target.warehouse.db.selectFrom('export_coverage').select(['from_block', 'to_block', 'row_count']).execute();
      expect(coverage.map((c) => [Number(c.from_block), Number(c.to_block), Number(c.row_count)])).toEqual([[START, START + BLOCKS - 1, chain.transfers.length]]);
    } finally {
      await target.drop();
    }
  });

  /**
   * A backfill of the whole range, killed two pages after its first split; resolves to how to run it again. Each page
   * commits on its own (`--commit-rows` of a page), so the kill finds the split chunk part-way, as a larger load would.
   */
  async function killedAfterSplit(target: { url: string; warehouse: Warehouse }) {
    const args = [BIN, 'backfill', '--contract', contract(), '--from', String(START), '--to', String(START + BLOCKS - 1)];
    args.push('--page-size', String(PAGE_SIZE), '--concurrency', String(CONCURRENCY), '--commit-rows', String(PAGE_SIZE));
    const env = { ...process.env, DATABASE_URL: target.url, CHAIN_API_URL: devnet.base, LOG_LEVEL: 'info' };
    const child = spawn(process.execPath, args, { cwd: REPO_DIR, env });
    const result = collect(child, 120_000);
    let split = false;
    child.stderr.on('data', (d: Buffer) => (split ||= d.toString().includes('"msg":"chunk split"')));
    const pages = async () => Number((await target.warehouse.pool.query<{ n: string }>('SELECT coalesce(sum(pages), 0)::text AS n FROM export_chunks')).rows[0]!.n);
    await waitFor(async () => split, { what: 'a chunk split', timeoutMs: 60_000 });
    const atSplit = await pages();
    await waitFor(async () => (await pages()) >= atSplit + 2, { what: 'two pages after the split', timeoutMs: 60_000 });
    child.kill('SIGKILL');
    expect((await result).signal).toBe('SIGKILL');

    // the chunk that gave blocks away keeps its query's first block beside its own, and its page key
    const chunks = await target.warehouse.db.selectFrom('export_chunks').selectAll().orderBy('id').execute();
    const kept = chunks.find((c) => c.query_from_block !== null);
    expect(kept).toMatchObject({ done: false, page_key: expect.any(String) });
    expect(Number(kept!.from_block)).toBeGreaterThan(Number(kept!.query_from_block));
    const given = chunks.find((c) => Number(c.to_block) === Number(kept!.from_block) - 1);
    expect(given, 'the new chunk ends where the split one now starts').toBeDefined();
    const committed = (await warehouseTransfers(target.warehouse)).length;
    expect(committed).toBeLessThan(chain.transfers.length);
    return {
      committed,
      again: (api: string) => collect(spawn(process.execPath, args, { cwd: REPO_DIR, env: { ...env, CHAIN_API_URL: api } }), 120_000),
    };
  }

  const lastRun = async (target: { warehouse: Warehouse }) => {
    const runs = await target.warehouse.db.selectFrom('export_runs').selectAll().orderBy('id').execute();
    const last = runs.at(-1)!;
    return { status: last.status, counts: [Number(last.rows_inserted), Number(last.rows_updated), Number(last.rows_unchanged)] };
  };

  it('resumes a split chunk after a kill with its page key, reading no page twice', async () => {
    const target = await migratedWarehouse('chunk_split_kill');
    try {
      const killed = await killedAfterSplit(target);
      const finished = await killed.again(devnet.base);
      expect(finished.code, finished.stderr).toBe(0);
      expect(await warehouseTransfers(target.warehouse)).toEqual(datasetTransfers(chain));
      // only what the killed run had not committed was loaded: no page was read twice, no page key refused
      expect(await lastRun(target)).toEqual({ status: 'succeeded', counts: [chain.transfers.length - killed.committed, 0, 0] });
      expect(finished.stderr).not.toContain('page key refused');
    } finally {
      await target.drop();
    }
  });

  it('resumes a split chunk whose page key has expired from its lowest committed block, exactly', async () => {
    const target = await migratedWarehouse('chunk_split_expired');
    // the same chain, served by a server whose page keys live one second
    const strict = await startDevnet(chain, { faults: { latencyMs: [2, 6] }, pageKeyTtlSeconds: 1 });
    try {
      const killed = await killedAfterSplit(target);
      await new Promise((resolve) => setTimeout(resolve, 1500));
      const finished = await killed.again(strict.base);
      expect(finished.code, finished.stderr).toBe(0);
      expect(finished.stderr).toContain('page key refused');
      expect(await warehouseTransfers(target.warehouse)).toEqual(datasetTransfers(chain));
      // the re-read lowest blocks are unchanged rows; nothing is inserted twice or updated
      const { status, counts } = await lastRun(target);
      expect(status).toBe('succeeded');
      expect(counts[0]).toBe(chain.transfers.length - killed.committed);
      expect(counts[1]).toBe(0);
    } finally {
      await target.drop();
      await strict.close();
    }
  });
});
