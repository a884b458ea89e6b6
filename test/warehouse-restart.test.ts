import { spawn } from 'node:child_process';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { Dataset } from '../src/dataset/types.ts';
import { generateSyntheticDataset } from '../src/devnet/synthetic.ts';
import { diffTransfers, EXACT, sleep, waitFor } from './helpers/chaos.ts';
import { BIN, collect, REPO_DIR } from './helpers/cli.ts';
import { startDevnet, type RunningDevnet } from './helpers/devnet.ts';
import { datasetTransfers, migratedWarehouse, warehouseTransfers } from './helpers/exporter.ts';

// PostgreSQL ending the run's connections (a restart, an administrator, a pooler): every statement of the run, not
// only its page loads, is retried on a new connection, and a connection that fails while checked out between two
// statements no longer ends the process with an unhandled 'error' event.

let dataset: Dataset;
let devnet: RunningDevnet;
let target: Awaited<ReturnType<typeof migratedWarehouse>>;

beforeAll(async () => {
  dataset = generateSyntheticDataset({ seed: 31, blocks: 3000, tokens: 3, transfers: 15_000, startBlock: 5000 });
  // slow pages, so the connections are ended while the run works
  devnet = await startDevnet(dataset, { faults: { latencyMs: [20, 40] } });
  target = await migratedWarehouse('pg_restart');
});
afterAll(async () => {
  await devnet?.close();
  await target?.drop();
});

describe('a run whose PostgreSQL connections are ended while it works', () => {
  it('retries every statement on a new connection and ends succeeded with every row once', async () => {
    const contracts = [...new Set(dataset.transfers.map((t) => t.contractAddress))].sort();
    const args = ['backfill', ...contracts.flatMap((c) => ['--contract', c]), '--from', '5000', '--to', '7999', '--page-size', '100', '--concurrency', '4'];
    const env = { ...process.env, DATABASE_URL: target.url, CHAIN_API_URL: devnet.base, LOG_LEVEL: 'info' };
    const child = spawn(process.execPath, [BIN, ...args], { cwd: REPO_DIR, env });
    const ended = collect(child, 170_000);
    const pool = target.warehouse.pool;
    const stored = async () => Number((await pool.query<{ n: string }>('SELECT count(*) AS n FROM token_transfers')).rows[0]!.n);
    await waitFor(async () => (await stored()) >= 500, { what: 'some pages committed' });
    // every connection of the run ended, as a restart ends them (57P01), every quarter second until the run ends (the
    // test's own connections have an application_name of their own)
    let exited = false;
    const result = ended.finally(() => {
      exited = true;
    });
    let endedConnections = 0;
    let rounds = 0;
    while (!exited) {
      const { rows } = await pool.query<{ n: number }>(
        `SELECT count(pg_terminate_backend(pid))::int AS n FROM pg_stat_activity
         WHERE datname = current_database() AND application_name = 'erc20-etl'`,
      );
      endedConnections += rows[0]!.n;
      if (rows[0]!.n > 0) rounds++;
      await sleep(250);
    }
    const r = await result;
    expect(endedConnections).toBeGreaterThan(0);
    expect(rounds).toBeGreaterThanOrEqual(2);
    expect(r.stderr).not.toMatch(/Unhandled 'error' event/);
    expect(r.code, r.stderr.slice(-2000)).toBe(0);
    expect(r.stderr).toMatch(/trying again/);
    expect(diffTransfers(await warehouseTransfers(target.warehouse), datasetTransfers(dataset))).toMatchObject(EXACT);
    const runs = await pool.query<{ status: string; rows_inserted: string }>('SELECT status, rows_inserted::text FROM export_runs');
    expect(runs.rows).toEqual([{ status: 'succeeded', rows_inserted: String(dataset.transfers.length) }]);
    const headers = await pool.query<{ missing: string }>(
      'SELECT count(DISTINCT t.block_hash)::text AS missing FROM token_transfers t LEFT JOIN block_headers h ON h.hash = t.block_hash WHERE h.hash IS NULL OR NOT h.hash_verified',
    );
    expect(headers.rows[0]!.missing).toBe('0');
  }, 180_000);
});
