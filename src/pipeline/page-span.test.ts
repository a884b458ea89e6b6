import { describe, expect, it } from 'vitest';
import { pageSpan, type SpanState } from './page-span.ts';

const row = (blockNumber: number, logIndex: number) => ({ blockNumber, logIndex, transactionHash: `0x${blockNumber}-${logIndex}` });
const key = (r: { transactionHash: string; logIndex: number }) => ({ transactionHash: r.transactionHash, logIndex: r.logIndex });
const start = (toBlock: number): SpanState => ({ edge: toBlock + 1, openKeys: [] });

describe('pageSpan', () => {
  it('completes the blocks above its last one, and leaves that one open', () => {
    const rows = [row(100, 2), row(97, 0), row(95, 1), row(95, 0)];
    expect(pageSpan({ fromBlock: 0, toBlock: 100, state: start(100), rows, done: false })).toEqual({
      interior: { fromBlock: 96, toBlock: 100 },
      carried: [],
      openRows: [row(95, 1), row(95, 0)],
      next: { edge: 95, openKeys: [key(row(95, 1)), key(row(95, 0))] },
    });
  });

  it('completes the block the previous page left open with the keys that page committed there', () => {
    const state = { edge: 95, openKeys: [key(row(95, 9))] };
    expect(pageSpan({ fromBlock: 0, toBlock: 100, state, rows: [row(95, 3), row(90, 0), row(88, 1)], done: false })).toEqual({
      interior: { fromBlock: 89, toBlock: 95 },
      carried: [key(row(95, 9))],
      openRows: [row(88, 1)],
      next: { edge: 88, openKeys: [key(row(88, 1))] },
    });
  });

  it('keeps a block open over a page that holds nothing else', () => {
    const state = { edge: 50, openKeys: [key(row(50, 9))] };
    expect(pageSpan({ fromBlock: 0, toBlock: 100, state, rows: [row(50, 8), row(50, 7)], done: false })).toEqual({
      interior: null,
      carried: [],
      openRows: [row(50, 8), row(50, 7)],
      next: { edge: 50, openKeys: [key(row(50, 9)), key(row(50, 8)), key(row(50, 7))] },
    });
  });

  it('completes every block down to the chunk start on its last page, rows or not', () => {
    const state = { edge: 20, openKeys: [key(row(20, 1))] };
    expect(pageSpan({ fromBlock: 5, toBlock: 30, state, rows: [], done: true })).toEqual({
      interior: { fromBlock: 5, toBlock: 20 },
      carried: [key(row(20, 1))],
      openRows: [],
      next: { edge: 5, openKeys: [] },
    });
    expect(pageSpan({ fromBlock: 5, toBlock: 20, state: start(20), rows: [], done: true }).interior).toEqual({ fromBlock: 5, toBlock: 20 });
  });

  it('re-reads a block whole after a refused page key: nothing carried into it', () => {
    // the chunk now ends at its lowest committed block, and the next page starts at its first row
    const span = pageSpan({ fromBlock: 0, toBlock: 40, state: { edge: 40, openKeys: [] }, rows: [row(40, 5), row(40, 4), row(39, 0)], done: false });
    expect(span.interior).toEqual({ fromBlock: 40, toBlock: 40 });
    expect(span.carried).toEqual([]);
  });

  it('an empty page that is not the last changes nothing', () => {
    const state = { edge: 21, openKeys: [key(row(21, 0))] };
    expect(pageSpan({ fromBlock: 5, toBlock: 30, state, rows: [], done: false })).toEqual({ interior: null, carried: [], openRows: [], next: state });
  });

  it('completes every block exactly once with all its rows, whatever the page breaks', () => {
    const blocks = [30, 30, 29, 27, 27, 27, 27, 22, 21, 21, 20, 15, 12, 12, 11];
    const rows = blocks.map((b, i) => row(b, 100 - i));
    for (let size = 1; size <= rows.length; size++) {
      const completed = new Map<number, string[]>();
      let state = start(30);
      for (let at = 0; at < rows.length || at === 0; at += size) {
        const page = rows.slice(at, at + size);
        const span = pageSpan({ fromBlock: 10, toBlock: 30, state, rows: page, done: at + size >= rows.length });
        expect(span.openRows.every((r) => !span.interior || r.blockNumber < span.interior.fromBlock)).toBe(true);
        for (let b = span.interior?.fromBlock ?? 1; span.interior && b <= span.interior.toBlock; b++) {
          expect(completed.has(b), `block ${b} completed twice, page size ${size}`).toBe(false);
          const known = [...span.carried.filter((k) => k.transactionHash.startsWith(`0x${b}-`)), ...page.filter((r) => r.blockNumber === b).map(key)];
          completed.set(b, known.map((k) => k.transactionHash).sort());
        }
        state = span.next;
      }
      for (let b = 10; b <= 30; b++) {
        const all = rows
          .filter((r) => r.blockNumber === b)
          .map((r) => r.transactionHash)
          .sort();
        expect(completed.get(b), `block ${b}, page size ${size}`).toEqual(all);
      }
    }
  });
});
