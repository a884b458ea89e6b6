import { spawn } from 'node:child_process';
import { routingProxy } from './helpers/routing-proxy.ts';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { Dataset } from '../src/dataset/types.ts';
import { generateSyntheticDataset } from '../src/devnet/synthetic.ts';
import { waitFor } from './helpers/chaos.ts';
import { BIN, collect, REPO_DIR, runCli } from './helpers/cli.ts';
import { startDevnet, type RunningDevnet } from './helpers/devnet.ts';
import { datasetTransfers, migratedWarehouse, warehouseTransfers } from './helpers/exporter.ts';

// A run stopped by Ctrl-C or a scheduler's SIGTERM: it stops after the pages under way, and its ledger says what it
// did and why it ended, so `status` never shows a dead run as running.

const SECRET = 'interrupt-SECRET-5c1d';
let dataset: Dataset;
let devnet: RunningDevnet;
let target: Awaited<ReturnType<typeof migratedWarehouse>>;

beforeAll(async () => {
  dataset = generateSyntheticDataset({ seed: 12, blocks: 2000, tokens: 2, transfers: 6000, startBlock: 1000 });
  // slow pages, so the signal comes while the run works
  devnet = await startDevnet(dataset, { projectIds: [SECRET], faults: { latencyMs: [30, 60] } });
  target = await migratedWarehouse('interrupt');
});
afterAll(async () => {
  await devnet?.close();
  await target?.drop();
});

describe('a run stopped by a signal', () => {
  it.each([
    ['SIGINT', 130],
    ['SIGTERM', 143],
  ] as const)('on %s stops after its current pages, exits %d, and leaves its run failed with what it inserted; the next run completes it exactly', async (signal, code) => {
    await target.warehouse.pool.query('TRUNCATE token_transfers, export_runs, export_ranges, export_chunks, export_coverage, block_headers CASCADE');
    const contracts = [...new Set(dataset.transfers.map((t) => t.contractAddress))].sort();
    const args = ['backfill', ...contracts.flatMap((c) => ['--contract', c]), '--from', '1000', '--to', '2999', '--page-size', '100', '--concurrency', '2'];
    const env = { ...process.env, DATABASE_URL: target.url, CHAIN_API_URL: `${devnet.origin}/${SECRET}` };
    const child = spawn(process.execPath, [BIN, ...args], { cwd: REPO_DIR, env });
    const ended = collect(child, 60_000);
    const stored = async () => Number((await target.warehouse.pool.query<{ n: string }>('SELECT count(*) AS n FROM token_transfers')).rows[0]!.n);
    await waitFor(async () => (await stored()) >= 300, { what: 'some pages committed' });
    // and some headers stored: those still on their way when the signal comes are dropped with the pages on theirs
    const headersStored = async () => Number((await target.warehouse.pool.query<{ n: string }>('SELECT count(*) AS n FROM block_headers')).rows[0]!.n);
    await waitFor(async () => (await headersStored()) > 0, { what: 'some headers stored' });
    child.kill(signal);
    const r = await ended;
    expect(r.code, r.stderr).toBe(code);
    expect(r.stderr).toContain(
      `erc20-etl: stopped by ${signal}: pages being written were finished, pages still on their way were dropped, and no page was asked for after it; what was committed stays, and the next run of the job resumes it`,
    );
    expect(r.stderr).not.toContain(SECRET);

    const runs = await target.warehouse.pool.query<{
      id: string;
      status: string;
      error: string;
      rows_inserted: string;
      inserted: string;
      headers_fetched: string;
      headers: string;
    }>(
      `SELECT r.id, r.status, r.error, r.rows_inserted, (SELECT count(*) FROM token_transfers t WHERE t.inserted_by_run = r.id) AS inserted,
              r.headers_fetched, (SELECT count(*) FROM block_headers h WHERE h.fetched_by_run = r.id) AS headers
       FROM export_runs r`,
    );
    expect(runs.rows).toHaveLength(1);
    const run = runs.rows[0]!;
    expect(run).toMatchObject({ status: 'failed', error: expect.stringMatching(new RegExp(`^stopped by ${signal}`)) });
    expect(Number(run.inserted)).toBeGreaterThan(0);
    expect(Number(run.inserted)).toBeLessThan(dataset.transfers.length);
    expect(run.rows_inserted).toBe(run.inserted);
    // the headers it stored count in its ledger too, though it did not finish
    expect(Number(run.headers)).toBeGreaterThan(0);
    expect(run.headers_fetched).toBe(run.headers);

    const status = await runCli(['status'], { env: { DATABASE_URL: target.url } });
    expect(status.stdout).toMatch(new RegExp(`last run: +#${run.id} \\S+ failed, chain 1, at \\S+ — stopped by ${signal}`));

    const again = await runCli(args, { env: { DATABASE_URL: target.url, CHAIN_API_URL: `${devnet.origin}/${SECRET}` } });
    expect(again.code, again.stderr).toBe(0);
    expect(await warehouseTransfers(target.warehouse)).toEqual(datasetTransfers(dataset));
    const headers = await target.warehouse.pool.query<{ counted: string; stored: string }>(
      'SELECT (SELECT sum(headers_fetched) FROM export_runs)::text AS counted, (SELECT count(*) FROM block_headers)::text AS stored',
    );
    expect(headers.rows[0]!.counted).toBe(headers.rows[0]!.stored);
  });
});

describe('a run stopped while its node does not answer', () => {
  let hanging: RunningDevnet;
  beforeAll(async () => {
    // every eth_getLogs over more than one block is left unanswered, the connection open
    hanging = await startDevnet(dataset, { projectIds: [SECRET], faults: { logsHangRate: 1 } });
  });
  afterAll(async () => {
    await hanging?.close();
  });

  it('on SIGINT exits at once, not at --rpc-timeout, and its ledger says it was stopped', async () => {
    await target.warehouse.pool.query('TRUNCATE token_transfers, export_runs, export_ranges, export_chunks, export_coverage, block_headers CASCADE');
    const contract = dataset.transfers[0]!.contractAddress;
    const rpcTimeoutSeconds = 120;
    const args = ['backfill', '--source', 'node', '--contract', contract, '--from', '1000', '--to', '2999', '--rpc-timeout', String(rpcTimeoutSeconds)];
    const env = { ...process.env, DATABASE_URL: target.url, CHAIN_API_URL: `${hanging.origin}/${SECRET}` };
    const child = spawn(process.execPath, [BIN, ...args], { cwd: REPO_DIR, env });
    const ended = collect(child, 2 * rpcTimeoutSeconds * 1000);
    await waitFor(async () => ((await hanging.stats()).rpcOutcomes.eth_getLogs?.refused.hang ?? 0) >= 1, { what: 'an eth_getLogs call left unanswered' });
    const signalled = Date.now();
    child.kill('SIGINT');
    const r = await ended;
    const waited = Date.now() - signalled;
    expect(r.code, r.stderr).toBe(130);
    // before, the run waited for the unanswered call until --rpc-timeout ended it
    expect(waited).toBeLessThan((rpcTimeoutSeconds * 1000) / 2);
    expect(r.stderr).toContain('erc20-etl: stopped by SIGINT');
    expect(r.stderr).not.toContain(SECRET);
    const runs = await target.warehouse.pool.query<{ status: string; error: string }>('SELECT status, error FROM export_runs');
    expect(runs.rows).toEqual([{ status: 'failed', error: expect.stringMatching(/^stopped by SIGINT/) }]);
    expect(Number((await target.warehouse.pool.query<{ n: string }>('SELECT count(*) AS n FROM token_transfers')).rows[0]!.n)).toBe(0);
  }, 200_000);
});

/**
 * An HTTP proxy in front of `origin` that never answers a header call (`erigon_getHeaderByHash`, `eth_getBlockByHash`):
 * the request is read and left waiting, its connection open, as a node that hangs on them would. `held` counts them.
 */
async function holdingHeaders(origin: string): Promise<{ base: string; held(): number; close(): Promise<void> }> {
  let held = 0;
  const proxy = await routingProxy((body) => {
    if (!/getHeaderByHash|getBlockByHash/.test(body)) return origin;
    held++;
    return undefined;
  });
  return { base: proxy.origin, held: () => held, close: proxy.close };
}

describe('a run stopped while its header calls go unanswered', () => {
  it('on SIGINT exits at once, not after the calls time out and are retried, and its ledger says it was stopped', async () => {
    await target.warehouse.pool.query('TRUNCATE token_transfers, export_runs, export_ranges, export_chunks, export_coverage, block_headers CASCADE');
    const proxy = await holdingHeaders(devnet.origin);
    try {
      const contract = dataset.transfers[0]!.contractAddress;
      const args = ['backfill', '--contract', contract, '--from', '1000', '--to', '2999', '--page-size', '100'];
      const env = { ...process.env, DATABASE_URL: target.url, CHAIN_API_URL: `${proxy.base}/${SECRET}` };
      const child = spawn(process.execPath, [BIN, ...args], { cwd: REPO_DIR, env });
      // a header call waits 30 s for its answer, and is tried again 5 times
      const ended = collect(child, 240_000);
      await waitFor(() => proxy.held() >= 1, { what: 'a header call left unanswered' });
      const signalled = Date.now();
      child.kill('SIGINT');
      const r = await ended;
      const waited = Date.now() - signalled;
      expect(r.code, r.stderr).toBe(130);
      // before, the run waited for the unanswered header calls: their 30 s timeout, then their retries
      expect(waited).toBeLessThan(15_000);
      expect(r.stderr).toContain('erc20-etl: stopped by SIGINT');
      expect(r.stderr).not.toContain(SECRET);
      const runs = await target.warehouse.pool.query<{ status: string; error: string; headers_fetched: string }>('SELECT status, error, headers_fetched::text FROM export_runs');
      expect(runs.rows).toEqual([{ status: 'failed', error: expect.stringMatching(/^stopped by SIGINT/), headers_fetched: '0' }]);
      expect(Number((await target.warehouse.pool.query<{ n: string }>('SELECT count(*) AS n FROM token_transfers')).rows[0]!.n)).toBeGreaterThan(0);

      // its rows wait for their headers, which the next run fetches: it checks them against their blocks' blooms as it
      // does the rows it reads. One row of the newest block (which the next run does not read again) now says another
      // recipient, as bad data would
      const { rows: altered } = await target.warehouse.pool.query<{ transaction_hash: string }>(
        `UPDATE token_transfers SET to_address = '0x00000000000000000000000000000000000000ff'
         WHERE ctid = (SELECT ctid FROM token_transfers ORDER BY block_number DESC, log_index LIMIT 1) RETURNING transaction_hash`,
      );
      const next = await runCli(args, { env: { DATABASE_URL: target.url, CHAIN_API_URL: `${devnet.origin}/${SECRET}` } });
      expect(next.code, next.stderr).toBe(1);
      expect(next.stderr).toContain(altered[0]!.transaction_hash);
      expect(next.stderr).toMatch(/logsBloom rules out its to topic/);
    } finally {
      await proxy.close();
    }
  }, 260_000);
});
