import { sql } from 'kysely';
import { pino } from 'pino';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { systemClock } from '../src/common/clock.ts';
import { createSourceCounters } from '../src/common/source-counters.ts';
import { parseApiUrl } from '../src/config/api-url.ts';
import type { TransferRecord } from '../src/dataset/types.ts';
import { createBloomBitsCache, missingFromBloom } from '../src/eth/logs-bloom.ts';
import { enrichRanges, type EnrichDeps } from '../src/pipeline/enrich.ts';
import { ChainDataError } from '../src/pipeline/errors.ts';
import { createHeaderPolicy } from '../src/pipeline/header-policy.ts';
import { createHeaderQueue } from '../src/pipeline/header-queue.ts';
import { createHttpClient, type HttpClient } from '../src/source/http-client.ts';
import { createRpcClient } from '../src/source/rpc-client.ts';
import { job, runExport } from './helpers/exporter.ts';
import { syntheticWorld } from './helpers/world.ts';

const OPTIONS = { seed: 43, blocks: 200, tokens: 3, transfers: 1500, startBlock: 7_000_000 };

/**
 * The bloom check of builder rows where their headers arrive, path by path: the header queue checks a committed
 * page's rows against a header it finds stored, or fetches (then with the rows an earlier run stored in the block),
 * and the enrichment of resumed ranges checks the stored rows of the blocks whose headers it fetches. A transfer
 * is moved into another block in the warehouse, as a run would have stored it from a page of the `wrong-block` kind.
 */
const key = (t: TransferRecord) => `${t.transactionHash}:${t.logIndex}`;
/** The synthetic chain's headers hash by the Ethereum rule. */
const chainOne = createHeaderPolicy({ name: 'header-blooms', chain: 1 }, pino({ level: 'silent' }));

describe('checking transfers against the logsBloom of their block’s header as it arrives', () => {
  const world = syntheticWorld('header_blooms', OPTIONS);
  let http: HttpClient;
  let deps: EnrichDeps;
  let counted = 0;
  /** A transfer, the same in another block whose bloom rules it out (a block with rows of other transfers), and that block's stored rows. */
  let moved: { transfer: TransferRecord; into: TransferRecord; blockRows: number };
  let nextRun = 1000;

  beforeAll(async () => {
    const { dataset, devnet, target } = world;
    await runExport(
      target.url,
      devnet.base,
      job(
        'header-blooms',
        world.contracts().map((address) => ({ address, fromBlock: OPTIONS.startBlock, toBlock: OPTIONS.startBlock + OPTIONS.blocks - 1 })),
      ),
    );
    const logger = pino({ level: 'silent' });
    http = createHttpClient({
      endpoint: parseApiUrl(devnet.base),
      config: { timeoutMs: 5000, connections: 4, maxResponseBytes: 8 << 20, retries: 2 },
      logger,
      clock: systemClock,
      counters: createSourceCounters(),
    });
    deps = {
      warehouse: target.warehouse,
      source: createRpcClient({ http, batchSize: 100 }),
      logger,
      clock: systemClock,
      metrics: {
        transfersBloomChecked: (_series, n) => {
          counted += n;
        },
      },
    };
    const bits = createBloomBitsCache();
    const blooms = new Map(dataset.headers.map((h) => [h.hash!, Buffer.from(h.logsBloom!.slice(2), 'hex')]));
    const transfer = dataset.transfers[0]!;
    const neighbour = dataset.transfers.find((t) => t.blockHash !== transfer.blockHash && missingFromBloom(blooms.get(t.blockHash)!, transfer, bits) !== undefined)!;
    const into = { ...transfer, blockHash: neighbour.blockHash, blockNumber: neighbour.blockNumber, blockTimestamp: neighbour.blockTimestamp };
    moved = { transfer, into, blockRows: dataset.transfers.filter((t) => t.blockHash === into.blockHash).length + 1 };
  });
  afterAll(async () => {
    await http?.close();
  });

  const db = () => world.target.warehouse.db;
  /** Stores the transfer as in `row`'s block, as an earlier run would have. */
  const store = (row: TransferRecord) =>
    sql`UPDATE token_transfers SET block_hash = ${row.blockHash}, block_number = ${row.blockNumber}, block_timestamp = ${row.blockTimestamp}
        WHERE transaction_hash = ${row.transactionHash} AND log_index = ${row.logIndex}`.execute(db());
  const forgetHeader = (hash: string) => sql`DELETE FROM block_headers WHERE hash = ${hash}`.execute(db());
  const headerStored = async (hash: string) => (await db().selectFrom('block_headers').select('hash').where('hash', '=', hash).execute()).length === 1;
  const queue = () => createHeaderQueue(deps, { job: 'header-blooms', runId: String(nextRun++), headers: chainOne, batchSize: 100, concurrency: 2 });
  /** What the failure must say: the transfer, in the block it was put in. */
  const naming = () =>
    new RegExp(
      `transaction ${moved.transfer.transactionHash}, log ${moved.transfer.logIndex}, contract ${moved.transfer.contractAddress}, ` +
        `block ${moved.into.blockNumber} \\(${moved.into.blockHash}\\): the block header's logsBloom rules out its (from|to) topic`,
    );
  const failure = async (work: Promise<unknown>): Promise<unknown> =>
    work.then(
      () => undefined,
      (err: unknown) => err,
    );

  it('a page row checked against a header found stored', async () => {
    counted = 0;
    const headers = queue();
    await headers.offer([moved.into], moved.transfer.contractAddress);
    const error = await failure(headers.drain());
    expect(error).toBeInstanceOf(ChainDataError);
    expect((error as Error).message).toMatch(naming());
    expect(headers.checked).toBe(1);
    expect(counted).toBe(1);
    // the truth passes
    const again = queue();
    await again.offer([moved.transfer], moved.transfer.contractAddress);
    await again.drain();
    expect(again.checked).toBe(1);
  });

  it('a page row checked against a header fetched for it, which is then not stored', async () => {
    await store(moved.into);
    await forgetHeader(moved.into.blockHash);
    counted = 0;
    const headers = queue();
    await headers.offer([moved.into], moved.transfer.contractAddress);
    const error = await failure(headers.drain());
    expect((error as Error).message).toMatch(naming());
    expect(await headerStored(moved.into.blockHash)).toBe(false);
    // the page's row alone: rows earlier runs stored in the block are not read back
    expect(headers.checked).toBe(1);
    expect(counted).toBe(1);
  });

  it('a page’s row is checked alone when its block’s header is fetched; enriching resumed ranges checks every stored row of the blocks it fetches headers for', async () => {
    // the moved row is stored, its block has no header: a page row of the same block passes, and the header is stored
    const other = world.dataset.transfers.find((t) => t.blockHash === moved.into.blockHash && key(t) !== key(moved.transfer))!;
    const headers = queue();
    await headers.offer([other], other.contractAddress);
    await headers.drain();
    expect(headers.checked).toBe(1);
    expect(await headerStored(moved.into.blockHash)).toBe(true);
    await forgetHeader(moved.into.blockHash);
    // a run that stopped before it fetched the header left the moved row unchecked: the run that fetches it checks it
    const ranges = world.contracts().map((contract) => ({ contract, fromBlock: OPTIONS.startBlock, toBlock: OPTIONS.startBlock + OPTIONS.blocks - 1 }));
    const failed = await enrichRanges(deps, { job: 'header-blooms', runId: String(nextRun++), headers: chainOne, concurrency: 2, ranges }).catch((e: unknown) => e);
    expect(failed).toBeInstanceOf(ChainDataError);
    expect((failed as Error).message).toContain(`transaction ${moved.transfer.transactionHash}, log ${moved.transfer.logIndex}`);
    // the block keeps no header: the next run checks again, until the row is read again from a source that serves it right
    expect(await headerStored(moved.into.blockHash)).toBe(false);
  });
});
