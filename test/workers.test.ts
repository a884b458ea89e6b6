import { spawn, type ChildProcess } from 'node:child_process';
import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { diffTransfers, EXACT, sleep, waitFor } from './helpers/chaos.ts';
import { BIN, collect, REPO_DIR, runCli, type CliResult } from './helpers/cli.ts';
import { PROJECT } from './helpers/devnet.ts';
import { datasetTransfers, migratedWarehouse, warehouseTransfers } from './helpers/exporter.ts';
import { LOCK_ID_OF_PARAM_1, lockKeys } from '../src/warehouse/lock-keys.ts';
import { syntheticWorld, type SyntheticWorld } from './helpers/world.ts';
import { tcpTimer } from './helpers/tcp-timer.ts';

const OPTIONS = { seed: 43, blocks: 3_000, tokens: 3, transfers: 12_000, startBlock: 9_000_000 };
const HEAD = OPTIONS.startBlock + OPTIONS.blocks - 1;
const SHIFTED_CLOCK = fileURLToPath(new URL('./helpers/shifted-clock.mjs', import.meta.url));

interface Worker {
  child: ChildProcess;
  result: Promise<CliResult>;
  /** The JSON log lines so far. */
  logs(): Record<string, unknown>[];
}

/** `erc20-etl worker ARGS…` against the world's reference server and the given warehouse. */
function spawnWorker(world: SyntheticWorld, databaseUrl: string, args: string[], env: NodeJS.ProcessEnv = {}, nodeArgs: string[] = []): Worker {
  const child = spawn(process.execPath, [...nodeArgs, BIN, 'worker', ...args], {
    cwd: REPO_DIR,
    env: { ...process.env, DATABASE_URL: databaseUrl, CHAIN_API_URL: world.devnet.base, LOG_LEVEL: 'info', ...env },
  });
  let text = '';
  child.stderr?.on('data', (d: Buffer) => (text += d.toString()));
  return {
    child,
    result: collect(child, 180_000),
    logs: () =>
      text
        .split('\n')
        .filter((l) => l.startsWith('{'))
        .map((l) => JSON.parse(l) as Record<string, unknown>),
  };
}

const chunksRead = (workers: readonly Worker[]) =>
  workers.flatMap((w) =>
    w
      .logs()
      .filter((l) => l['msg'] === 'chunk done')
      .map((l) => String(l['chunk'])),
  );

/** The job file of a test: every contract of the world over its whole chain, or following the head. */
async function jobFile(dir: string, name: string, world: SyntheticWorld, extra: Record<string, unknown>, toBlock?: number): Promise<string> {
  const fromBlock = OPTIONS.startBlock;
  const file = join(dir, `${name}.json`);
  const contracts = world.contracts().map((address) => ({ address, fromBlock, ...(toBlock !== undefined && { toBlock }) }));
  await writeFile(file, JSON.stringify({ name, contracts, pageSize: 100, concurrency: 4, ...extra }));
  return file;
}

async function expectExact(world: SyntheticWorld, target: Awaited<ReturnType<typeof migratedWarehouse>>) {
  const rows = await warehouseTransfers(target.warehouse);
  expect(diffTransfers(rows, datasetTransfers(world.dataset))).toMatchObject({ rows: world.dataset.transfers.length, ...EXACT });
  const hashes = new Set((await target.warehouse.db.selectFrom('block_headers').select('hash').execute()).map((h) => h.hash));
  expect(world.dataset.transfers.filter((t) => !hashes.has(t.blockHash)).length).toBe(0);
  expect(hashes.size).toBe(new Set(world.dataset.transfers.map((t) => t.blockHash)).size);
}

const count = async (target: Awaited<ReturnType<typeof migratedWarehouse>>, query: string): Promise<number> =>
  Number((await target.warehouse.pool.query<{ n: string }>(query)).rows[0]?.n ?? 0);

const succeededRuns = (target: Awaited<ReturnType<typeof migratedWarehouse>>) => count(target, `SELECT count(*)::text AS n FROM export_runs WHERE status = 'succeeded'`);

/** Waits until the job's chunks have committed at least `pages` pages between them. */
const pagesCommitted = (target: Awaited<ReturnType<typeof migratedWarehouse>>, pages: number, what: string) =>
  waitFor(async () => (await count(target, 'SELECT coalesce(sum(pages), 0)::text AS n FROM export_chunks')) >= pages, { what, timeoutMs: 60_000 });

/**
 * The job's run has succeeded and the queue is empty. The run closes inside the last task, a moment before
 * graphile-worker deletes that task: stopping a worker in that moment could leave the task to run again.
 */
const allDone = async (target: Awaited<ReturnType<typeof migratedWarehouse>>) =>
  (await succeededRuns(target)) === 1 && (await count(target, 'SELECT count(*)::text AS n FROM graphile_worker.jobs')) === 0;

/** Waits until the job's run has succeeded and the queue is empty, then stops the workers (SIGTERM), which must end cleanly. */
async function finishThenStop(target: Awaited<ReturnType<typeof migratedWarehouse>>, workers: readonly Worker[], what: string): Promise<void> {
  try {
    await waitFor(() => allDone(target), { what, timeoutMs: 120_000 });
  } finally {
    for (const w of workers) w.child.kill('SIGTERM');
  }
  for (const r of await Promise.all(workers.map((w) => w.result))) expect(r.code === 0 || r.signal === 'SIGTERM', r.stderr).toBe(true);
}

describe('workers on one queue', () => {
  const world = syntheticWorld('workers', OPTIONS, { faults: { latencyMs: [15, 30] } });
  let dir: string;
  beforeAll(async () => {
    dir = await mkdtemp(join(tmpdir(), 'erc20-etl-workers-'));
  });
  afterAll(async () => {
    await rm(dir, { recursive: true, force: true });
  });

  it('three worker processes export a job exactly, each chunk read to its end once', async () => {
    const { target } = world;
    const env = { DATABASE_URL: target.url, CHAIN_API_URL: world.devnet.base };
    const file = await jobFile(dir, 'three', world, {}, HEAD);
    const enqueued = await runCli(['enqueue', file], { env });
    expect(enqueued.code, enqueued.stderr).toBe(0);
    expect(enqueued.stdout).toMatch(/8 chunk task\(s\) queued/);
    // again: every chunk already has its task, so nothing is added
    const again = await runCli(['enqueue', file], { env });
    expect(again.stdout, again.stderr).toMatch(/0 chunk task\(s\) queued \(8 were queued already\)/);

    // the queue holds the job, never the project id
    const payloads = (await target.warehouse.pool.query<{ payload: string; key: string }>('SELECT payload::text AS payload, key FROM graphile_worker._private_jobs ORDER BY id'))
      .rows;
    expect(payloads).toHaveLength(8);
    for (const p of payloads) {
      expect(p.payload).not.toContain(PROJECT);
      expect(JSON.parse(p.payload)).toMatchObject({ job: { name: 'three' }, chunkId: expect.stringMatching(/^\d+$/) });
    }
    const chunkIds = (await target.warehouse.db.selectFrom('export_chunks').select('id').orderBy('id').execute()).map((c) => c.id);
    const queued = await runCli(['status', '--json'], { env });
    expect(queued.code, queued.stderr).toBe(0);
    expect(JSON.parse(queued.stdout).queue).toMatchObject({ waiting: 8, running: 0, givenUp: 0, lastError: null });

    const before = await world.devnet.stats();
    const workers = [1, 2, 3].map(() => spawnWorker(world, target.url, ['--concurrency', '2']));
    await finishThenStop(target, workers, 'the workers to finish the job');

    await expectExact(world, target);
    // each chunk was read to its end by exactly one task, and the work was shared
    expect(chunksRead(workers).sort()).toEqual([...chunkIds].sort());
    expect(workers.filter((w) => chunksRead([w]).length > 0).length).toBeGreaterThan(1);
    const runs = await target.warehouse.db.selectFrom('export_runs').selectAll().execute();
    expect(runs.map((r) => [r.command, r.status, Number(r.rows_inserted), Number(r.rows_updated)])).toEqual([['enqueue', 'succeeded', world.dataset.transfers.length, 0]]);
    expect(await count(target, `SELECT count(*)::text AS n FROM export_ranges WHERE status <> 'complete'`)).toBe(0);
    expect(await count(target, 'SELECT count(*)::text AS n FROM graphile_worker.jobs')).toBe(0);
    const drained = await runCli(['status'], { env: { DATABASE_URL: target.url, CHAIN_API_URL: '' } });
    expect(drained.stdout).toMatch(/^queue: 0 task\(s\) waiting, 0 running, 0 given up$/m);
    // the run's request total is the sum of what each task counted: what the server saw from the workers, but for the
    // one eth_chainId each worker asks as it starts (which chain's tasks it takes), outside any run
    const after = await world.devnet.stats();
    expect(Number(runs[0]!.api_requests)).toBe(after.getTokenTransfers + after.rpcHttpRequests - before.getTokenTransfers - before.rpcHttpRequests - workers.length);

    // the same range again, read by one worker that stops once the queue is empty: every row is unchanged
    const rerun = await runCli(['enqueue', file], { env });
    expect(rerun.stdout, rerun.stderr).toMatch(/8 chunk task\(s\) queued/);
    const once = spawnWorker(world, target.url, ['--once', '--concurrency', '4']);
    const result = await once.result;
    expect(result.code, result.stderr).toBe(0);
    const second = await target.warehouse.db.selectFrom('export_runs').selectAll().where('id', '<>', runs[0]!.id).execute();
    expect(second.map((r) => [r.status, Number(r.rows_inserted), Number(r.rows_updated), Number(r.rows_unchanged)])).toEqual([['succeeded', 0, 0, OPTIONS.transfers]]);
    expect(await count(target, 'SELECT count(*)::text AS n FROM graphile_worker.jobs')).toBe(0);
    await expectExact(world, target);
  }, 180_000);

  it('enqueues of one job take turns, and none runs while `run` holds the job', async () => {
    const target = await migratedWarehouse('workers_turns');
    try {
      const env = { DATABASE_URL: target.url, CHAIN_API_URL: world.devnet.base };
      const file = await jobFile(dir, 'turns', world, { pageSize: 5 }, HEAD);
      const both = await Promise.all([runCli(['enqueue', file], { env }), runCli(['enqueue', file], { env })]);
      for (const r of both) expect(r.code, r.stderr).toBe(0);
      // one planned the job; the other found its ranges open and queued nothing twice
      expect(await count(target, 'SELECT count(*)::text AS n FROM export_runs')).toBe(1);
      expect(await count(target, 'SELECT count(*)::text AS n FROM export_ranges')).toBe(3);
      expect(await count(target, 'SELECT count(*)::text AS n FROM graphile_worker.jobs')).toBe(8);

      const run = spawn(process.execPath, [BIN, 'run', file], { cwd: REPO_DIR, env: { ...process.env, ...env, LOG_LEVEL: 'warn' } });
      const ran = collect(run, 120_000);
      try {
        await waitFor(async () => (await count(target, `SELECT count(*)::text AS n FROM export_runs WHERE command = 'run'`)) === 1, { what: '`run` to start', timeoutMs: 60_000 });
        const refused = await runCli(['enqueue', file], { env });
        expect(refused.code, refused.stderr).toBe(75);
        expect(refused.stderr).toMatch(/Another run of job "turns" is in progress/);
      } finally {
        run.kill('SIGKILL');
        await ran;
      }
    } finally {
      await target.drop();
    }
  }, 180_000);

  it('a worker killed mid-task loses nothing: the others take its chunks over and finish them', async () => {
    const target = await migratedWarehouse('workers_kill');
    try {
      const env = { DATABASE_URL: target.url, CHAIN_API_URL: world.devnet.base };
      const file = await jobFile(dir, 'kill', world, { pageSize: 25 }, HEAD);
      const enqueued = await runCli(['enqueue', file], { env });
      expect(enqueued.code, enqueued.stderr).toBe(0);
      const lease = ['--dead-after', '5'];

      const doomed = spawnWorker(world, target.url, ['--concurrency', '2', ...lease]);
      await pagesCommitted(target, 10, 'the first worker to commit pages');
      // while workers read the job, `run` of it waits its turn rather than reading the same chunks
      const run = await runCli(['run', file], { env });
      expect(run.code, run.stderr).toBe(75);
      expect(run.stderr).toMatch(/`erc20-etl worker` processes are reading its queued chunks/);
      const held = (await target.warehouse.pool.query<{ key: string }>('SELECT key FROM graphile_worker.jobs WHERE locked_by IS NOT NULL')).rows.map((r) => r.key);
      expect(held.length).toBeGreaterThan(0);
      doomed.child.kill('SIGKILL');
      expect((await doomed.result).signal).toBe('SIGKILL');
      const readByDoomed = chunksRead([doomed]);
      const rowsBefore = await count(target, 'SELECT count(*)::text AS n FROM token_transfers');
      expect(rowsBefore).toBeLessThan(OPTIONS.transfers);

      const rescuers = [1, 2].map(() => spawnWorker(world, target.url, ['--concurrency', '2', ...lease]));
      await finishThenStop(target, rescuers, 'the other workers to finish the job');

      await expectExact(world, target);
      // the tasks the killed worker held were handed back, and read by the others from where it stopped
      const handedBack = rescuers.flatMap((w) => w.logs().filter((l) => l['msg'] === 'workers not heard from: their tasks go back to the queue'));
      expect(handedBack.length).toBeGreaterThan(0);
      const chunkIds = (await target.warehouse.pool.query<{ id: string }>('SELECT id FROM export_chunks')).rows;
      expect(chunkIds).toEqual([]); // the ranges were reconciled, so their chunks are gone
      // a chunk the killed worker finished just before its 'chunk done' line is found finished (or its range closed) by a
      // rescuer: it was read once, by the killed worker
      const foundFinished = new Set(['chunk task found its chunk finished already', 'chunk task skipped: its range is closed already']);
      const finishedUnsaid = rescuers.flatMap((w) =>
        w
          .logs()
          .filter((l) => foundFinished.has(String(l['msg'])))
          .map((l) => String(l['chunk'])),
      );
      const readByRescuers = chunksRead(rescuers);
      const unsaid = [...new Set(finishedUnsaid)].filter((id) => !readByDoomed.includes(id) && !readByRescuers.includes(id));
      const read = [...readByDoomed, ...unsaid, ...readByRescuers];
      expect(read.length).toBe(new Set(read).size);
      expect(read.length).toBe(8);
      for (const key of held) expect(chunksRead(rescuers)).toContain(key.split(':').at(-1));
      // the run's row counts every row once, the killed worker's committed pages too: they were added in the pages' own transactions
      const [ledger] = await target.warehouse.db.selectFrom('export_runs').selectAll().execute();
      expect({ status: ledger!.status, inserted: Number(ledger!.rows_inserted), updated: Number(ledger!.rows_updated) }).toEqual({
        status: 'succeeded',
        inserted: OPTIONS.transfers,
        updated: 0,
      });
    } finally {
      await target.drop();
    }
  }, 240_000);

  it('a worker frozen past --dead-after whose chunk locks were lost comes back without counting a page twice', async () => {
    const target = await migratedWarehouse('workers_frozen');
    try {
      const env = { DATABASE_URL: target.url, CHAIN_API_URL: world.devnet.base };
      const file = await jobFile(dir, 'frozen', world, { pageSize: 25 }, HEAD);
      expect((await runCli(['enqueue', file], { env })).code).toBe(0);
      const lease = ['--dead-after', '5'];
      const frozen = spawnWorker(world, target.url, ['--concurrency', '2', ...lease]);
      await pagesCommitted(target, 10, 'the first worker to commit pages');
      // the machine pauses the worker (a VM migrated, a laptop asleep), and the connections that hold its chunks' locks
      // drop meanwhile; its other connections, a transaction of pages among them, stay open
      frozen.child.kill('SIGSTOP');
      const dropped = await target.warehouse.pool.query<{ pid: number }>(
        `SELECT DISTINCT l.pid FROM pg_locks l JOIN pg_database d ON d.oid = l.database
          WHERE l.locktype = 'advisory' AND l.granted AND d.datname = current_database() AND l.pid <> pg_backend_pid()`,
      );
      expect(dropped.rows.length).toBeGreaterThan(0);
      await target.warehouse.pool.query('SELECT pg_terminate_backend(pid) FROM unnest($1::int[]) AS pid', [dropped.rows.map((r) => r.pid)]);
      // another worker takes its tasks over once it is not heard from, and reads their chunks from where the warehouse has them
      const rescuer = spawnWorker(world, target.url, ['--concurrency', '2', ...lease]);
      const handedBack = () => rescuer.logs().some((l) => l['msg'] === 'workers not heard from: their tasks go back to the queue');
      await waitFor(async () => handedBack(), { what: "the rescuer to take the frozen worker's tasks", timeoutMs: 60_000 });
      await sleep(2_000);
      frozen.child.kill('SIGCONT');
      await finishThenStop(target, [frozen, rescuer], 'the two workers to finish the job');

      // the frozen worker's tasks stopped (their locks were gone) and were given back to be tried again, not failed
      const stopped = frozen.logs().filter((l) => l['msg'] === 'task failed; it will be tried again');
      expect(stopped.length, JSON.stringify(frozen.logs().slice(-20))).toBeGreaterThan(0);
      expect(frozen.logs().filter((l) => l['msg'] === 'task failed; retrying cannot help, so it ends here')).toEqual([]);
      await expectExact(world, target);
      const read = chunksRead([frozen, rescuer]);
      expect(read.length).toBe(new Set(read).size);
      // every row counted once in the run, though two workers wrote pages of the same chunks
      const runs = await target.warehouse.db.selectFrom('export_runs').selectAll().execute();
      expect(runs.map((r) => ({ status: r.status, inserted: Number(r.rows_inserted), updated: Number(r.rows_updated) }))).toEqual([
        { status: 'succeeded', inserted: OPTIONS.transfers, updated: 0 },
      ]);
    } finally {
      await target.drop();
    }
  }, 240_000);

  it('a run stopped by SIGTERM whose ranges are then queued runs again, and the workers that finish them mark it succeeded', async () => {
    const target = await migratedWarehouse('workers_reopen');
    try {
      const env = { DATABASE_URL: target.url, CHAIN_API_URL: world.devnet.base };
      const file = await jobFile(dir, 'reopen', world, { pageSize: 25 }, HEAD);
      const child = spawn(process.execPath, [BIN, 'run', file], { cwd: REPO_DIR, env: { ...process.env, ...env } });
      const stopped = collect(child, 120_000);
      await pagesCommitted(target, 10, 'the run to commit pages');
      child.kill('SIGTERM');
      expect((await stopped).code).toBe(143);
      const runs = () => target.warehouse.db.selectFrom('export_runs').select(['id', 'status', 'error', 'rows_inserted', 'rows_updated']).orderBy('id').execute();
      expect((await runs()).map((r) => r.status)).toEqual(['failed']);

      const enqueued = await runCli(['enqueue', file], { env });
      expect(enqueued.code, enqueued.stderr).toBe(0);
      expect(enqueued.stdout).toMatch(/open range\(s\) of earlier runs: their unfinished chunks queued again/);
      expect(enqueued.stdout).toMatch(/run 1 had ended failed with ranges open \(stopped by SIGTERM: [^)\n]*\): running again as a queued run/);
      expect((await runs()).map((r) => [r.status, r.error])).toEqual([['running', null]]);
      // a queued run now, waiting for workers: not one whose process is gone
      const waiting = await runCli(['status'], { env: { DATABASE_URL: target.url } });
      expect(waiting.stdout).toMatch(/last run: +#1 reopen running, chain 1/);
      const worker = spawnWorker(world, target.url, ['--once', '--concurrency', '4']);
      const done = await worker.result;
      expect(done.code, done.stderr).toBe(0);

      await expectExact(world, target);
      // one run, which did the whole job: the interrupted process's pages and the workers' counted once each
      expect((await runs()).map((r) => ({ status: r.status, inserted: Number(r.rows_inserted), updated: Number(r.rows_updated) }))).toEqual([
        { status: 'succeeded', inserted: OPTIONS.transfers, updated: 0 },
      ]);
      const status = await runCli(['status'], { env: { DATABASE_URL: target.url } });
      expect(status.stdout).toMatch(/last run: +#1 reopen succeeded/);
    } finally {
      await target.drop();
    }
  }, 180_000);

  it('worker --once ending while a killed worker still holds tasks says how many, and when they come back', async () => {
    const target = await migratedWarehouse('workers_once_held');
    try {
      const env = { DATABASE_URL: target.url, CHAIN_API_URL: world.devnet.base };
      const file = await jobFile(dir, 'held', world, { pageSize: 25 }, HEAD);
      expect((await runCli(['enqueue', file], { env })).code).toBe(0);
      const doomed = spawnWorker(world, target.url, ['--concurrency', '2', '--dead-after', '60']);
      await pagesCommitted(target, 5, 'the worker to commit pages');
      doomed.child.kill('SIGKILL');
      await doomed.result;
      const held = await count(target, 'SELECT count(*)::text AS n FROM graphile_worker.jobs WHERE locked_by IS NOT NULL');
      expect(held).toBeGreaterThan(0);
      // the other tasks are read; the killed worker's stay locked until --dead-after (60 s) has passed
      const once = spawnWorker(world, target.url, ['--once', '--concurrency', '2', '--dead-after', '60']);
      const done = await once.result;
      expect(done.code, done.stderr).toBe(0);
      const said = once.logs().find((l) => String(l['msg']).startsWith('worker --once ends with'));
      expect(said, done.stderr).toMatchObject({ level: 40, held, leaseSeconds: 60 });
      expect(String(said!['msg'])).toMatch(
        /task\(s\) of chain 1 held by other workers \(the longest not heard from for \d+ s\).*--dead-after \(60 s\), and the next worker takes them: run `erc20-etl worker --once` again after that/,
      );
    } finally {
      await target.drop();
    }
  }, 180_000);

  it('a worker stopped with SIGTERM ends its page, exits 0 and hands its tasks back at once, no attempt used', async () => {
    const target = await migratedWarehouse('workers_term');
    try {
      const env = { DATABASE_URL: target.url, CHAIN_API_URL: world.devnet.base };
      const file = await jobFile(dir, 'term', world, { pageSize: 5 }, HEAD);
      expect((await runCli(['enqueue', file], { env })).code).toBe(0);
      // each task failed an attempt before: that is what it is to have again once the stop gives it back
      await target.warehouse.pool.query(`UPDATE graphile_worker._private_jobs SET attempts = 1, last_error = 'an earlier failure'`);
      const stopped = spawnWorker(world, target.url, ['--concurrency', '2']);
      await pagesCommitted(target, 10, 'the worker to commit pages');
      // its queue's connections (graphile-worker's) are probed when idle, as the warehouse's are
      const queue = await target.warehouse.pool.query<{ port: number | null }>(
        `SELECT client_port AS port FROM pg_stat_activity WHERE datname = current_database() AND application_name = 'erc20-etl queue'`,
      );
      expect(queue.rows.length).toBeGreaterThan(0);
      for (const { port } of queue.rows) if (port !== null) expect(tcpTimer(port)?.kind).toBe('02');
      stopped.child.kill('SIGTERM');
      const result = await stopped.result;
      expect(result.code, result.stderr).toBe(0);
      const logs = stopped.logs();
      const interrupted = logs.filter((l) => l['msg'] === 'task stopped after its page as the worker stops; it goes back to the queue').length;
      expect(interrupted).toBeGreaterThan(0);
      // a stop is no failure of a task: none is logged as one, and each interrupted task is given back as it was taken
      expect(logs.filter((l) => l['msg'] === 'task failed; it will be tried again' || Number(l['level']) >= 50)).toEqual([]);
      expect(logs.find((l) => l['msg']?.toString().startsWith('gave back the tasks the stop interrupted'))).toMatchObject({ tasks: interrupted });
      // nothing is left locked: the next worker need not wait for --dead-after (60 s by default)
      expect(await count(target, 'SELECT count(*)::text AS n FROM graphile_worker.jobs WHERE locked_by IS NOT NULL')).toBe(0);
      // nor for a back-off: no task used an attempt, each keeps its earlier error, and every one is ready now
      expect(await count(target, 'SELECT count(*)::text AS n FROM graphile_worker.jobs')).toBeGreaterThan(0);
      expect(
        await count(target, `SELECT count(*)::text AS n FROM graphile_worker.jobs WHERE attempts <> 1 OR last_error IS DISTINCT FROM 'an earlier failure' OR run_at > now()`),
      ).toBe(0);
      const next = spawnWorker(world, target.url, ['--once', '--concurrency', '4']);
      const done = await next.result;
      expect(done.code, done.stderr).toBe(0);
      expect(await succeededRuns(target)).toBe(1);
      await expectExact(world, target);
      const read = [...chunksRead([stopped]), ...chunksRead([next])];
      expect(read.length).toBe(new Set(read).size);
    } finally {
      await target.drop();
    }
  }, 180_000);

  it('a crontab entry fires once across two workers, which then export the job', async () => {
    const target = await migratedWarehouse('workers_cron');
    const jobs = await mkdtemp(join(dir, 'jobs-'));
    try {
      await jobFile(jobs, 'nightly', world, { schedule: '0 2 * * *' });
      // both workers' clocks read yesterday, 01:59:52 UTC, a few seconds after they start: 02:00 comes
      // while both run, and is already past for PostgreSQL, so the enqueue it fires runs at once
      const now = Date.now();
      const yesterday = new Date(now - 86_400_000);
      const target0159 = Date.UTC(yesterday.getUTCFullYear(), yesterday.getUTCMonth(), yesterday.getUTCDate(), 1, 59, 52);
      const env = { TEST_CLOCK_SHIFT_MS: String(target0159 - now) };
      const args = ['--schedule', '--jobs', jobs, '--concurrency', '2', '--metrics-port', '0'];
      const workers = [1, 2].map(() => spawnWorker(world, target.url, args, env, ['--import', SHIFTED_CLOCK]));
      try {
        await waitFor(() => allDone(target), { what: 'the scheduled run to finish', timeoutMs: 120_000 });
        // a little longer: nothing else fires
        await sleep(2_000);
        const due = workers.map((w) =>
          w
            .logs()
            .filter((l) => l['msg'] === 'schedule due')
            .map((l) => l['at']),
        );
        const at = new Date(target0159 + 8_000).toISOString();
        expect(due).toEqual([[at], [at]]);
        // the enqueue task ran once, in one of them
        expect(workers.flatMap((w) => w.logs().filter((l) => l['msg'] === 'job enqueued'))).toHaveLength(1);
        const runs = await target.warehouse.db.selectFrom('export_runs').selectAll().execute();
        expect(runs.map((r) => [r.job, r.command, r.status])).toEqual([['nightly', 'schedule', 'succeeded']]);
        await expectExact(world, target);

        // each worker's metrics endpoint reports its share of the run; together, the whole of it
        const scraped = await Promise.all(
          workers.map(async (w) => {
            const url = String(w.logs().find((l) => l['msg'] === 'serving metrics')?.['url']);
            return (await fetch(url)).text();
          }),
        );
        const inserted = scraped.map((text) => sumOf(text, 'erc20_etl_rows_total', 'outcome="inserted"'));
        expect(inserted.reduce((a, b) => a + b, 0)).toBe(OPTIONS.transfers);
        const logged = workers.map((w) =>
          w
            .logs()
            .filter((l) => l['msg'] === 'chunk done')
            .reduce((n, l) => n + Number(l['rows']), 0),
        );
        expect(inserted).toEqual(logged);
        expect(scraped.reduce((n, text) => n + sumOf(text, 'erc20_etl_runs_total', 'status="succeeded"'), 0)).toBe(1);
        expect(scraped.some((text) => /erc20_etl_lag_blocks\{job="nightly",chain="1",/.test(text))).toBe(true);
        for (const text of scraped) expect(text).not.toContain(PROJECT);
        // and both see the queue, emptied, and the two of them working it
        for (const text of scraped) {
          for (const state of ['waiting', 'running', 'given_up']) expect(text).toMatch(new RegExp(`^erc20_etl_queue_tasks\\{state="${state}"\\} 0$`, 'm'));
          expect(text).toMatch(/^erc20_etl_workers 2$/m);
        }
      } finally {
        for (const w of workers) w.child.kill('SIGTERM');
        await Promise.all(workers.map((w) => w.result));
      }
    } finally {
      await target.drop();
    }
  }, 240_000);
});

describe('a schedule missed while no worker ran', () => {
  const world = syntheticWorld('workers_missed', { seed: 45, blocks: 300, tokens: 2, transfers: 1_000, startBlock: 2_000_000 });
  let dir: string;
  beforeAll(async () => {
    dir = await mkdtemp(join(tmpdir(), 'erc20-etl-missed-'));
  });
  afterAll(async () => {
    await rm(dir, { recursive: true, force: true });
  });

  it('fires once when a worker starts within the hour after it was due', async () => {
    const { target } = world;
    const jobs = await mkdtemp(join(dir, 'jobs-'));
    const fromBlock = 2_000_000;
    await writeFile(join(jobs, 'late.json'), JSON.stringify({ name: 'late', contracts: world.contracts().map((address) => ({ address, fromBlock })), schedule: '0 2 * * *' }));
    const day = new Date(Date.now() - 86_400_000);
    const at = (h: number, m: number) => Date.UTC(day.getUTCFullYear(), day.getUTCMonth(), day.getUTCDate(), h, m);
    const shifted = (clock: number) => ({ TEST_CLOCK_SHIFT_MS: String(clock - Date.now()) });
    const args = ['--schedule', '--jobs', jobs, '--concurrency', '2'];
    // a worker knows the schedule at 01:50, and stops before 02:00 …
    const early = spawnWorker(world, target.url, args, shifted(at(1, 50)), ['--import', SHIFTED_CLOCK]);
    await waitFor(async () => early.logs().some((l) => l['msg'] === 'worker listening for tasks'), { what: 'the first worker to start', timeoutMs: 60_000 });
    early.child.kill('SIGTERM');
    await early.result;
    expect(early.logs().filter((l) => l['msg'] === 'job enqueued')).toEqual([]);
    // … and the next one starts at 02:10: it fires the 02:00 that nobody ran, once, and the job is exported
    const late = spawnWorker(world, target.url, args, shifted(at(2, 10)), ['--import', SHIFTED_CLOCK]);
    await finishThenStop(target, [late], 'the missed run to be fired and finished');
    expect(
      late
        .logs()
        .filter((l) => l['msg'] === 'schedule was due within the hour: enqueued now unless a worker fired it then')
        .map((l) => l['at']),
    ).toEqual([new Date(at(2, 0)).toISOString()]);
    expect(late.logs().filter((l) => l['msg'] === 'job enqueued')).toHaveLength(1);
    expect(diffTransfers(await warehouseTransfers(target.warehouse), datasetTransfers(world.dataset))).toMatchObject({ rows: 1_000, ...EXACT });
  }, 180_000);
});

describe('a requestsPerSecond limit across workers', () => {
  const RATE = 15;
  // the server refuses what goes beyond RATE requests per second (after a burst of one second's worth)
  const world = syntheticWorld('workers_rate', { seed: 46, blocks: 300, tokens: 3, transfers: 900, startBlock: 3_000_000 }, { rateLimit: RATE });

  it('holds for three workers together: the server never has to refuse one', async () => {
    const { target } = world;
    const dir = await mkdtemp(join(tmpdir(), 'erc20-etl-rate-'));
    try {
      const contracts = world.contracts().map((address) => ({ address, fromBlock: 3_000_000, toBlock: 3_000_299 }));
      const file = join(dir, 'limited.json');
      await writeFile(file, JSON.stringify({ name: 'limited', contracts, pageSize: 20, concurrency: 3, requestsPerSecond: RATE }));
      const enqueued = await runCli(['enqueue', file], { env: { DATABASE_URL: target.url, CHAIN_API_URL: world.devnet.base } });
      expect(enqueued.code, enqueued.stderr).toBe(0);
      const before = await world.devnet.stats();
      const workers = [1, 2, 3].map(() => spawnWorker(world, target.url, ['--once', '--concurrency', '2']));
      for (const r of await Promise.all(workers.map((w) => w.result))) expect(r.code, r.stderr).toBe(0);
      const after = await world.devnet.stats();
      // enough requests that three workers at RATE each would have gone past the burst
      expect(after.getTokenTransfers + after.rpcHttpRequests - before.getTokenTransfers - before.rpcHttpRequests).toBeGreaterThan(3 * RATE);
      expect(after.errors['429'] ?? 0).toBe(0);
      expect(diffTransfers(await warehouseTransfers(target.warehouse), datasetTransfers(world.dataset))).toMatchObject({ rows: 900, ...EXACT });
    } finally {
      await rm(dir, { recursive: true, force: true });
    }
  }, 120_000);
});

describe('a task the worker cannot do', () => {
  const world = syntheticWorld('workers_bad', { seed: 44, blocks: 200, tokens: 1, transfers: 300, startBlock: 1_000_000 });
  /** A job file named `name` in `dir`: the world's contract over its 200 blocks, read one chunk at a time. */
  const oneChunkJob = async (dir: string, name: string): Promise<string> => {
    const file = join(dir, `${name}.json`);
    const contracts = world.contracts().map((address) => ({ address, fromBlock: 1_000_000, toBlock: 1_000_199 }));
    await writeFile(file, JSON.stringify({ name, contracts, concurrency: 1 }));
    return file;
  };

  it('ends with a message when its payload is unreadable, instead of coming back 25 times; worker --once then exits 1 naming it', async () => {
    const { target } = world;
    const migrated = await runCli(['migrate'], { env: { DATABASE_URL: target.url } });
    expect(migrated.code, migrated.stderr).toBe(0);
    await target.warehouse.pool.query(`SELECT graphile_worker.add_job('erc20_etl_chunk', '{"job": {"name": "old"}, "chunkId": 7}'::json)`);
    const worker = spawnWorker(world, target.url, ['--once']);
    const result = await worker.result;
    // a batch that left work undone is no success to cron
    expect(result.code, result.stderr).toBe(1);
    expect(result.stderr).toContain('worker --once stopped with work undone: 1 task(s) failed and were given up');
    expect(result.stderr).toMatch(/\n {2}erc20_etl_chunk: .*payload this version cannot read/);
    const failed = worker.logs().filter((l) => l['msg'] === 'task failed; retrying cannot help, so it ends here');
    expect(failed).toHaveLength(1);
    expect(String(failed[0]!['err'])).toMatch(/payload this version cannot read .*job\.contracts.*run `erc20-etl enqueue` for its job again/);
    expect(Number((await target.warehouse.pool.query<{ n: string }>('SELECT count(*)::text AS n FROM graphile_worker.jobs')).rows[0]!.n)).toBe(0);
  });

  it('counts tasks given up for bad data in status with their error; the next enqueue queues them again and its run ends succeeded', async () => {
    const { target } = world;
    const dir = await mkdtemp(join(tmpdir(), 'erc20-etl-given-up-'));
    const control = (path: string, body?: unknown) =>
      fetch(`${world.devnet.origin}/__control/${path}`, {
        method: 'POST',
        ...(body !== undefined && { body: JSON.stringify(body), headers: { 'content-type': 'application/json' } }),
      });
    try {
      const env = { DATABASE_URL: target.url, CHAIN_API_URL: world.devnet.base };
      const file = await oneChunkJob(dir, 'bad-rows');
      const before = (JSON.parse((await runCli(['status', '--json'], { env: { DATABASE_URL: target.url } })).stdout) as { queue: { givenUp: number } | null }).queue?.givenUp ?? 0;
      expect((await runCli(['enqueue', file], { env })).code).toBe(0);
      expect((await control('corrupt', { kind: 'bad-address', contract: world.contracts()[0], times: 100 })).ok).toBe(true);
      const bad = spawnWorker(world, target.url, ['--once']);
      const failed = await bad.result;
      expect(failed.code, failed.stderr).toBe(1);
      expect(failed.stderr).toContain('task(s) failed and were given up');
      // the tasks left the queue; their chunks wait for an enqueue, and status says so with the error
      expect(await count(target, `SELECT count(*)::text AS n FROM graphile_worker.jobs`)).toBe(0);
      const status = async () =>
        (JSON.parse((await runCli(['status', '--json'], { env: { DATABASE_URL: target.url } })).stdout) as { queue: { givenUp: number; lastError: string | null } }).queue;
      const givenUp = await status();
      // (other tests of this world leave no task given up)
      const unfinished = await count(target, `SELECT count(*)::text AS n FROM export_chunks c JOIN export_ranges r ON r.id = c.range_id WHERE NOT c.done AND r.job = 'bad-rows'`);
      expect(unfinished).toBeGreaterThan(0);
      expect(givenUp.givenUp).toBe(before + unfinished);
      expect(givenUp.lastError).toMatch(/address/);
      const text = await runCli(['status'], { env: { DATABASE_URL: target.url } });
      expect(text.stdout).toMatch(new RegExp(`${givenUp.givenUp} given up \\(\`erc20-etl enqueue\` queues their chunks afresh\\)`));
      // while a session holds the job's lock, as a `run` of the job does while it reads those chunks, they are not given
      // up; a worker's task or an enqueue of the job holds it shared, which changes nothing
      const holder = await target.warehouse.pool.connect();
      try {
        await holder.query(`SELECT pg_advisory_lock_shared(${LOCK_ID_OF_PARAM_1})`, [lockKeys.job('bad-rows')]);
        expect((await status()).givenUp).toBe(before + unfinished);
        await holder.query(`SELECT pg_advisory_unlock_shared(${LOCK_ID_OF_PARAM_1})`, [lockKeys.job('bad-rows')]);
        await holder.query(`SELECT pg_advisory_lock(${LOCK_ID_OF_PARAM_1})`, [lockKeys.job('bad-rows')]);
        expect((await status()).givenUp).toBe(before);
      } finally {
        await holder.query(`SELECT pg_advisory_unlock_all()`).catch(() => undefined);
        holder.release();
      }
      expect((await status()).givenUp).toBe(before + unfinished);

      expect((await control('corrupt/clear')).ok).toBe(true);
      const again = await runCli(['enqueue', file], { env });
      expect(again.stdout).toMatch(/run \d+ had ended failed with ranges open \(getTokenTransfers answered a malformed page[^\n]*\): running again as a queued run/);
      const good = spawnWorker(world, target.url, ['--once']);
      expect((await good.result).code).toBe(0);
      expect((await status()).givenUp).toBe(before);
      const runs = await target.warehouse.db.selectFrom('export_runs').select('status').where('job', '=', 'bad-rows').execute();
      expect(runs.map((r) => r.status)).toEqual(['succeeded']);
    } finally {
      await control('corrupt/clear');
      await rm(dir, { recursive: true, force: true });
    }
  }, 120_000);

  it('worker --once exits 1 when its tasks must be tried again later (their job is held), and a later --once finishes them', async () => {
    const { target } = world;
    const dir = await mkdtemp(join(tmpdir(), 'erc20-etl-busy-'));
    const holder = await target.warehouse.pool.connect();
    try {
      const env = { DATABASE_URL: target.url, CHAIN_API_URL: world.devnet.base };
      const file = await oneChunkJob(dir, 'busy');
      expect((await runCli(['enqueue', file], { env })).code).toBe(0);
      // held as `erc20-etl run` holds its job: each chunk task finds it busy and goes back to the queue for a later attempt
      await holder.query(`SELECT pg_advisory_lock(${LOCK_ID_OF_PARAM_1})`, [lockKeys.job('busy')]);
      const held = spawnWorker(world, target.url, ['--once']);
      const result = await held.result;
      expect(result.code, result.stderr).toBe(1);
      expect(result.stderr).toContain('worker --once stopped with work undone: 2 task(s) failed an attempt and stay in the queue, to be tried again later');
      expect(result.stderr).not.toContain('were given up');
      expect(held.logs().filter((l) => l['msg'] === 'task failed; it will be tried again')).toHaveLength(2);
      const waiting = await target.warehouse.pool.query<{ attempts: number }>(`SELECT attempts FROM graphile_worker.jobs WHERE task_identifier = 'erc20_etl_chunk'`);
      expect(waiting.rows).toEqual([{ attempts: 1 }, { attempts: 1 }]);

      await holder.query(`SELECT pg_advisory_unlock_all()`);
      // graphile-worker's first retry comes a few seconds after the failed attempt
      await waitFor(async () => (await count(target, `SELECT count(*)::text AS n FROM graphile_worker.jobs WHERE run_at > now()`)) === 0, {
        what: 'the tasks to be due again',
        timeoutMs: 30_000,
      });
      const later = spawnWorker(world, target.url, ['--once']);
      expect((await later.result).code).toBe(0);
      const runs = await target.warehouse.db.selectFrom('export_runs').select('status').where('job', '=', 'busy').execute();
      expect(runs.map((r) => r.status)).toEqual(['succeeded']);
    } finally {
      holder.release();
      await rm(dir, { recursive: true, force: true });
    }
  }, 120_000);

  it('lets `run` take over a queued job; the workers then find its chunks read, and read nothing twice', async () => {
    const { target } = world;
    const dir = await mkdtemp(join(tmpdir(), 'erc20-etl-takeover-'));
    try {
      const env = { DATABASE_URL: target.url, CHAIN_API_URL: world.devnet.base };
      const file = await oneChunkJob(dir, 'takeover');
      expect((await runCli(['enqueue', file], { env })).code).toBe(0);
      const run = await runCli(['run', file], { env });
      expect(run.code, run.stderr).toBe(0);
      const worker = spawnWorker(world, target.url, ['--once']);
      expect((await worker.result).code).toBe(0);
      expect(worker.logs().filter((l) => l['msg'] === 'chunk task skipped: its range is closed already')).toHaveLength(2);
      expect(chunksRead([worker])).toEqual([]);
      const runs = await target.warehouse.db.selectFrom('export_runs').select(['command', 'status', 'error']).where('job', '=', 'takeover').orderBy('id').execute();
      expect(runs.map((r) => [r.command, r.status])).toEqual([
        ['enqueue', 'failed'],
        ['run', 'succeeded'],
      ]);
      expect(runs[0]!.error).toMatch(/queued chunks were not all read when `erc20-etl run` of the job started/);
      const rows = await warehouseTransfers(target.warehouse);
      expect(
        diffTransfers(
          rows.filter((t) => t.blockNumber <= 1_000_199),
          datasetTransfers(world.dataset).filter((t) => t.blockNumber <= 1_000_199),
        ),
      ).toMatchObject(EXACT);
    } finally {
      await rm(dir, { recursive: true, force: true });
    }
  });

  it('stops at start, saying why and without the project id, when the API refuses the worker; its tasks wait untouched', async () => {
    const { target } = world;
    const dir = await mkdtemp(join(tmpdir(), 'erc20-etl-refused-'));
    try {
      const file = await oneChunkJob(dir, 'refused');
      const enqueued = await runCli(['enqueue', file], { env: { DATABASE_URL: target.url, CHAIN_API_URL: world.devnet.base } });
      expect(enqueued.code, enqueued.stderr).toBe(0);
      const wrong = 'not-the-project-4c1d';
      const worker = spawnWorker(world, target.url, ['--once'], { CHAIN_API_URL: `${world.devnet.origin}/${wrong}` });
      const result = await worker.result;
      // it asks its endpoint's chain before it takes a task: refused, it stops there
      expect(result.code).toBe(1);
      expect(result.stderr).toMatch(/The worker could not ask CHAIN_API_URL which chain it serves \(eth_chainId\): .*the API does not accept the project id/);
      expect(result.stderr).not.toContain(wrong);
      // no task was taken: both chunks wait, their attempts untouched, and the run goes on for a worker that can read them
      const tasks = await target.warehouse.pool.query<{ attempts: number }>(`SELECT attempts FROM graphile_worker.jobs`);
      expect(tasks.rows).toEqual([{ attempts: 0 }, { attempts: 0 }]);
      const runs = await target.warehouse.db.selectFrom('export_runs').selectAll().where('job', '=', 'refused').execute();
      expect(runs.map((r) => r.status)).toEqual(['running']);
      const right = spawnWorker(world, target.url, ['--once']);
      expect((await right.result).code).toBe(0);
      const done = await target.warehouse.db.selectFrom('export_runs').selectAll().where('job', '=', 'refused').execute();
      expect(done.map((r) => r.status)).toEqual(['succeeded']);
    } finally {
      await rm(dir, { recursive: true, force: true });
    }
  });
});

/** The sum of a metric's samples whose labels contain `label`. */
function sumOf(text: string, name: string, label: string): number {
  return text
    .split('\n')
    .filter((l) => l.startsWith(`${name}{`) && l.includes(label))
    .reduce((n, l) => n + Number(l.split(' ').at(-1)), 0);
}
