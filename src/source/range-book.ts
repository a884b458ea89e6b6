import { learnedRange, seedRange, startLogsRange, type LogsRangeState } from './logs-range.ts';

/**
 * The `eth_getLogs` range of each set of contracts a node source calls together. A call naming three busy
 * contracts fills up over fewer blocks than a call naming one of them, so each set keeps its own range (and
 * streak, ceiling, what it learned); a set met for the first time starts from what the contracts' last answers
 * tell of their logs per block, with the provider's caps the source knows. Pure bookkeeping.
 */
export interface RangeBook {
  /** The state for a call naming `contracts`. */
  of(contracts: readonly string[]): LogsRangeState;
  /** The state after a call naming `contracts`. */
  set(contracts: readonly string[], state: LogsRangeState): void;
  /** An answer over `blocks` blocks held `logs` logs of each contract named (0 for those it held none of). */
  answered(contracts: readonly string[], blocks: number, logs: ReadonlyMap<string, number>): void;
  /** The range to remember for the next run: the least any set learned (the next run starts with one contract per call, then sets). */
  learned(): number | undefined;
}

/** Sets of contracts remembered: more are met only when contracts' chunks start and end at different blocks. */
const SETS_REMEMBERED = 256;

/**
 * @example
 * const book = createRangeBook({ learned: 800 });
 * book.of([usdc]).range; // → 800
 * book.answered([usdc], 800, new Map([[usdc, 4000]])); // 5 logs a block
 * book.of([usdc, dai]).range; // → 1500 if dai had 0 logs a block lately…, sized to 7,500 logs
 */
export function createRangeBook(start: { learned?: number | undefined } = {}): RangeBook {
  const sets = new Map<string, LogsRangeState>();
  const perBlock = new Map<string, number>();
  let last = startLogsRange({ learned: start.learned });
  const keyOf = (contracts: readonly string[]) => [...contracts].sort().join();

  return {
    of(contracts) {
      const key = keyOf(contracts);
      const known = sets.get(key);
      if (known) return known;
      const rates = contracts.map((c) => perBlock.get(c));
      const sum = rates.every((r) => r !== undefined) ? rates.reduce((a, b) => a! + b!, 0) : undefined;
      return sets.size === 0 ? last : seedRange(last, sum);
    },
    set(contracts, state) {
      const key = keyOf(contracts);
      sets.delete(key);
      sets.set(key, state);
      if (sets.size > SETS_REMEMBERED) sets.delete(sets.keys().next().value!);
      last = state;
    },
    answered(contracts, blocks, logs) {
      for (const c of contracts) perBlock.set(c, (logs.get(c) ?? 0) / Math.max(1, blocks));
    },
    learned() {
      let least: number | undefined;
      for (const state of sets.values()) {
        const learned = learnedRange(state);
        if (learned !== undefined && (least === undefined || learned < least)) least = learned;
      }
      return least;
    },
  };
}
