import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { copyBackBaseline, readServerSettings, SHOWN_SETTINGS } from '../bench/first-load.ts';
import { readDataset } from '../src/dataset/read.ts';
import type { Dataset } from '../src/dataset/types.ts';
import { copyTransfers } from '../src/warehouse/copy.ts';
import { insertHeaders } from '../src/warehouse/headers.ts';
import { FIXTURE_DIR } from './helpers/fixtures.ts';
import { migratedWarehouse } from './helpers/exporter.ts';

// the bench's plain-COPY baseline of issue 18 against a real PostgreSQL: the rows a warehouse holds, copied back in
describe('the first-load bench', () => {
  let target: Awaited<ReturnType<typeof migratedWarehouse>>;
  let dataset: Dataset;
  let tmp: string;
  beforeAll(async () => {
    dataset = await readDataset(FIXTURE_DIR);
    target = await migratedWarehouse('bench_first_load');
    tmp = await mkdtemp(join(tmpdir(), 'erc20-etl-test-'));
    const client = await target.warehouse.pool.connect();
    try {
      await copyTransfers(client, 'token_transfers', dataset.transfers, ['chain_id', 'inserted_by_run', 'updated_by_run'], '1\t1\t1');
    } finally {
      client.release();
    }
    await insertHeaders(
      target.warehouse.db,
      1,
      dataset.headers.map((header) => ({ header, extra: null, hashVerified: true })),
      '1',
    );
  });
  afterAll(async () => {
    await rm(tmp, { recursive: true, force: true });
    await target.drop();
  });

  it('copies every transfer and header the warehouse holds into copies of the two tables, and drops the copies', async () => {
    const copy = await copyBackBaseline(target.url, tmp);
    expect(copy.transfers).toBe(dataset.transfers.length);
    expect(copy.headers).toBe(dataset.headers.length);
    expect(copy.seconds).toBeGreaterThan(0);
    const left = await target.warehouse.pool.query("SELECT tablename FROM pg_tables WHERE tablename LIKE 'bench_%'");
    expect(left.rows).toEqual([]);
  });

  it("reads the server's version and the settings a bulk load turns on from the server itself", async () => {
    const server = await readServerSettings(target.url);
    const shown = await target.warehouse.pool.query<{ v: string; w: string }>("SELECT current_setting('server_version') AS v, current_setting('max_wal_size') AS w");
    expect(server.version).toBe(shown.rows[0]!.v);
    expect(Object.keys(server.settings).sort()).toEqual([...SHOWN_SETTINGS].sort());
    expect(server.settings.max_wal_size).toBe(shown.rows[0]!.w);
    for (const name of SHOWN_SETTINGS) expect(server.settings[name]).toMatch(/\S/);
  });
});
