import { spawn } from 'node:child_process';
import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { Dataset } from '../src/dataset/types.ts';
import { generateSyntheticDataset } from '../src/devnet/synthetic.ts';
import type { RunSummary } from '../src/pipeline/run-job.ts';
import { BIN, collect, REPO_DIR } from './helpers/cli.ts';
import { recordFigures } from './helpers/figures.ts';
import { startDevnet, type RunningDevnet } from './helpers/devnet.ts';
import { datasetTransfers, job, migratedWarehouse, runExport, warehouseTransfers } from './helpers/exporter.ts';

/** Runs that overlap: the same job twice at once, and two jobs over the same contracts and blocks. */

const PROJECT = 'proj-overlap-3c9e';
const tmp = await mkdtemp(join(tmpdir(), 'erc20-etl-overlap-'));
afterAll(() => rm(tmp, { recursive: true, force: true }));

const figures: Record<string, unknown>[] = [];
afterAll(() => recordFigures('overlap', { cases: figures }));

let dataset: Dataset;
beforeAll(() => {
  dataset = generateSyntheticDataset({ seed: 33, blocks: 400, tokens: 3, transfers: 3000, startBlock: 500 });
});
const contracts = () => [...new Set(dataset.transfers.map((t) => t.contractAddress))].sort();

describe('two runs of one job started at the same moment', () => {
  let devnet: RunningDevnet;
  let target: Awaited<ReturnType<typeof migratedWarehouse>>;
  beforeAll(async () => {
    devnet = await startDevnet(dataset, { projectIds: [PROJECT], faults: { latencyMs: [30, 30] } });
    target = await migratedWarehouse('overlap_same_job');
  });
  afterAll(async () => {
    await target?.drop();
    await devnet?.close();
  });

  it('one does the work, the other exits 75 at once with the lock message and does nothing', async () => {
    const file = join(tmp, 'same.json');
    await writeFile(file, JSON.stringify({ name: 'same-job', contracts: contracts().map((address) => ({ address, fromBlock: 500, toBlock: 899 })), pageSize: 25, concurrency: 2 }));
    const env = { ...process.env, DATABASE_URL: target.url, CHAIN_API_URL: `${devnet.origin}/${PROJECT}` };
    const t0 = performance.now();
    const timed = () => {
      const child = spawn(process.execPath, [BIN, 'run', file], { cwd: REPO_DIR, env });
      return collect(child, 180_000).then((r) => ({ ...r, ms: Math.round(performance.now() - t0) }));
    };
    const results = await Promise.all([timed(), timed()]);
    const winner = results.find((r) => r.code === 0);
    const loser = results.find((r) => r.code === 75);
    figures.push({
      case: 'same job file, two CLI runs at once',
      exits: results.map((r) => r.code),
      winnerMs: winner?.ms,
      loserMs: loser?.ms,
      loserSaid: loser && lastLine(loser.stderr),
    });

    expect(results.map((r) => r.code).sort(), results.map((r) => r.stderr).join('\n----\n')).toEqual([0, 75]);
    expect(loser!.stderr).toMatch(
      /^erc20-etl: Another run of job "same-job" is in progress, or `erc20-etl worker` processes are reading its queued chunks \(either holds the job's lock\); this did nothing\./m,
    );
    expect(loser!.stdout).toBe('');
    // it stopped at the lock, while the other was still working
    expect(loser!.ms).toBeLessThan(winner!.ms);

    const runs = await target.warehouse.db.selectFrom('export_runs').select(['job', 'status', 'api_requests']).execute();
    expect(runs).toEqual([{ job: 'same-job', status: 'succeeded', api_requests: expect.any(String) }]);
    const stats = await devnet.stats();
    // every request the reference server saw is one the winner counted: the loser sent none
    expect(stats.getTokenTransfers + stats.rpcHttpRequests).toBe(Number(runs[0]!.api_requests));
    expect(await warehouseTransfers(target.warehouse)).toEqual(datasetTransfers(dataset));
  }, 240_000);
});

describe('two jobs over the same contracts and blocks at once', () => {
  let devnet: RunningDevnet;
  let target: Awaited<ReturnType<typeof migratedWarehouse>>;
  beforeAll(async () => {
    devnet = await startDevnet(dataset, { projectIds: [PROJECT], faults: { latencyMs: [0, 4] } });
    target = await migratedWarehouse('overlap_two_jobs');
  });
  afterAll(async () => {
    await target?.drop();
    await devnet?.close();
  });

  const both = () => {
    const ranges = contracts().map((address) => ({ address, fromBlock: 500, toBlock: 899 }));
    const base = `${devnet.origin}/${PROJECT}`;
    return Promise.allSettled([
      runExport(target.url, base, job('overlap-a', ranges, { pageSize: 20, concurrency: 4 })),
      runExport(target.url, base, job('overlap-b', ranges, { pageSize: 30, concurrency: 3 })),
    ]);
  };

  it('both succeed, every row is inserted exactly once, nothing is removed, and a concurrent re-run changes nothing', async () => {
    const first = await both();
    const failures = first.filter((r): r is PromiseRejectedResult => r.status === 'rejected').map((r) => String(r.reason));
    expect(failures).toEqual([]);
    const [a, b] = first.map((r) => (r as PromiseFulfilledResult<RunSummary>).value) as [RunSummary, RunSummary];

    const rows = await warehouseTransfers(target.warehouse);
    const { rows: dupes } = await target.warehouse.pool.query<{ n: number }>(
      'SELECT count(*)::int AS n FROM (SELECT transaction_hash, log_index FROM token_transfers GROUP BY 1, 2 HAVING count(*) > 1) d',
    );
    const removed = await target.warehouse.db.selectFrom('token_transfers_removed').select('id').execute();
    const headers = await target.warehouse.db.selectFrom('block_headers').select(['hash', 'canonical', 'hash_verified']).execute();
    const blocks = new Set(dataset.transfers.map((t) => t.blockHash));

    const again = await both();
    const rerun = again.map((r) => (r.status === 'fulfilled' ? r.value.totals : { failed: String(r.reason) }));
    figures.push({
      case: 'two jobs, same 3 contracts and blocks 500–899, in process, concurrency 4 + 3, page sizes 20 and 30',
      first: { a: a.totals, b: b.totals },
      rerun,
      rows: rows.length,
      duplicates: dupes[0]?.n,
      removed: removed.length,
      headers: headers.length,
      blocks: blocks.size,
    });

    expect(rows).toEqual(datasetTransfers(dataset));
    expect(dupes[0]?.n).toBe(0);
    expect(removed).toEqual([]);
    // each row was inserted by exactly one of the two runs, and neither rewrote the other's identical rows
    expect(a.totals.rowsInserted + b.totals.rowsInserted).toBe(dataset.transfers.length);
    expect(a.totals.rowsUpdated + b.totals.rowsUpdated).toBe(0);
    expect(a.totals.rowsRemoved + b.totals.rowsRemoved).toBe(0);
    // each header stored once, by one of them
    expect(headers.map((h) => h.hash).sort()).toEqual([...blocks].sort());
    expect(headers.every((h) => h.canonical && h.hash_verified)).toBe(true);
    expect(a.totals.headersFetched + b.totals.headersFetched).toBe(blocks.size);

    for (const r of again) {
      expect(r.status, r.status === 'rejected' ? String(r.reason) : '').toBe('fulfilled');
      if (r.status !== 'fulfilled') continue;
      expect(r.value.totals).toMatchObject({ rowsInserted: 0, rowsUpdated: 0, rowsRemoved: 0, headersFetched: 0 });
    }
    expect(await warehouseTransfers(target.warehouse)).toEqual(datasetTransfers(dataset));
    expect(await target.warehouse.db.selectFrom('token_transfers_removed').select('id').execute()).toEqual([]);
    const coverage = await target.warehouse.db.selectFrom('export_coverage').select(['job', 'contract_address', 'row_count']).orderBy('job').orderBy('contract_address').execute();
    // each job covered each contract twice (run and re-run), with every row of it
    const rowsOf = (c: string) => String(dataset.transfers.filter((t) => t.contractAddress === c).length);
    const expected = ['overlap-a', 'overlap-b'].flatMap((j) => contracts().flatMap((c) => [1, 2].map(() => ({ job: j, contract_address: c, row_count: rowsOf(c) }))));
    expect(coverage).toEqual(expected);
  }, 240_000);
});

function lastLine(text: string): string {
  return text.trim().split('\n').at(-1) ?? '';
}
