import { describe, expect, it } from 'vitest';
import { pageSpan } from './page-span.ts';

describe('pageSpan', () => {
  it('covers the blocks above its last block alone, and shares its last block with the next page', () => {
    expect(pageSpan({ fromBlock: 0, edge: 101, blocks: [100, 97, 95], done: false })).toEqual({
      interior: { fromBlock: 96, toBlock: 100 },
      edges: [95],
      nextEdge: 95,
    });
  });

  it('shares the block the previous page ended in', () => {
    expect(pageSpan({ fromBlock: 0, edge: 95, blocks: [95, 95, 90, 88], done: false })).toEqual({
      interior: { fromBlock: 89, toBlock: 94 },
      edges: [95, 88],
      nextEdge: 88,
    });
  });

  it('the last page covers everything down to the chunk start, its own last block included', () => {
    expect(pageSpan({ fromBlock: 10, edge: 88, blocks: [88, 40, 12], done: true })).toEqual({
      interior: { fromBlock: 10, toBlock: 87 },
      edges: [88],
      nextEdge: 88,
    });
  });

  it('a page inside one block covers nothing alone', () => {
    expect(pageSpan({ fromBlock: 0, edge: 50, blocks: [50, 50], done: false })).toEqual({ interior: null, edges: [50], nextEdge: 50 });
  });

  it('an empty last page covers the rest of the chunk', () => {
    expect(pageSpan({ fromBlock: 5, edge: 21, blocks: [], done: true })).toEqual({ interior: { fromBlock: 5, toBlock: 20 }, edges: [], nextEdge: 21 });
  });

  it('an empty page with more to come covers nothing', () => {
    expect(pageSpan({ fromBlock: 5, edge: 21, blocks: [], done: false })).toEqual({ interior: null, edges: [], nextEdge: 21 });
  });

  it('every block of a chunk is inside one page or on an edge, whatever the page breaks', () => {
    const rows = [30, 30, 29, 27, 27, 27, 27, 22, 21, 21, 20, 15, 12, 12, 11];
    for (let size = 1; size <= rows.length; size++) {
      const counted = new Map<number, number>();
      const edges = new Set<number>();
      let edge = 31;
      for (let at = 0; at < rows.length; at += size) {
        const blocks = rows.slice(at, at + size);
        const span = pageSpan({ fromBlock: 10, edge, blocks, done: at + size >= rows.length });
        for (let b = span.interior?.fromBlock ?? 1; span.interior && b <= span.interior.toBlock; b++) counted.set(b, (counted.get(b) ?? 0) + 1);
        for (const e of span.edges) edges.add(e);
        // a block inside a page has all its rows in that page
        for (let b = span.interior?.fromBlock ?? 1; span.interior && b <= span.interior.toBlock; b++) {
          expect(blocks.filter((x) => x === b).length).toBe(rows.filter((x) => x === b).length);
        }
        edge = span.nextEdge;
      }
      for (let b = 10; b <= 30; b++) {
        const inside = counted.get(b) ?? 0;
        expect(inside + (edges.has(b) ? 1 : 0), `block ${b}, page size ${size}`).toBe(1);
      }
    }
  });
});
