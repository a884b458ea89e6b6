import { describe, expect, it } from 'vitest';
import type { ChunkState } from '../warehouse/ranges.ts';
import { interleave, runChunks, type ScheduledChunk } from './chunk-scheduler.ts';
import type { ChunkSplitter } from './read-chunk.ts';
import { splitPoint } from './split.ts';

const PAGE = 10;

function chunk(id: string, fromBlock: number, toBlock: number): ChunkState {
  return { id, rangeId: '1', chainId: 1, fromBlock, toBlock, pageKey: null, resumeToBlock: null, done: false, rows: 0, fresh: true, openKeys: [], queryFromBlock: null };
}

/**
 * A pretend reader: one page of PAGE rows per 10 blocks, downward, one page per tick; between pages it
 * answers the splitter as readChunk does (the lower half of what it has not reached), with a made-up id.
 */
function reader(log: string[], ids = { next: 100 }, firstPageMs: Record<string, number> = {}) {
  return async ({ chunk: c }: ScheduledChunk<string>, split: ChunkSplitter) => {
    log.push(`start ${c.id}`);
    await new Promise((resolve) => setTimeout(resolve, firstPageMs[c.id] ?? 0));
    for (;;) {
      if (split.wanted()) {
        const lastGiven = splitPoint(c, PAGE);
        if (lastGiven === undefined) split.answer(undefined);
        else {
          const part = chunk(String(ids.next++), c.fromBlock, lastGiven);
          log.push(`split ${c.id}: ${part.id} takes ${part.fromBlock}–${part.toBlock}`);
          c.fromBlock = lastGiven + 1;
          split.answer(part);
        }
      }
      await new Promise((resolve) => setTimeout(resolve, 1));
      const low = Math.max(c.fromBlock, (c.resumeToBlock ?? c.toBlock + 1) - 10);
      c.rows += PAGE;
      c.resumeToBlock = low;
      if (low === c.fromBlock) {
        c.done = true;
        log.push(`done ${c.id}`);
        return;
      }
    }
  };
}

describe('runChunks', () => {
  it('asks the running chunk with the most left to split when a connection would be idle, and starts the part at once', async () => {
    const log: string[] = [];
    const parts: string[] = [];
    const items = [chunk('1', 0, 999), chunk('2', 1000, 1019)].map((c) => ({ range: 'r', chunk: c }));
    await runChunks(items, { concurrency: 2, pageSize: PAGE, maxSplits: 1, signal: new AbortController().signal }, reader(log), (p) => parts.push(p.chunk.id));
    // chunk 2 (two pages) ends first; chunk 1 then gives half of what it has not reached to chunk 100
    expect(log.slice(0, 3)).toEqual(['start 1', 'start 2', 'done 2']);
    const split = log.find((l) => l.startsWith('split'))!;
    expect(split).toMatch(/^split 1: 100 takes 0–\d+$/);
    expect(log.indexOf('start 100')).toBe(log.indexOf(split) + 1);
    expect(parts).toEqual(['100']);
    expect(log.filter((l) => l.startsWith('split'))).toHaveLength(1);
    expect(log.filter((l) => l.startsWith('done'))).toHaveLength(3);
  });

  it('asks a chunk that had read nothing when a connection became idle, once it has read a page', async () => {
    const log: string[] = [];
    const items = [chunk('1', 0, 999), chunk('2', 1000, 1009)].map((c) => ({ range: 'r', chunk: c }));
    // chunk 2 ends before chunk 1 has a page, so nothing tells how much chunk 1 holds yet
    await runChunks(items, { concurrency: 2, pageSize: PAGE, maxSplits: 1, signal: new AbortController().signal }, reader(log, undefined, { '1': 30 }), () => undefined);
    expect(log.indexOf('done 2')).toBeLessThan(log.findIndex((l) => l.startsWith('split')));
    expect(log.filter((l) => l.startsWith('split'))).toEqual([expect.stringMatching(/^split 1: 100 takes 0–/)]);
  });

  it('splits at most maxSplits times, never a chunk with too little left, and covers every block once', async () => {
    const log: string[] = [];
    const items = [chunk('1', 0, 1999), chunk('2', 2000, 2009), chunk('3', 2010, 2019)].map((c) => ({ range: 'r', chunk: c }));
    const all = items.map((i) => i.chunk);
    await runChunks(items, { concurrency: 3, pageSize: PAGE, maxSplits: 4, signal: new AbortController().signal }, reader(log), (p) => all.push(p.chunk));
    expect(log.filter((l) => l.startsWith('split'))).toHaveLength(4);
    // the chunks' blocks after every split: a partition of 0…2019
    const spans = all.map((c) => [c.fromBlock, c.toBlock] as const).sort((a, b) => a[0] - b[0]);
    expect(spans[0]![0]).toBe(0);
    for (const [i, [from]] of spans.slice(1).entries()) expect(from).toBe(spans[i]![1] + 1);
    expect(spans.at(-1)![1]).toBe(2019);
    expect(all.every((c) => c.done)).toBe(true);
    // a chunk is never asked below MIN_SPLIT_PAGES pages: each part got at least 2 pages' worth of blocks
    for (const c of all.slice(3)) expect(c.toBlock - c.fromBlock + 1).toBeGreaterThanOrEqual(20);
  });

  it('rejects with the first failure after the other chunks have ended, and splits nothing once aborted', async () => {
    const log: string[] = [];
    const stop = new AbortController();
    const items = [chunk('1', 0, 999), chunk('2', 1000, 1009)].map((c) => ({ range: 'r', chunk: c }));
    const read = reader(log);
    const failing = runChunks(
      items,
      { concurrency: 2, pageSize: PAGE, maxSplits: 4, signal: stop.signal },
      async (item, split) => {
        if (item.chunk.id === '2') {
          stop.abort(new Error('chunk 2 failed'));
          throw new Error('chunk 2 failed');
        }
        return read(item, split);
      },
      () => undefined,
    );
    await expect(failing).rejects.toThrow('chunk 2 failed');
    expect(log).toEqual(['start 1', 'done 1']);
  });
});

describe('interleave', () => {
  it('puts the contracts’ chunks over the same blocks side by side, each contract’s in its own order', () => {
    expect(interleave([['a1', 'a2', 'a3'], ['b1'], [], ['c1', 'c2']])).toEqual(['a1', 'b1', 'c1', 'a2', 'c2', 'a3']);
    expect(interleave([])).toEqual([]);
  });
});
