import { describe, expect, it } from 'vitest';
import { sql } from 'kysely';
import { datasetTransfers, job, runExport, warehouseTransfers } from './helpers/exporter.ts';
import { syntheticWorld } from './helpers/world.ts';

const OPTIONS = { seed: 11, blocks: 400, tokens: 4, transfers: 3000, startBlock: 2_000_000 };
const PAGE_SIZE = 100;
const COMMIT_ROWS = 800;
const CONCURRENCY = 4;

describe('a first load of several chunks', () => {
  const world = syntheticWorld('first_load_copies', OPTIONS);

  it('COPYs four chunks through two lanes, side by side, each transaction holding the pages of its chunks up to its share of commitRows', async () => {
    const { dataset, devnet, target } = world;
    const contracts = world.contracts();
    expect(contracts).toHaveLength(4);
    const config = job(
      'copies',
      contracts.map((address) => ({ address, fromBlock: OPTIONS.startBlock, toBlock: OPTIONS.startBlock + OPTIONS.blocks - 1 })),
      { pageSize: PAGE_SIZE, commitRows: COMMIT_ROWS, concurrency: CONCURRENCY },
    );
    await runExport(target.url, devnet.base, config);
    expect(await warehouseTransfers(target.warehouse)).toEqual(datasetTransfers(dataset));

    // rows inserted by one transaction share its xmin
    const { rows } = await sql<{ tx: string; contracts: number; rows: number }>`
      SELECT xmin::text AS tx, count(DISTINCT contract_address)::int AS contracts, count(*)::int AS rows
      FROM token_transfers GROUP BY xmin::text ORDER BY min(xmin::text::bigint)`.execute(target.warehouse.db);
    // a lane's transaction holds the pages of the chunks that share it: two of the four at a time, never more
    expect(Math.max(...rows.map((r) => r.contracts))).toBe(2);
    // it commits once it holds its share (800 / 2 lanes), so never more than a page beyond it
    const share = COMMIT_ROWS / 2;
    expect(Math.max(...rows.map((r) => r.rows))).toBeLessThan(share + PAGE_SIZE);
    expect(rows.filter((r) => r.rows >= share).length).toBeGreaterThan(0);
    // the chunks were loaded at once: in the order the transactions began, their contracts take turns
    const order = await sql<{ contract: string }>`
      SELECT min(contract_address) AS contract FROM token_transfers GROUP BY xmin::text ORDER BY min(xmin::text::bigint)`.execute(target.warehouse.db);
    const turns = order.rows.filter((r, i) => i > 0 && r.contract !== order.rows[i - 1]!.contract).length;
    expect(turns).toBeGreaterThan(contracts.length);
  });
});
