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
import { syntheticWorld, type SyntheticWorld } from './helpers/world.ts';

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

const chunksRead = (workers: readonly Worker[]) => workers.flatMap((w) => w.logs().filter((l) => l['msg'] === 'chunk done').map((l) => String(l['chunk'])));

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

describe('workers on one queue', () => {
  const world = syntheticWorld('workers', OPTIONS, { faults: { latencyMs: [3, 8] } });
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
    const payloads = (await target.warehouse.pool.query<{ payload: string; key: string }>('SELECT payload::text AS payload, key FROM graphile_worker._private_jobs ORDER BY id')).rows;
    expect(payloads).toHaveLength(8);
    for (const p of payloads) {
      expect(p.payload).not.toContain(PROJECT);
      expect(JSON.parse(p.payload)).toMatchObject({ job: { name: 'three' }, chunkId: expect.stringMatching(/^\d+$/) });
    }
    const chunkIds = (await target.warehouse.db.selectFrom('export_chunks').select('id').orderBy('id').execute()).map((c) => c.id);

    const before = await world.devnet.stats();
    const workers = [1, 2, 3].map(() => spawnWorker(world, target.url, ['--once', '--concurrency', '2']));
    const results = await Promise.all(workers.map((w) => w.result));
    for (const r of results) expect(r.code, r.stderr).toBe(0);

    await expectExact(world, target);
    // each chunk was read to its end by exactly one task, and the work was shared
    expect(chunksRead(workers).sort()).toEqual([...chunkIds].sort());
    expect(workers.filter((w) => chunksRead([w]).length > 0).length).toBeGreaterThan(1);
    const runs = await target.warehouse.db.selectFrom('export_runs').selectAll().execute();
    expect(runs.map((r) => [r.command, r.status, Number(r.rows_inserted), Number(r.rows_updated)])).toEqual([['enqueue', 'succeeded', world.dataset.transfers.length, 0]]);
    expect(await count(target, `SELECT count(*)::text AS n FROM export_ranges WHERE status <> 'complete'`)).toBe(0);
    expect(await count(target, 'SELECT count(*)::text AS n FROM graphile_worker.jobs')).toBe(0);
    // the run's request total is the sum of what each task counted: what the server saw from the workers
    const after = await world.devnet.stats();
    expect(Number(runs[0]!.api_requests)).toBe(after.getTokenTransfers + after.rpcHttpRequests - before.getTokenTransfers - before.rpcHttpRequests);
  }, 180_000);
});
