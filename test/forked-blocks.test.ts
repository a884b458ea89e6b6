import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { Dataset } from '../src/dataset/types.ts';
import { generateSyntheticDataset } from '../src/devnet/synthetic.ts';
import { diffTransfers, EXACT, triggerReorg, truthTransfers } from './helpers/chaos.ts';
import { runCli } from './helpers/cli.ts';
import { startDevnet, type RunningDevnet } from './helpers/devnet.ts';
import { migratedWarehouse, warehouseTransfers } from './helpers/exporter.ts';

// Rows of two forks side by side: one contract read before a reorg, another over the same blocks after it. Nothing the
// runs read again covers the first contract's old rows, so the run that finds two canonical headers at one height
// says so, with the backfill that reads them again; that backfill leaves the truth.

let dataset: Dataset;
let devnet: RunningDevnet;
let target: Awaited<ReturnType<typeof migratedWarehouse>>;

beforeAll(async () => {
  dataset = generateSyntheticDataset({ seed: 23, blocks: 300, tokens: 2, transfers: 3000, startBlock: 1000 });
  devnet = await startDevnet(dataset);
  target = await migratedWarehouse('forked_blocks');
});
afterAll(async () => {
  await devnet?.close();
  await target?.drop();
});

interface ForkWarning {
  msg: string;
  fromBlock: number;
  toBlock: number;
  blocks: number;
}

const forkWarnings = (stderr: string): ForkWarning[] =>
  stderr
    .split('\n')
    .filter((l) => l.startsWith('{'))
    .map((l) => JSON.parse(l) as ForkWarning)
    .filter((l) => l.msg.includes('hold transfers of two forks'));

describe('transfers of two forks at the same heights', () => {
  it('are named by the run that finds them, with the backfill that reads them again; after it, the warehouse holds the truth', async () => {
    const [a, b] = [...new Set(dataset.transfers.map((t) => t.contractAddress))].sort() as [string, string];
    const env = { DATABASE_URL: target.url, CHAIN_API_URL: devnet.base };
    const backfill = (contracts: string[], from: number, to: number) =>
      runCli(['backfill', '--chain', '1', ...contracts.flatMap((c) => ['--contract', c]), '--from', String(from), '--to', String(to)], { env });

    const first = await backfill([a], 1000, 1299);
    expect(first.code, first.stderr).toBe(0);
    expect(forkWarnings(first.stderr)).toEqual([]);
    // the newest 40 blocks replaced; contract b is then read over all of them
    await triggerReorg(devnet.origin, 40);
    const second = await backfill([b], 1000, 1299);
    expect(second.code, second.stderr).toBe(0);
    const [warning, ...more] = forkWarnings(second.stderr);
    expect(more).toEqual([]);
    expect(warning).toBeDefined();
    expect(warning!.fromBlock).toBeGreaterThanOrEqual(1260);
    expect(warning!.toBlock).toBeLessThanOrEqual(1299);
    expect(warning!.blocks).toBeGreaterThan(0);
    const suggested = /erc20-etl backfill (--chain 1 (?:--contract 0x[0-9a-f]{40} )+--from \d+ --to \d+)/.exec(warning!.msg);
    expect(suggested, warning!.msg).not.toBeNull();
    const args = suggested![1]!.split(' ');
    expect(args).toContain(a);

    // what it says to run
    const repaired = await runCli(['backfill', ...args], { env });
    expect(repaired.code, repaired.stderr).toBe(0);
    expect(forkWarnings(repaired.stderr)).toEqual([]);
    const truth = (await truthTransfers(devnet.origin)).filter((t) => t.blockNumber <= 1299);
    expect(diffTransfers(await warehouseTransfers(target.warehouse), truth)).toMatchObject(EXACT);
    const twice = await target.warehouse.pool.query<{ n: string }>(
      'SELECT count(*)::text AS n FROM (SELECT number FROM block_headers WHERE canonical GROUP BY number HAVING count(*) > 1) AS f',
    );
    expect(twice.rows[0]!.n).toBe('0');
  }, 120_000);
});
