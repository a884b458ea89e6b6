import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import pino from 'pino';
import { systemClock } from '../src/common/clock.ts';
import type { TransferRecord } from '../src/dataset/types.ts';
import { readChunk, UNANNOUNCED_ROWS } from '../src/pipeline/read-chunk.ts';
import type { TransfersPage } from '../src/source/transfers-page.ts';
import { createRange } from '../src/warehouse/ranges.ts';
import { openCopyLanes } from '../src/warehouse/copy-lanes.ts';
import { migratedWarehouse } from './helpers/exporter.ts';

const RUN = '1';
const CONTRACT = `0x${'ab'.repeat(20)}`;
// pages as large as a node source's answers: a quarter of the rows a chunk may hold unannounced
const PAGE_ROWS = UNANNOUNCED_ROWS / 4;
const PAGES = 12;
const FIRST_BLOCK = 1_000_000;
const LAST_BLOCK = FIRST_BLOCK + PAGES * PAGE_ROWS - 1;

const hex = (n: number, digits: number) => `0x${n.toString(16).padStart(digits, '0')}`;
/** One transfer in each block, newest first, as a source pages them. */
const row = (block: number): TransferRecord => ({
  contractAddress: CONTRACT,
  fromAddress: hex(block, 40),
  toAddress: hex(block + 1, 40),
  value: '1000000000000000000',
  blockHash: hex(block, 64),
  blockNumber: block,
  blockTimestamp: new Date(1_700_000_000_000 + block * 12_000).toISOString(),
  transactionHash: hex(block, 64),
  transactionIndex: 0,
  logIndex: 0,
});

/** Page `i` (0: the newest blocks) of the chunk. */
function page(i: number): TransfersPage {
  const top = LAST_BLOCK - i * PAGE_ROWS;
  const transfers = Array.from({ length: PAGE_ROWS }, (_, k) => row(top - k));
  return {
    token: { contractAddress: CONTRACT, name: null, symbol: null, decimals: null },
    count: transfers.length,
    nextPageKey: i + 1 < PAGES ? `page-${i + 1}` : undefined,
    transfers,
    warnings: [],
  };
}

describe('a fresh chunk whose committed pages wait to be announced', () => {
  let target: Awaited<ReturnType<typeof migratedWarehouse>>;
  beforeAll(async () => {
    target = await migratedWarehouse('read_ahead');
  });
  afterAll(async () => {
    await target?.drop();
  });

  it('stops reading once its unannounced pages hold its share of rows, and stores every row once they are announced', async () => {
    await target.warehouse.pool.query(`INSERT INTO export_runs (id, job, command, contracts, chain_id) VALUES ($1, 'ahead', 'run', '{}', 1)`, [RUN]);
    const range = await createRange(target.warehouse.db, {
      chainId: 1,
      job: 'ahead',
      contract: CONTRACT,
      fromBlock: FIRST_BLOCK,
      toBlock: LAST_BLOCK,
      runId: RUN,
      chunks: [{ fromBlock: FIRST_BLOCK, toBlock: LAST_BLOCK }],
    });
    const chunk = range.chunks[0]!;
    chunk.fresh = true;

    let asked = 0;
    // the least a chunk reads before it waits (four pages hold UNANNOUNCED_ROWS), and one page more than it may read
    let readEnough!: () => void;
    const enough = new Promise<void>((resolve) => {
      readEnough = resolve;
    });
    let readTooFar!: () => void;
    const tooFar = new Promise<void>((resolve) => {
      readTooFar = resolve;
    });
    const source = {
      fetchPage: async (query: { pageKey?: string }) => {
        asked++;
        if (asked === 4) readEnough();
        if (asked === 7) readTooFar();
        return page(query.pageKey === undefined ? 0 : Number(query.pageKey.slice('page-'.length)));
      },
    };
    // the announcements stall (as when each page's headers take round trips to a distant PostgreSQL) until released
    let release!: () => void;
    const stalled = new Promise<void>((resolve) => {
      release = resolve;
    });
    const announced: number[] = [];
    const logger = pino({ level: 'silent' });
    const lanes = openCopyLanes(target.warehouse, { logger, clock: systemClock }, { commitRows: PAGE_ROWS, concurrency: 1, maxAgeMs: 1_000 });
    const reading = readChunk(
      { warehouse: target.warehouse, source, logger, clock: systemClock, lanes },
      { job: 'ahead', runId: RUN, contract: CONTRACT, pageSize: PAGE_ROWS, chunk },
      {
        onPage: async (counts) => {
          await stalled;
          announced.push(counts.inserted);
        },
      },
    );
    try {
      // reading goes on until the unannounced pages hold the chunk's share of rows; then it waits, however long
      await enough;
      await Promise.race([tooFar, new Promise((resolve) => setTimeout(resolve, 3_000))]);
      expect(announced).toEqual([]);
      // the pages written (four hold UNANNOUNCED_ROWS, a fifth waits for the oldest's announcement), and the next one
      // fetched meanwhile
      expect(asked).toBeLessThanOrEqual(6);
    } finally {
      release();
    }
    await reading;
    expect(asked).toBe(PAGES);
    expect(announced).toEqual(Array.from({ length: PAGES }, () => PAGE_ROWS));
    // committed by the chunk itself before it ended, not by the lanes' close
    const { rows } = await target.warehouse.pool.query<{ n: number; first: string; last: string }>(
      'SELECT count(*)::int AS n, min(block_number)::text AS first, max(block_number)::text AS last FROM token_transfers',
    );
    expect(rows[0]).toEqual({ n: PAGES * PAGE_ROWS, first: String(FIRST_BLOCK), last: String(LAST_BLOCK) });
    await lanes.close();
  });
});
