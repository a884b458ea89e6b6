import { afterAll, beforeAll, expect, it } from 'vitest';
import type { Dataset } from '../src/dataset/types.ts';
import type { DevnetStats } from '../src/devnet/stats.ts';
import { generateSyntheticDataset, SYNTHETIC_DEFAULTS } from '../src/devnet/synthetic.ts';
import { contractsOf } from './helpers/chaos.ts';
import { startDevnet, type RunningDevnet } from './helpers/devnet.ts';
import { job, migratedWarehouse, runExport } from './helpers/exporter.ts';

// A node job's re-read of blocks the warehouse holds in full sizes each eth_getLogs call by the rows stored there,
// not by the logs per block of the answers before it. The chain: blocks holding from none to a few hundred of one
// contract's transfers (the synthetic chain's hot blocks), read under a cap of 500 logs an answer, where the answers
// alone mislead call after call.

const OPTIONS = { ...SYNTHETIC_DEFAULTS, seed: 3, blocks: 5_000, tokens: 3, transfers: 50_000 };
const CAP = 500;

let dataset: Dataset;
const servers: RunningDevnet[] = [];
const targets: Awaited<ReturnType<typeof migratedWarehouse>>[] = [];

beforeAll(() => {
  dataset = generateSyntheticDataset(OPTIONS);
});
afterAll(async () => {
  for (const target of targets) await target.drop();
  for (const devnet of servers) await devnet.close();
});

/** The server's eth_getLogs counts since its last reset (which this does): calls answered, refused for size, and logs served. */
async function logsCalls(devnet: RunningDevnet): Promise<{ answered: number; refused: number; logs: number }> {
  const stats: DevnetStats = await devnet.stats();
  const outcomes = stats.rpcOutcomes['eth_getLogs'];
  await fetch(`${devnet.origin}/__control/reset-stats`, { method: 'POST' });
  return { answered: outcomes?.answered ?? 0, refused: outcomes?.refused['resultsCap'] ?? 0, logs: stats.logsServed };
}

// Infura's refusals suggest a range, Arbitrum's state the cap alone: a refused call is asked again over half its blocks,
// unless the rows stored show that half is still too many
for (const style of ['infura', 'arbitrum'] as const) {
  it(`a second run over the same blocks sizes its calls by the rows stored: refused once at most, its answers half full or more (${style})`, async () => {
    const devnet = await startDevnet(dataset, { logsLimits: { maxResults: CAP, style } });
    servers.push(devnet);
    const target = await migratedWarehouse(`node_rereads_${style}`);
    targets.push(target);
    const toBlock = OPTIONS.startBlock + OPTIONS.blocks - 1;
    const config = job(
      'rereads',
      contractsOf(dataset).map((address) => ({ address, fromBlock: OPTIONS.startBlock, toBlock })),
      { source: 'node', concurrency: 4 },
    );
    const first = await runExport(target.url, devnet.base, config);
    expect(first.totals.rowsInserted).toBe(OPTIONS.transfers);
    const firstCalls = await logsCalls(devnet);
    // sized by the answers alone, the first run is refused call after call
    expect(firstCalls.refused, JSON.stringify(firstCalls)).toBeGreaterThan(5);

    const second = await runExport(target.url, devnet.base, config);
    expect(second.totals).toMatchObject({ rowsInserted: 0, rowsUpdated: 0, rowsRemoved: 0, rowsUnchanged: OPTIONS.transfers });
    const secondCalls = await logsCalls(devnet);
    // at most its first call, sized for the 10,000 logs assumed before the node has stated its cap, is refused
    expect(secondCalls.refused, JSON.stringify(secondCalls)).toBeLessThanOrEqual(1);
    expect(secondCalls.logs / secondCalls.answered, JSON.stringify(secondCalls)).toBeGreaterThanOrEqual(CAP / 2);

    // blocks no job has read in full are sized by the answers, as a first run's: without the coverage, refused again
    await target.warehouse.db.deleteFrom('export_coverage').execute();
    const third = await runExport(target.url, devnet.base, config);
    expect(third.totals).toMatchObject({ rowsInserted: 0, rowsUpdated: 0, rowsRemoved: 0, rowsUnchanged: OPTIONS.transfers });
    const thirdCalls = await logsCalls(devnet);
    expect(thirdCalls.refused, JSON.stringify(thirdCalls)).toBeGreaterThan(5);

    // rows deleted since their blocks were read in full: a refusal shows the rows stored are too few, and the answers
    // size that contract's calls from there on, refused about as often as a first run's (sized by the rows left,
    // nearly every call of it was refused)
    const busiest = await target.warehouse.db
      .selectFrom('token_transfers')
      .select(['contract_address', (eb) => eb.fn.countAll<string>().as('rows')])
      .groupBy('contract_address')
      .orderBy('rows', 'desc')
      .executeTakeFirstOrThrow();
    await target.warehouse.db.deleteFrom('token_transfers').where('contract_address', '=', busiest.contract_address).execute();
    const fourth = await runExport(target.url, devnet.base, config);
    expect(fourth.totals).toMatchObject({ rowsInserted: Number(busiest.rows), rowsUpdated: 0, rowsRemoved: 0, rowsUnchanged: OPTIONS.transfers - Number(busiest.rows) });
    const fourthCalls = await logsCalls(devnet);
    expect(fourthCalls.refused, JSON.stringify({ firstCalls, fourthCalls })).toBeLessThan(firstCalls.refused * 2);
  }, 120_000);
}
