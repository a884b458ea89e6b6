import { describe, expect, it } from 'vitest';
import { datasetTransfers, job, runExport, warehouseTransfers } from './helpers/exporter.ts';
import { syntheticWorld } from './helpers/world.ts';

const OPTIONS = { seed: 47, blocks: 300, tokens: 2, transfers: 700, startBlock: 7_000_000 };
const LAST = OPTIONS.startBlock + OPTIONS.blocks - 1;
const RATE = 10;

describe('a requestsPerSecond limit shared through PostgreSQL', () => {
  // the server refuses what goes beyond RATE requests per second (after a burst of one second's worth)
  const world = syntheticWorld('shared_rate_limit', OPTIONS, { rateLimit: RATE });

  it('two runs at once, each allowed the whole limit, stay within it together', async () => {
    const { dataset, devnet, target } = world;
    const [a, b] = world.contracts();
    const runOf = (name: string, address: string) =>
      job(name, [{ address: address!, fromBlock: OPTIONS.startBlock, toBlock: LAST }], { pageSize: 25, concurrency: 2, requestsPerSecond: RATE });
    const started = Date.now();
    const [first, second] = await Promise.all([runExport(target.url, devnet.base, runOf('left', a!)), runExport(target.url, devnet.base, runOf('right', b!))]);
    const seconds = (Date.now() - started) / 1000;
    const stats = await devnet.stats();
    const requests = stats.getTokenTransfers + stats.rpcHttpRequests;
    // enough requests that two runs at RATE each would have gone past the burst
    expect(requests).toBeGreaterThan(3 * RATE);
    expect(stats.errors['429'] ?? 0).toBe(0);
    expect(first.totals.rateLimited + second.totals.rateLimited).toBe(0);
    // request starts spaced 1/RATE apart over both runs: the last one could not start before this
    expect(seconds).toBeGreaterThanOrEqual((requests - 1) / RATE - 0.5);
    expect(await warehouseTransfers(target.warehouse)).toEqual(datasetTransfers(dataset));
    // the schedule is keyed by a digest of the API's URL: the project id is not stored
    const keys = await target.warehouse.db.selectFrom('api_rate_limits').select('key').execute();
    expect(keys).toHaveLength(1);
    expect(keys[0]!.key).toMatch(/^api:[0-9a-f]{32}$/);
  });
});
