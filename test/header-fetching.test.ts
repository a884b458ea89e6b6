import { pino } from 'pino';
import { describe, expect, it } from 'vitest';
import { systemClock } from '../src/common/clock.ts';
import { generateSyntheticDataset } from '../src/devnet/synthetic.ts';
import { createHeaderPolicy } from '../src/pipeline/header-policy.ts';
import { createHeaderQueue, type HeaderQueue } from '../src/pipeline/header-queue.ts';
import { parseApiUrl } from '../src/config/api-url.ts';
import { createSourceCounters } from '../src/common/source-counters.ts';
import { createHttpClient } from '../src/source/http-client.ts';
import { createRpcClient } from '../src/source/rpc-client.ts';
import { startDevnet } from './helpers/devnet.ts';
import { job, migratedWarehouse, runExport } from './helpers/exporter.ts';
import { syntheticWorld } from './helpers/world.ts';
import { insertHeaders } from '../src/warehouse/headers.ts';

const OPTIONS = { seed: 31, blocks: 900, tokens: 4, transfers: 6000, startBlock: 3_000_000 };
const LAST = OPTIONS.startBlock + OPTIONS.blocks - 1;

describe('fetching headers while reading pages', () => {
  const world = syntheticWorld('header_fetching', OPTIONS);
  const contracts = () => world.contracts();
  const distinctBlocks = (from: number, to: number) => new Set(world.dataset.transfers.filter((t) => t.blockNumber >= from && t.blockNumber <= to).map((t) => t.blockHash)).size;
  const backfill = (from: number, to: number, pageSize: number) =>
    job(
      'headers',
      contracts().map((address) => ({ address, fromBlock: from, toBlock: to })),
      { pageSize, concurrency: 3 },
    );
  const reset = () => fetch(`${world.devnet.origin}/__control/reset-stats`, { method: 'POST' });
  /** A warehouse of the test's own, and a header queue over the reference server, each with the options given; closed after `use`. */
  async function withQueue(
    name: string,
    o: { batchSize: number; connections: number; concurrency: number; remembered?: number },
    use: (t: { own: Awaited<ReturnType<typeof migratedWarehouse>>; queue: (runId: string) => HeaderQueue }) => Promise<void>,
  ): Promise<void> {
    const own = await migratedWarehouse(`header_fetching_${name}`);
    const logger = pino({ level: 'silent' });
    const http = createHttpClient({
      endpoint: parseApiUrl(world.devnet.base),
      config: { timeoutMs: 5000, connections: o.connections, maxResponseBytes: 8 << 20, retries: 2 },
      logger,
      clock: systemClock,
      counters: createSourceCounters(),
    });
    const queue = (runId: string) =>
      createHeaderQueue(
        { warehouse: own.warehouse, source: createRpcClient({ http, batchSize: o.batchSize }), logger, clock: systemClock },
        {
          job: name,
          runId,
          headers: createHeaderPolicy({ name, chain: 1 }, logger),
          batchSize: o.batchSize,
          concurrency: o.concurrency,
          ...(o.remembered !== undefined && { remembered: o.remembered }),
        },
      );
    try {
      await use({ own, queue });
    } finally {
      await http.close();
      await own.drop();
    }
  }

  it('asks for each new block once, in full batches of 100 but the last', async () => {
    // the lower half first: its headers are stored, so the whole range then asks only for the upper half's
    const middle = OPTIONS.startBlock + 450;
    // both halves need several POSTs, so the batching shows
    expect(Math.min(distinctBlocks(OPTIONS.startBlock, middle), distinctBlocks(middle + 1, LAST))).toBeGreaterThan(100);
    for (const [from, to, pageSize, expected] of [
      [OPTIONS.startBlock, middle, 37, distinctBlocks(OPTIONS.startBlock, middle)],
      [OPTIONS.startBlock, LAST, 100, distinctBlocks(middle + 1, LAST)],
      [OPTIONS.startBlock, LAST, 1000, 0],
    ] as const) {
      await reset();
      const summary = await runExport(world.target.url, world.devnet.base, backfill(from, to, pageSize));
      const stats = await world.devnet.stats();
      expect(stats.rpcCalls['erigon_getHeaderByHash'] ?? 0, `blocks ${from}–${to}`).toBe(expected);
      // one POST asks which chain the endpoint serves, one asks for the chain head; the others carry the headers
      expect(stats.rpcHttpRequests - 2).toBe(Math.ceil(expected / 100));
      expect(summary.totals.headersFetched).toBe(expected);
    }
    const stored = await world.target.warehouse.db.selectFrom('block_headers').select('hash').execute();
    expect(new Set(stored.map((h) => h.hash))).toEqual(new Set(world.dataset.transfers.map((t) => t.blockHash)));
  });
  it('asks once for a block whose header is on its way when other contracts reach it after the queue forgot it', async () => {
    await withQueue('pending', { batchSize: 400, connections: 4, concurrency: 2, remembered: 8 }, async ({ queue }) => {
      await reset();
      // the contracts' pages, newest first, offered in turns: each contract reaches a block at its own pace,
      // long after the queue's memory (8 blocks here) has moved on, while the block's batch is not full yet
      const byContract = contracts().map((c) =>
        world.dataset.transfers.filter((t) => t.contractAddress === c).sort((a, b) => b.blockNumber - a.blockNumber || b.logIndex - a.logIndex),
      );
      const pending = queue('1');
      for (let start = 0; byContract.some((rows) => start < rows.length); start += 50) {
        for (const [i, rows] of byContract.entries()) if (start < rows.length) await pending.offer(rows.slice(start, start + 50), contracts()[i]!);
      }
      const stored = await pending.drain();
      const expected = new Set(world.dataset.transfers.map((t) => t.blockHash)).size;
      expect(stored).toBe(expected);
      expect((await world.devnet.stats()).rpcCalls['erigon_getHeaderByHash']).toBe(expected);
    });
  });

  it('fetches the blocks a source fetched headers for without looking them up, and stores each header once', async () => {
    await withQueue('fetched', { batchSize: 100, connections: 2, concurrency: 2 }, async ({ own, queue }) => {
      const contract = contracts()[0]!;
      const rows = world.dataset.transfers.filter((t) => t.contractAddress === contract).sort((a, b) => b.blockNumber - a.blockNumber || b.logIndex - a.logIndex);
      const hashes = [...new Set(rows.map((t) => t.blockHash))];
      // one of the blocks is stored already (another run stored it after the source looked)
      const storedFirst = world.dataset.headers.find((h) => h.hash === hashes[3])!;
      expect(await insertHeaders(own.warehouse.db, 1, [{ header: storedFirst, extra: null, hashVerified: true }], '1')).toBe(1);
      // told the source fetched them all: none is looked up, so the stored one is asked for too, and not stored twice
      await reset();
      const told = queue('2');
      await told.offer(rows, contract, { bloomProven: true, fetched: new Set(hashes) });
      expect(await told.drain()).toBe(hashes.length - 1);
      expect((await world.devnet.stats()).rpcCalls['erigon_getHeaderByHash']).toBe(hashes.length);
      const stored = await own.warehouse.db.selectFrom('block_headers').select(['hash', 'fetched_by_run']).execute();
      expect(stored.map((h) => h.hash).sort()).toEqual([...hashes].sort());
      expect(stored.find((h) => h.hash === storedFirst.hash)!.fetched_by_run).toBe('1');
      // not told: every block is looked up, and those stored are not asked for
      await reset();
      const looked = queue('3');
      await looked.offer(rows, contract, { bloomProven: true });
      expect(await looked.drain()).toBe(0);
      expect((await world.devnet.stats()).rpcCalls['erigon_getHeaderByHash'] ?? 0).toBe(0);
    });
  });

  it('fails naming the block when rows put a stored block at another number, rather than taking its stored header', async () => {
    await withQueue('misnumbered', { batchSize: 100, connections: 2, concurrency: 1 }, async ({ own, queue }) => {
      const [row] = world.dataset.transfers;
      const header = world.dataset.headers.find((h) => h.hash === row!.blockHash)!;
      await insertHeaders(own.warehouse.db, 1, [{ header, extra: null, hashVerified: true }], '1');
      const misnumbered = queue('2');
      const moved = { ...row!, blockNumber: row!.blockNumber + 1 };
      await misnumbered.offer([moved], moved.contractAddress);
      await expect(misnumbered.drain()).rejects.toThrow(new RegExp(`block ${moved.blockNumber} \\(${row!.blockHash}\\), header\\.number: expected ${moved.blockNumber}`));
    });
  });

  it('keeps batches full when many chunks offer pages at once', async () => {
    const many = await migratedWarehouse('header_fetching_many');
    // thousands of blocks, and every answer takes a while: pages keep coming while the allowed batches are in flight
    const wide = generateSyntheticDataset({ seed: 37, blocks: 8000, tokens: 2, transfers: 12_000, startBlock: 4_000_000 });
    const slow = await startDevnet(wide, { faults: { latencyMs: [5, 25] } });
    try {
      const addresses = [...new Set(wide.transfers.map((t) => t.contractAddress))];
      const config = job(
        'headers-many',
        addresses.map((address) => ({ address, fromBlock: 4_000_000, toBlock: 4_007_999 })),
        {
          pageSize: 200,
          concurrency: 8,
        },
      );
      const summary = await runExport(many.url, slow.base, config);
      const expected = new Set(wide.transfers.map((t) => t.blockHash)).size;
      expect(expected).toBeGreaterThan(2000);
      const stats = await slow.stats();
      expect(stats.rpcCalls['erigon_getHeaderByHash']).toBe(expected);
      expect(stats.rpcHttpRequests - 2).toBe(Math.ceil(expected / 100));
      expect(summary.totals.headersFetched).toBe(expected);
    } finally {
      await slow.close();
      await many.drop();
    }
  });
});
