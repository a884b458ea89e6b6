import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { spawn } from 'node:child_process';
import { Registry } from 'prom-client';
import { createRunMetrics } from '../src/metrics/run-metrics.ts';
import { startMetricsServer, type MetricsServer } from '../src/metrics/metrics-server.ts';
import { BIN, collect, REPO_DIR, runCli } from './helpers/cli.ts';
import { PROJECT, startDevnet } from './helpers/devnet.ts';
import { captureLogger, job, migratedWarehouse, runExport } from './helpers/exporter.ts';
import { syntheticWorld } from './helpers/world.ts';

const OPTIONS = { seed: 41, blocks: 600, tokens: 3, transfers: 4000, startBlock: 5_000_000 };
const LAST = OPTIONS.startBlock + OPTIONS.blocks - 1;

/** `name{labels} value` lines of a scrape, summed over the series whose labels include `match`. */
function value(text: string, name: string, match: Record<string, string> = {}): number {
  let total = 0;
  for (const line of text.split('\n')) {
    const m = /^([a-zA-Z0-9_:]+)(\{[^}]*\})? (\S+)$/.exec(line);
    if (!m || m[1] !== name) continue;
    const labels = Object.fromEntries([...(m[2] ?? '').matchAll(/(\w+)="([^"]*)"/g)].map((l) => [l[1], l[2]]));
    if (Object.entries(match).every(([k, v]) => labels[k] === v)) total += Number(m[3]);
  }
  return total;
}

describe('Prometheus metrics', () => {
  const world = syntheticWorld('metrics', OPTIONS);
  let server: MetricsServer;
  const registry = new Registry();
  const metrics = createRunMetrics(registry);
  beforeAll(async () => {
    server = await startMetricsServer({ registry, host: '127.0.0.1', port: 0 });
  });
  afterAll(async () => {
    await server.close();
  });

  const contracts = () => world.contracts();
  const scrape = async () => {
    const res = await fetch(server.url);
    expect(res.status).toBe(200);
    expect(res.headers.get('content-type')).toContain('text/plain');
    return res.text();
  };

  it('the endpoint reports the numbers of a run, and adds up runs', async () => {
    const { dataset, devnet, target } = world;
    const toBlock = LAST - 100;
    const config = job(
      'metrics',
      contracts().map((address) => ({ address, fromBlock: OPTIONS.startBlock, toBlock })),
      { pageSize: 100, concurrency: 2 },
    );
    const log = captureLogger();
    const first = await runExport(target.url, devnet.base, config, log.logger, metrics);
    let stats = await devnet.stats();
    let text = await scrape();
    expect(value(text, 'erc20_etl_rows_total', { job: 'metrics', outcome: 'inserted' })).toBe(first.totals.rowsInserted);
    // a job that names no chain is chain 1's, in every series of it
    expect(value(text, 'erc20_etl_rows_total', { job: 'metrics', chain: '1', outcome: 'inserted' })).toBe(first.totals.rowsInserted);
    expect(first.totals.rowsInserted).toBeGreaterThan(1000);
    expect(value(text, 'erc20_etl_transfer_requests_total')).toBe(stats.getTokenTransfers);
    expect(value(text, 'erc20_etl_rpc_posts_total')).toBe(stats.rpcHttpRequests);
    expect(value(text, 'erc20_etl_header_calls_total')).toBe(stats.rpcCalls['erigon_getHeaderByHash']);
    expect(value(text, 'erc20_etl_headers_stored_total', { job: 'metrics' })).toBe(first.totals.headersFetched);
    expect(value(text, 'erc20_etl_retries_total')).toBe(0);
    expect(value(text, 'erc20_etl_rate_limited_total')).toBe(0);
    // 2 × concurrency chunks shared over 3 contracts, and the chunks the last ones gave blocks to
    const splits = log
      .text()
      .split('\n')
      .filter((line) => line.includes('"msg":"chunk split"')).length;
    expect(value(text, 'erc20_etl_chunk_duration_seconds_count', { job: 'metrics' })).toBe(4 + splits);
    for (const contract of contracts()) {
      // read to its toBlock, below the head: nothing left to cover
      expect(first.head - toBlock).toBeGreaterThan(0);
      expect(value(text, 'erc20_etl_lag_blocks', { job: 'metrics', contract })).toBe(0);
      expect(value(text, 'erc20_etl_rows_total', { contract })).toBe(dataset.transfers.filter((t) => t.contractAddress === contract && t.blockNumber <= toBlock).length);
    }
    expect(value(text, 'erc20_etl_runs_total', { job: 'metrics', chain: '1', status: 'succeeded' })).toBe(1);

    // a re-run: counters go on from where they were
    const again = await runExport(target.url, devnet.base, config, undefined, metrics);
    stats = await devnet.stats();
    text = await scrape();
    expect(value(text, 'erc20_etl_rows_total', { job: 'metrics', outcome: 'unchanged' })).toBe(again.totals.rowsUnchanged);
    expect(value(text, 'erc20_etl_rows_total', { job: 'metrics', outcome: 'inserted' })).toBe(first.totals.rowsInserted);
    expect(value(text, 'erc20_etl_transfer_requests_total')).toBe(stats.getTokenTransfers);
    expect(value(text, 'erc20_etl_runs_total', { job: 'metrics', status: 'succeeded' })).toBe(2);
    expect(text).not.toContain(PROJECT);
  });

  it('serves only GET /metrics', async () => {
    const res = await fetch(server.url.replace('/metrics', '/'));
    expect(res.status).toBe(404);
    expect(await res.text()).toContain('GET /metrics');
  });

  it('backfill --metrics-port serves them while it runs, and a bad port is a usage error', async () => {
    const { dataset } = world;
    const slow = await startDevnet(dataset, { faults: { latencyMs: [20, 30] } });
    const fresh = await migratedWarehouse('metrics_cli');
    try {
      const args = ['backfill', '--contract', contracts()[0]!, '--from', String(OPTIONS.startBlock), '--to', String(LAST), '--page-size', '20'];
      const env = { ...process.env, DATABASE_URL: fresh.url, CHAIN_API_URL: slow.base, LOG_LEVEL: 'info' };
      const child = spawn(process.execPath, [BIN, ...args, '--metrics-port', '0'], { cwd: REPO_DIR, env });
      let stderr = '';
      const url = await new Promise<string>((resolve, reject) => {
        const timer = setTimeout(() => reject(new Error(`no metrics address logged: ${stderr}`)), 30_000);
        child.stderr.on('data', (d: Buffer) => {
          stderr += d.toString();
          const m = /"url":"(http:\/\/127\.0\.0\.1:\d+\/metrics)"/.exec(stderr);
          if (m) {
            clearTimeout(timer);
            resolve(m[1]!);
          }
        });
      });
      const done = collect(child, 60_000);
      let rows = 0;
      while (rows === 0) {
        rows = value(await (await fetch(url)).text(), 'erc20_etl_rows_total', { outcome: 'inserted' });
        await new Promise((r) => setTimeout(r, 50));
      }
      expect(rows).toBeGreaterThan(0);
      expect((await done).code).toBe(0);
      await expect(fetch(url)).rejects.toThrow(); // the endpoint goes with the command

      const bad = await runCli([...args, '--metrics-port', 'ninety'], { env });
      expect(bad.code).toBe(2);
      expect(bad.stderr).toContain('--metrics-port: expected a port number from 0 to 65535, got "ninety"');
    } finally {
      await fresh.drop();
      await slow.close();
    }
  });
});
