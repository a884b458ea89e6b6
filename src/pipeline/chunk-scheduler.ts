import type { ChunkState } from '../warehouse/ranges.ts';
import type { ChunkSplitter } from './read-chunk.ts';
import { remainingRows, splitPoint } from './split.ts';

export interface ScheduledChunk<R> {
  range: R;
  chunk: ChunkState;
}

export interface ChunkSchedule {
  /** Chunks read at once. */
  concurrency: number;
  pageSize: number;
  /** Splits allowed in the run: each may cost a request more (a partial last page). */
  maxSplits: number;
  /** Once aborted, no chunk starts and none is split. */
  signal: AbortSignal;
}

/**
 * The first item of each list, then the second of each, and so on: each contract's chunks come newest first,
 * so chunks of different contracts over the same blocks start together.
 *
 * @example interleave([[a1, a2, a3], [b1], [c1, c2]]) // → [a1, b1, c1, a2, c2, a3]
 */
export function interleave<T>(lists: readonly (readonly T[])[]): T[] {
  const out: T[] = [];
  const longest = Math.max(0, ...lists.map((l) => l.length));
  for (let i = 0; i < longest; i++) for (const list of lists) if (i < list.length) out.push(list[i]!);
  return out;
}

/**
 * Reads chunks `concurrency` at a time, in order. When none is left to start and a connection would be
 * idle, the running chunk with the most rows left (by what it has read so far) is asked to give the lower
 * half of its unread blocks to a new chunk, which starts at once: the last chunks of a run then share the
 * connections and the rate limit instead of leaving them to one. Resolves when every chunk, new ones
 * included, has ended; rejects with the first failure, after the others have ended.
 *
 * @example await runChunks(items, { concurrency: 4, pageSize: 1000, maxSplits: 4, signal }, (item, split) => readChunk(deps, { …, split }, events), (part) => range.chunks.push(part.chunk));
 */
export async function runChunks<R>(
  items: readonly ScheduledChunk<R>[],
  schedule: ChunkSchedule,
  read: (item: ScheduledChunk<R>, split: ChunkSplitter) => Promise<void>,
  onPart: (part: ScheduledChunk<R>) => void,
): Promise<void> {
  const queue = [...items];
  const running = new Map<ChunkState, { asked: boolean }>();
  const tasks: Promise<void>[] = [];
  let failure: { error: unknown } | undefined;
  let asked = 0;
  let splits = 0;

  const askForSplits = () => {
    while (schedule.concurrency - running.size - asked > 0 && splits + asked < schedule.maxSplits) {
      let best: { asked: boolean } | undefined;
      let most = 0;
      for (const [chunk, state] of running) {
        if (state.asked || splitPoint(chunk, schedule.pageSize) === undefined) continue;
        const rest = remainingRows(chunk)!;
        if (rest > most) [best, most] = [state, rest];
      }
      if (!best) return;
      best.asked = true;
      asked++;
    }
  };

  const launch = () => {
    if (schedule.signal.aborted) return;
    while (running.size + asked < schedule.concurrency && queue.length) start(queue.shift()!);
    if (!queue.length) askForSplits();
  };

  const start = (item: ScheduledChunk<R>) => {
    const state = { asked: false };
    running.set(item.chunk, state);
    const settle = () => {
      if (!state.asked) return;
      state.asked = false;
      asked--;
    };
    const splitter: ChunkSplitter = {
      wanted: () => {
        // asked between pages: a chunk with no estimate when a connection became idle may have one now
        if (!state.asked && !queue.length && !schedule.signal.aborted) askForSplits();
        return state.asked && !schedule.signal.aborted;
      },
      answer: (part) => {
        settle();
        if (part) {
          splits++;
          const next = { range: item.range, chunk: part };
          onPart(next);
          queue.unshift(next);
        }
        launch();
      },
    };
    const task = Promise.resolve()
      .then(() => read(item, splitter))
      .catch((error: unknown) => {
        failure ??= { error };
      })
      .finally(() => {
        running.delete(item.chunk);
        settle();
        launch();
      });
    tasks.push(task);
  };

  launch();
  // chunks given away start while others run: the list grows until the last task has ended
  for (let i = 0; i < tasks.length; i++) await tasks[i];
  if (failure) throw failure.error;
}
