import { spawn } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import pg from 'pg';
import { pino } from 'pino';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { Dataset } from '../src/dataset/types.ts';
import { generateSyntheticDataset } from '../src/devnet/synthetic.ts';
import { createWarehouse, type Warehouse } from '../src/warehouse/db.ts';
import { startEmbeddedPostgres, type RunningEmbeddedPostgres } from '../src/local-postgres/embedded-postgres.ts';
import { freePort } from '../src/local-postgres/free-port.ts';
import { embeddedTestRoot } from './helpers/embedded-root.ts';
import { migrateToLatest } from '../src/warehouse/migrate.ts';
import { BIN, collect, REPO_DIR, runCli, type CliResult } from './helpers/cli.ts';
import { recordFigures } from './helpers/figures.ts';
import { startDevnet, type RunningDevnet } from './helpers/devnet.ts';
import { datasetTransfers, migratedWarehouse, warehouseTransfers } from './helpers/exporter.ts';

/**
 * Bad input from the user and from the world: an API nothing listens at, a range the wrong way round, a
 * project id the API refuses, and PostgreSQL restarting under a running export.
 */

const PROJECT = 'proj-world-5b1d';
const tmp = await mkdtemp(join(tmpdir(), 'erc20-etl-world-'));
afterAll(() => rm(tmp, { recursive: true, force: true }));

const figures: Record<string, unknown>[] = [];
afterAll(() => recordFigures('world-input', { cases: figures }));

let dataset: Dataset;
let devnet: RunningDevnet;
beforeAll(async () => {
  dataset = generateSyntheticDataset({ seed: 21, blocks: 400, tokens: 3, transfers: 3000, startBlock: 500 });
  devnet = await startDevnet(dataset, { projectIds: [PROJECT] });
});
afterAll(() => devnet?.close());

const contracts = () => [...new Set(dataset.transfers.map((t) => t.contractAddress))].sort();

describe('an API that nothing listens at', () => {
  let target: Awaited<ReturnType<typeof migratedWarehouse>>;
  beforeAll(async () => {
    target = await migratedWarehouse('world_unreachable');
  });
  afterAll(() => target?.drop());

  it('retries its whole budget, then exits 1 saying it could not connect, with the URL redacted', async () => {
    const port = await freePort();
    const secret = 'proj-unreachable-0c7a';
    const started = performance.now();
    const r = await runCli(['backfill', '--contract', contracts()[0]!, '--from', '500', '--to', '899'], {
      env: { DATABASE_URL: target.url, CHAIN_API_URL: `http://127.0.0.1:${port}/${secret}`, LOG_LEVEL: 'info' },
      // 9 attempts; the backoffs after attempts 1–8 are at most 0.25 + 0.5 + 1 + 2 + 4 + 8 + 10 + 10 = 35.75 s
      timeoutMs: 120_000,
    });
    const ms = Math.round(performance.now() - started);
    const retries = [...r.stderr.matchAll(/"msg":"chain API request failed, retrying"/g)].length;
    figures.push({ case: 'unreachable API (connection refused), CLI backfill', exit: r.code, ms, retriesLogged: retries, lastLine: lastLine(r.stderr) });

    expect(r.code, r.stderr).toBe(1);
    expect(r.stderr).toMatch(/^erc20-etl: POST http:\/\/127\.0\.0\.1:\d+\/<redacted>: ECONNREFUSED/m);
    expect(r.stderr).toContain(`http://127.0.0.1:${port}/<redacted>`);
    expect(r.stderr).toMatch(/nothing listens at that address: check the host and port of CHAIN_API_URL/);
    expect(r.stderr).toMatch(/gave up after 9 attempts/);
    expect(retries).toBe(8);
    expect(`${r.stdout}${r.stderr}`).not.toContain(secret);

    const runs = await target.warehouse.db.selectFrom('export_runs').select(['status', 'retries', 'error', 'started_at', 'finished_at']).execute();
    expect(runs).toHaveLength(1);
    expect(runs[0]).toMatchObject({ status: 'failed', retries: '8' });
    // the run's time holds its retries (at least 0.25 + 0.5 + 1 s of backoff), not only the moment it was recorded
    expect(runs[0]!.finished_at!.getTime() - runs[0]!.started_at.getTime()).toBeGreaterThan(1_500);
    expect(runs[0]!.error).toMatch(/ECONNREFUSED.*gave up after 9 attempts/s);
    expect(runs[0]!.error).not.toContain(secret);
  }, 150_000);
});

describe('a range whose first block is after its last', () => {
  let target: Awaited<ReturnType<typeof migratedWarehouse>>;
  beforeAll(async () => {
    target = await migratedWarehouse('world_from_gt_to');
  });
  afterAll(() => target?.drop());

  it('exits 2 for backfill --from > --to before touching the API or the warehouse', async () => {
    await fetch(`${devnet.origin}/__control/reset-stats`, { method: 'POST' });
    const r = await runCli(['backfill', '--contract', contracts()[0]!, '--from', '900', '--to', '600'], {
      env: { DATABASE_URL: target.url, CHAIN_API_URL: `${devnet.origin}/${PROJECT}` },
    });
    figures.push({ case: 'backfill --from 900 --to 600', exit: r.code, lastLine: lastLine(r.stderr) });
    expect(r.code).toBe(2);
    expect(r.stderr).toMatch(/--from \(900\) is greater than --to \(600\); expected --from ≤ --to/);
    const stats = await devnet.stats();
    expect(stats.getTokenTransfers + stats.rpcHttpRequests).toBe(0);
    expect(await target.warehouse.db.selectFrom('export_runs').selectAll().execute()).toEqual([]);
  });

  it('exits 2 for a job file with fromBlock > toBlock, naming the file and the contract', async () => {
    const file = join(tmp, 'backwards.json');
    await writeFile(file, JSON.stringify({ name: 'backwards', contracts: [{ address: contracts()[1], fromBlock: 900, toBlock: 600 }] }));
    await fetch(`${devnet.origin}/__control/reset-stats`, { method: 'POST' });
    const r = await runCli(['run', file], { env: { DATABASE_URL: target.url, CHAIN_API_URL: `${devnet.origin}/${PROJECT}` } });
    figures.push({ case: 'job file fromBlock 900 > toBlock 600', exit: r.code, lastLine: lastLine(r.stderr) });
    expect(r.code).toBe(2);
    expect(r.stderr).toMatch(/backwards\.json: contracts\[0\]\.toBlock: fromBlock \(900\) is greater than toBlock \(600\)/);
    const stats = await devnet.stats();
    expect(stats.getTokenTransfers + stats.rpcHttpRequests).toBe(0);
    expect(await target.warehouse.db.selectFrom('export_runs').selectAll().execute()).toEqual([]);
  });
});

describe('a project id the API refuses (401)', () => {
  let target: Awaited<ReturnType<typeof migratedWarehouse>>;
  beforeAll(async () => {
    target = await migratedWarehouse('world_401');
  });
  afterAll(() => target?.drop());

  it('stops at the first answer without retrying, and the ledger says why without the id', async () => {
    const wrong = 'proj-wrong-77e1';
    await fetch(`${devnet.origin}/__control/reset-stats`, { method: 'POST' });
    const r = await runCli(['backfill', '--contract', contracts()[0]!, '--from', '500', '--to', '899'], {
      env: { DATABASE_URL: target.url, CHAIN_API_URL: `${devnet.origin}/${wrong}` },
    });
    figures.push({ case: 'wrong project id (401)', exit: r.code, lastLine: lastLine(r.stderr) });
    expect(r.code).toBe(1);
    expect(r.stderr).toMatch(/HTTP 401 -32099 "authentication failed": the API does not accept the project id/);
    expect(`${r.stdout}${r.stderr}`).not.toContain(wrong);
    const stats = await devnet.stats();
    expect(stats.getTokenTransfers + stats.rpcHttpRequests).toBe(1);
    const runs = await target.warehouse.db.selectFrom('export_runs').select(['status', 'retries', 'api_requests', 'error']).execute();
    expect(runs).toHaveLength(1);
    expect(runs[0]).toMatchObject({ status: 'failed', retries: '0', api_requests: '1' });
    expect(runs[0]!.error).toMatch(/HTTP 401/);
    expect(runs[0]!.error).not.toContain(wrong);
  });
});

describe('PostgreSQL restarted in the middle of a run', () => {
  let postgres: RunningEmbeddedPostgres | undefined;
  let warehouse: Warehouse | undefined;
  let slow: RunningDevnet | undefined;
  let dataDir = '';
  let stateDir = '';
  const settings = { fsync: 'off', synchronous_commit: 'off', full_page_writes: 'off' };

  beforeAll(async () => {
    const local = await embeddedTestRoot();
    stateDir = local.stateDir;
    dataDir = join(local.root, `run-${process.pid}-restart-${randomBytes(4).toString('hex')}`);
    postgres = await startEmbeddedPostgres({ dataDir, stateDir, settings });
    warehouse = createWarehouse({ databaseUrl: postgres.url, logger: pino({ level: 'silent' }), maxConnections: 2 });
    await migrateToLatest(warehouse);
    await warehouse.close();
    warehouse = undefined;
    slow = await startDevnet(dataset, { projectIds: [PROJECT], faults: { latencyMs: [40, 40] } });
  });
  afterAll(async () => {
    await warehouse?.close();
    await slow?.close();
    await postgres?.stop();
    if (dataDir) await rm(dataDir, { recursive: true, force: true });
  });

  it('the run completes or fails clearly, and the next run leaves the warehouse exactly equal to the chain', async () => {
    const file = join(tmp, 'restart.json');
    await writeFile(
      file,
      JSON.stringify({ name: 'restart', contracts: contracts().map((address) => ({ address, fromBlock: 500, toBlock: 899 })), pageSize: 20, concurrency: 2, commitRows: 60 }),
    );
    const env = { ...process.env, DATABASE_URL: postgres!.url, CHAIN_API_URL: `${slow!.origin}/${PROJECT}`, LOG_LEVEL: 'info' };
    // transactions of three pages: the restart falls inside one, and the run is still far from its end
    const child = spawn(process.execPath, [BIN, 'run', file], { cwd: REPO_DIR, env });
    const first = collect(child, 240_000);
    const exited = first.then(() => true);

    // a few pages in, stop PostgreSQL (fast shutdown: every session is terminated) and start it again on its port
    const pagesBefore = await waitForPages(postgres!.url, 10, exited);
    const port = postgres!.port;
    const stopAt = performance.now();
    await postgres!.stop();
    postgres = await startEmbeddedPostgres({ dataDir, port, stateDir, settings });
    const downMs = Math.round(performance.now() - stopAt);
    const stillRunning = !(await Promise.race([exited, new Promise<boolean>((r) => setTimeout(() => r(false), 0))]));
    // while the first run goes on after the restart, its job must be locked again against a second run
    // (the lock went with the old connection; the run takes it back as soon as PostgreSQL answers)
    const lockedAfterRestart = stillRunning ? await advisoryLocksWithin(postgres.url, 5_000) : undefined;
    const overlapping = stillRunning
      ? await runCli(['run', file], { env: { DATABASE_URL: postgres.url, CHAIN_API_URL: `${slow!.origin}/${PROJECT}` }, timeoutMs: 240_000 })
      : undefined;

    const r: CliResult = await first;
    const clear = r.code === 0 || (r.code === 1 && /^erc20-etl: (?!unexpected failure)/m.test(r.stderr) && !/Unhandled 'error' event|node:events/.test(r.stderr));

    warehouse = createWarehouse({ databaseUrl: postgres.url, logger: pino({ level: 'silent' }), maxConnections: 2 });
    const next = await runCli(['run', file], { env: { DATABASE_URL: postgres.url, CHAIN_API_URL: `${slow!.origin}/${PROJECT}` }, timeoutMs: 240_000 });
    const rows = await warehouseTransfers(warehouse);
    const removed = await warehouse.db.selectFrom('token_transfers_removed').select('id').execute();
    const runs = await warehouse.db.selectFrom('export_runs').select(['id', 'status', 'error']).orderBy('id').execute();
    figures.push({
      case: 'PostgreSQL stopped and started on the same port mid-run (CLI run, 3 contracts, ~150 pages of 20, 40 ms API latency)',
      pagesCommittedBeforeStop: pagesBefore,
      postgresDownMs: downMs,
      firstRun: {
        exit: r.code,
        signal: r.signal,
        clear,
        stillRunningAfterRestart: stillRunning,
        advisoryLocksAfterRestart: lockedAfterRestart,
        secondRunDuringIt: overlapping?.code,
        failure: failureLines(r.stderr),
      },
      nextRun: { exit: next.code, lastLine: lastLine(next.stderr) || lastLine(next.stdout) },
      warehouseRows: rows.length,
      truthRows: dataset.transfers.length,
      runs,
    });

    expect(pagesBefore).toBeGreaterThanOrEqual(10);
    // soft: whatever the first run did, the next run must still repair everything (checked below)
    expect.soft(clear, `the first run neither completed nor failed with a clear message: exit ${r.code}\n${tail(r.stderr, 30)}`).toBe(true);
    if (lockedAfterRestart !== undefined) expect.soft(lockedAfterRestart, 'advisory locks held after the restart while the run goes on').toBeGreaterThan(0);
    if (overlapping) expect.soft(overlapping.code, 'a second run started after the restart, while the first goes on').toBe(75);
    expect(next.code, next.stderr).toBe(0);
    expect(rows).toEqual(datasetTransfers(dataset));
    expect(removed).toEqual([]);
    expect(runs.at(-1)?.status).toBe('succeeded');
    const headers = await warehouse.db.selectFrom('block_headers').select(['hash']).execute();
    expect(headers.map((h) => h.hash).sort()).toEqual([...new Set(dataset.transfers.map((t) => t.blockHash))].sort());
  }, 300_000);
});

/** Polls export_chunks (a new connection each time) until `pages` pages are committed; resolves to the count. */
async function waitForPages(url: string, pages: number, exited: Promise<boolean>): Promise<number> {
  let done = false;
  void exited.then(() => (done = true));
  for (let i = 0; i < 2400 && !done; i++) {
    const client = new pg.Client({ connectionString: url });
    client.on('error', () => undefined);
    try {
      await client.connect();
      const { rows } = await client.query<{ pages: number }>('SELECT coalesce(sum(pages), 0)::int AS pages FROM export_chunks');
      if ((rows[0]?.pages ?? 0) >= pages) return rows[0]!.pages;
    } finally {
      await client.end().catch(() => undefined);
    }
    await new Promise((r) => setTimeout(r, 25));
  }
  throw new Error(`the run ended (or stalled) before ${pages} pages were committed`);
}

async function advisoryLocksWithin(url: string, ms: number): Promise<number> {
  const until = performance.now() + ms;
  for (;;) {
    const n = await advisoryLocks(url);
    if (n > 0 || performance.now() > until) return n;
    await new Promise((r) => setTimeout(r, 100));
  }
}

async function advisoryLocks(url: string): Promise<number> {
  const client = new pg.Client({ connectionString: url });
  client.on('error', () => undefined);
  await client.connect();
  try {
    const { rows } = await client.query<{ n: number }>(`SELECT count(*)::int AS n FROM pg_locks WHERE locktype = 'advisory' AND granted`);
    return rows[0]?.n ?? 0;
  } finally {
    await client.end().catch(() => undefined);
  }
}

/** The lines of stderr that are not JSON log lines: what the process said when it ended. */
function failureLines(text: string): string[] {
  return text
    .split('\n')
    .filter((l) => l.trim() && !l.startsWith('{'))
    .slice(0, 12);
}

function lastLine(text: string): string {
  return text.trim().split('\n').at(-1) ?? '';
}

function tail(text: string, lines: number): string {
  return text.trim().split('\n').slice(-lines).join('\n');
}
