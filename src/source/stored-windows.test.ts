import { describe, expect, it } from 'vitest';
import { rowsUpTo } from './stored-logs.ts';
import { createStoredWindows, type StoredRowsReader } from './stored-windows.ts';

const USDC = '0xa0b86991c6218b36c1d19d4a2e9eb0ce3606eb48';
const DAI = '0x6b175474e89094c44da98b954eedeac495271d0f';

/** A warehouse holding `perBlock(b)` rows in each block of [from, to], read in full there; what it was asked is kept in `asked`. */
function reader(from: number, to: number, perBlock: (block: number) => number) {
  const asked: { coverage: number; counts: { fromBlock: number; toBlock: number; limit: number }[] } = { coverage: 0, counts: [] };
  const r: StoredRowsReader = {
    async coverage(q) {
      asked.coverage++;
      let rows = 0;
      for (let b = Math.max(from, q.fromBlock); b <= Math.min(to, q.toBlock); b++) rows += perBlock(b);
      return from <= q.toBlock && q.fromBlock <= to
        ? { covered: [{ fromBlock: from, toBlock: to }], rows, blocks: Math.min(to, q.toBlock) - Math.max(from, q.fromBlock) + 1 }
        : undefined;
    },
    async counts(q) {
      asked.counts.push({ fromBlock: q.fromBlock, toBlock: q.toBlock, limit: q.limit });
      const blocks: number[] = [];
      for (let b = q.toBlock; b >= q.fromBlock && blocks.length < q.limit; b--) if (perBlock(b) > 0) blocks.push(b);
      return { blocks, rows: blocks.map(perBlock) };
    },
  };
  return { reader: r, asked };
}

describe('createStoredWindows', () => {
  const query = { contract: USDC, fromBlock: 0, toBlock: 999_999 };

  it('reads the coverage once, then a window of about 16 calls’ worth of rows by the rows per block it records', async () => {
    const { reader: r, asked } = reader(0, 999_999, () => 10);
    const stored = createStoredWindows({ reader: r });
    await stored.ready(query, 999_999, 7000);
    // 16 × 7,000 rows at 10 a block
    expect(asked.counts).toEqual([{ fromBlock: 988_800, toBlock: 999_999, limit: 16_384 }]);
    const [window] = stored.windows([query])!;
    expect(window).toMatchObject({ fromBlock: 988_800, toBlock: 999_999, covered: [{ fromBlock: 0, toBlock: 999_999 }] });
    expect(rowsUpTo(window!, 999_999)).toBe(112_000);
    // pages further down the window read nothing more
    await stored.ready(query, 995_000, 7000);
    expect(asked).toMatchObject({ coverage: 1, counts: [{ fromBlock: 988_800 }] });
  });

  it('reads the next window from the top down once fewer than 4 calls’ worth are left below it, by the rows it found', async () => {
    // the coverage says 1 row a block, the blocks hold 10 from 900,000 on
    const { reader: r, asked } = reader(0, 999_999, (b) => (b >= 900_000 ? 10 : 1));
    const stored = createStoredWindows({ reader: r });
    await stored.ready(query, 999_999, 7000);
    // 16 × 7,000 rows at 1.9 a block (the coverage's 1,900,000 rows in 1,000,000 blocks)
    expect(asked.counts).toEqual([{ fromBlock: 941_052, toBlock: 999_999, limit: 16_384 }]);
    // cut at 16,384 blocks with rows: the window starts at the oldest counted
    expect(stored.windows([query])![0]!.fromBlock).toBe(983_616);
    // 2,800 blocks left from 986,415 down: 28,000 rows, 4 calls' worth
    await stored.ready(query, 986_415, 7000);
    expect(asked.counts).toHaveLength(1);
    await stored.ready(query, 986_414, 7000);
    // the window just read held 10 rows a block: the next is sized by that
    expect(asked.counts[1]).toEqual({ fromBlock: 975_215, toBlock: 986_414, limit: 16_384 });
    expect(stored.windows([query])![0]!.fromBlock).toBe(975_215);
  });

  it('spans at most 4 times the blocks of the window before, however quiet that one was', async () => {
    // the coverage says 10 rows a block; the blocks hold none
    const { reader: r, asked } = reader(0, 999_999, () => 0);
    const dense: StoredRowsReader = { ...r, coverage: async () => ({ covered: [{ fromBlock: 0, toBlock: 999_999 }], rows: 10_000_000, blocks: 1_000_000 }) };
    const stored = createStoredWindows({ reader: dense });
    await stored.ready(query, 999_999, 7000);
    await stored.ready(query, 999_998, 7000);
    expect(asked.counts).toEqual([
      { fromBlock: 988_800, toBlock: 999_999, limit: 16_384 },
      { fromBlock: 955_199, toBlock: 999_998, limit: 16_384 },
    ]);
  });

  it('reads no rows while the query’s top was not read in full', async () => {
    const { reader: r, asked } = reader(0, 899_999, () => 10);
    const stored = createStoredWindows({ reader: r });
    await stored.ready(query, 999_999, 7000);
    await stored.ready(query, 900_000, 7000);
    expect(asked).toEqual({ coverage: 1, counts: [] });
    expect(stored.windows([query])).toBeUndefined();
    await stored.ready(query, 899_999, 7000);
    expect(asked.counts).toEqual([{ fromBlock: 888_800, toBlock: 899_999, limit: 16_384 }]);
  });

  it('ends a window cut short by the limit at the oldest block it counted', async () => {
    // nearly no rows by the coverage's count (the first window is then the whole query), but every block holds one here
    const { reader: r } = reader(0, 999_999, () => 1);
    const sparse: StoredRowsReader = { ...r, coverage: async () => ({ covered: [{ fromBlock: 0, toBlock: 999_999 }], rows: 0, blocks: 1_000_000 }) };
    const stored = createStoredWindows({ reader: sparse });
    await stored.ready(query, 999_999, 7000);
    expect(stored.windows([query])![0]).toMatchObject({ fromBlock: 999_999 - 16_383, toBlock: 999_999 });
  });

  it('keeps a query to its own blocks, and gives windows only when every member has one', async () => {
    const { reader: r, asked } = reader(0, 999_999, () => 10);
    const stored = createStoredWindows({ reader: r });
    const chunk = { contract: USDC, fromBlock: 999_000, toBlock: 999_999 };
    await stored.ready(chunk, 999_999, 7000);
    expect(asked.counts).toEqual([{ fromBlock: 999_000, toBlock: 999_999, limit: 16_384 }]);
    const dai = { contract: DAI, fromBlock: 999_000, toBlock: 999_999 };
    expect(stored.windows([chunk, dai])).toBeUndefined();
    await stored.ready(dai, 999_999, 7000);
    expect(stored.windows([chunk, dai])).toHaveLength(2);
  });

  it('sizes by nothing where no block was read in full, or the rows proved too few, and reads again after the query ended', async () => {
    const { reader: r, asked } = reader(0, 99, () => 10);
    const stored = createStoredWindows({ reader: r });
    const unread = { contract: USDC, fromBlock: 100_000, toBlock: 999_999 };
    await stored.ready(unread, 999_999, 7000);
    expect(stored.windows([unread])).toBeUndefined();
    expect(asked).toEqual({ coverage: 1, counts: [] });
    await stored.ready(unread, 999_998, 7000);
    expect(asked.coverage).toBe(1);

    const read = { contract: USDC, fromBlock: 0, toBlock: 99 };
    await stored.ready(read, 99, 7000);
    expect(stored.windows([read])).toHaveLength(1);
    stored.tooFew([read]);
    expect(stored.windows([read])).toBeUndefined();
    await stored.ready(read, 50, 7000);
    expect(asked.counts).toHaveLength(1);
    stored.forget(read);
    await stored.ready(read, 99, 7000);
    expect(stored.windows([read])).toHaveLength(1);
    expect(asked.counts).toHaveLength(2);
  });

  it('tells once what it could not read, and sizes that query by nothing', async () => {
    const warned: unknown[] = [];
    const { reader: r } = reader(0, 999_999, () => 10);
    const failing: StoredRowsReader = { ...r, counts: () => Promise.reject(new Error('canceling statement due to statement timeout')) };
    const stored = createStoredWindows({ reader: failing, logger: { warn: (o: unknown) => void warned.push(o) } as never });
    await stored.ready(query, 999_999, 7000);
    await stored.ready(query, 999_998, 7000);
    expect(stored.windows([query])).toBeUndefined();
    expect(warned).toEqual([
      { msg: 'could not read the stored rows; sizing eth_getLogs calls by the answers alone', contract: USDC, err: 'canceling statement due to statement timeout' },
    ]);
  });

  it('reads once for pages of a query asked at the same time', async () => {
    const { reader: r, asked } = reader(0, 999_999, () => 10);
    const stored = createStoredWindows({ reader: r });
    await Promise.all([stored.ready(query, 999_999, 7000), stored.ready(query, 999_999, 7000)]);
    expect(asked).toMatchObject({ coverage: 1, counts: [{ fromBlock: 988_800 }] });
  });
});
