import { LOGS_RANGE, learnedRange, seedRange, startLogsRange, withRunBounds, type LogsRangeState } from './logs-range.ts';

/**
 * The `eth_getLogs` range of each set of contracts a node source calls together. A call naming three busy
 * contracts fills up over fewer blocks than a call naming one of them, so each set keeps its own range (and
 * streak, ceiling, what it learned); a set met for the first time starts from what the contracts' last answers
 * tell of their logs per block (no more blocks than a call of the run answered over, as those few spans may
 * misjudge them; a contract no answer has told of counted as busy as the busiest told, `setLogsPerBlock`), with the
 * provider's caps the source knows; so does a set called again far from where it was
 * last (logs per block change along the chain: its old range would misjudge them). A block limit the provider
 * does not state, once a set met it (`rangeCeiling`), holds for every set; every 100 answers one call asks the span
 * refused again (a call cut short under it leaves that to the next), and the limit goes once a call answers over it.
 * Pure bookkeeping.
 */
export interface RangeBook {
  /**
   * The state for a call naming `contracts` at block `top`, to be made now: when the run's block ceiling is due to be
   * asked again, this is the call that asks it (see `peek` for a look that asks nothing).
   */
  of(contracts: readonly string[], top: number): LogsRangeState;
  /**
   * The call `of` just sized for `contracts` at `top` asks `blocks` blocks: fewer than its range when a chunk's end or
   * another call's span cuts it short. A call that was to ask the block ceiling again and is cut short under it does not
   * ask it: the next call does, and this one is sized as any other (`peek`). `true` when it gave the asking back.
   */
  asked(contracts: readonly string[], top: number, blocks: number): boolean;
  /** The state `of` gives such a call, but never the ceiling's asking again: for planning around a call (how far behind others are). */
  peek(contracts: readonly string[], top: number): LogsRangeState;
  /** The state after a call naming `contracts` at block `top`. */
  set(contracts: readonly string[], top: number, state: LogsRangeState): void;
  /** Whether an answer has told `contract`'s logs per block (`answered`). */
  told(contract: string): boolean;
  /** An answer over `blocks` blocks held `logs` logs of each contract named (0 for those it held none of). */
  answered(contracts: readonly string[], blocks: number, logs: ReadonlyMap<string, number>): void;
  /**
   * The range to remember for the next run (its first calls, before any answer tells the logs per block; later sets
   * are sized by their logs): the least any set learned among those with a quarter of the answers of the set with
   * the most, or more; sets that only answered spans cut short by a chunk's end learned nothing. Not the least of
   * every set's: a set met for a few calls at a chunk's edge would start the next run's every call low; nor the
   * most-answered set's alone: a quiet token read over many empty spans would start a busy one's high.
   */
  learned(): number | undefined;
  /**
   * What became of a block limit the provider does not state, for the next run: the run's block ceiling and its answers
   * since it was met or last asked again, when one holds (met in this run, or kept from the run before); `gone` when
   * the run had one and a call answered over it; undefined when the run knew of none.
   */
  blockLimit(): BlockLimit | 'gone' | undefined;
}

/** A block limit the provider does not state: the least span refused as too wide, and the answers since it was met or last asked again. */
export interface BlockLimit {
  blocks: number;
  answers: number;
}

/** A set's range holds within this many of its ranges from where it was last called. */
const FAR = 2;
/** A set counts for the range kept for the next run with at least this share of the most answers any set had (1 / 4). */
const LEARNED_SHARE = 4;
/** Sets of contracts remembered: more are met only when contracts' chunks start and end at different blocks. */
const SETS_REMEMBERED = 256;

/**
 * @example
 * const book = createRangeBook({ learned: 800 }); // with `blockLimit: { blocks: 1000, answers: 0 }`: every call stays under 1,000 blocks from the first
 * book.of([usdc], 17_999_999).range; // → 800
 * book.answered([usdc], 800, new Map([[usdc, 4000]])); // 5 logs a block
 * book.of([usdc, dai], 17_999_199).range; // → 1500 if dai had no logs lately: sized to 7,000 logs
 */
export function createRangeBook(
  start: {
    learned?: number | undefined;
    /** A block limit an earlier run kept, and its answers since it was met or last asked again (asked again at 100, counted on). */
    blockLimit?: BlockLimit | undefined;
    /** The range that earlier run learned (it answered then, under the limit): with a limit, where calls start when the range asked is not under it. */
    answeredBefore?: number | undefined;
  } = {},
): RangeBook {
  /** Each set's state, where it was last called, and its answers in the run. */
  const sets = new Map<string, { state: LogsRangeState; top: number; answers: number }>();
  const perBlock = new Map<string, number>();
  // with a kept limit, a range asked at it or above (a job's logsRange) starts at the span that answered before, under it
  const before = start.blockLimit && start.answeredBefore !== undefined && start.answeredBefore < start.blockLimit.blocks ? start.answeredBefore : undefined;
  let last = startLogsRange({ learned: before === undefined || start.learned === undefined ? start.learned : Math.min(start.learned, before) });
  /** The most blocks a call of this run answered over. */
  let largest = 0;
  /**
   * The run's block ceiling (`LogsRangeState.rangeCeiling`): the least span refused as over a block limit, and the
   * answers since it was met or last asked again.
   */
  let rangeCeiling: BlockLimit | undefined = start.blockLimit && { ...start.blockLimit };
  /** Whether the run had a block ceiling at some time: without one now, it is gone. */
  let hadCeiling = rangeCeiling !== undefined;
  const keyOf = (contracts: readonly string[]) => [...contracts].sort().join();
  /** The call `of` chose to ask the block ceiling again, until it says how many blocks it asks (`asked`). */
  let asking: { key: string; top: number } | undefined;

  const stateOf = (contracts: readonly string[], top: number): LogsRangeState => {
    const known = sets.get(keyOf(contracts));
    if (known && Math.abs(known.top - top) <= FAR * known.state.range) return known.state;
    if (sets.size === 0) return last;
    const from = known?.state ?? last;
    const rate = setLogsPerBlock(contracts.map((c) => perBlock.get(c)));
    // logs per block measured over a few spans are a guess: a seed spans no more blocks than a call has answered; one
    // partly guessed (a contract's first answer is still out) no more than the range it would have had without it
    const seeded = seedRange(from, rate?.perBlock);
    const range = Math.min(seeded.range, Math.max(largest, last.range), rate?.guessed ? from.range : Number.POSITIVE_INFINITY);
    return known ? { ...seeded, range, largest: known.state.largest, densest: known.state.densest } : { ...seeded, range };
  };

  return {
    of(contracts, top) {
      const state = stateOf(contracts, top);
      // after 100 answers under it, the first set it may hold down (a range of half of it or more: growth stops short
      // of a ceiling) asks the span refused again, in one call: refused, the limit holds 100 answers more; answered,
      // the limit is gone (a provider's change, or a cap on logs after all). Not before the set's logs per block are
      // known (a run's first calls, with the answers counted on from the run before): a refusal then reads as too many
      // logs, not as the limit
      const densityKnown = state.recent.length > 0 || state.seededDensity !== undefined;
      if (rangeCeiling && rangeCeiling.answers >= LOGS_RANGE.forgetCeilingAfter && state.range * 2 >= rangeCeiling.blocks && densityKnown) {
        rangeCeiling.answers = 0;
        asking = { key: keyOf(contracts), top };
        return withRunBounds({ ...state, range: rangeCeiling.blocks }, { rangeCeiling: undefined, longestAnswered: largest });
      }
      return withRunBounds(state, { rangeCeiling: rangeCeiling?.blocks, longestAnswered: largest });
    },
    asked(contracts, top, blocks) {
      const call = asking;
      if (!call || call.key !== keyOf(contracts) || call.top !== top) return false;
      asking = undefined;
      // cut short under the ceiling, it tells nothing of it: due again, for the next call
      if (!rangeCeiling || blocks >= rangeCeiling.blocks) return false;
      rangeCeiling.answers = Math.max(rangeCeiling.answers, LOGS_RANGE.forgetCeilingAfter);
      return true;
    },
    peek(contracts, top) {
      return withRunBounds(stateOf(contracts, top), { rangeCeiling: rangeCeiling?.blocks, longestAnswered: largest });
    },
    set(contracts, top, state) {
      // a block limit met just now, lower than the run's ceiling (or none): the run's from now on
      if (state.metBlockLimit && state.rangeCeiling !== undefined && state.rangeCeiling < (rangeCeiling?.blocks ?? Number.POSITIVE_INFINITY)) {
        rangeCeiling = { blocks: state.rangeCeiling, answers: 0 };
        hadCeiling = true;
      }
      const key = keyOf(contracts);
      const answers = sets.get(key)?.answers ?? 0;
      sets.delete(key);
      sets.set(key, { state, top, answers });
      if (sets.size > SETS_REMEMBERED) sets.delete(sets.keys().next().value!);
      last = state;
    },
    told: (contract) => perBlock.has(contract),
    answered(contracts, blocks, logs) {
      largest = Math.max(largest, blocks);
      if (rangeCeiling && blocks >= rangeCeiling.blocks) rangeCeiling = undefined;
      else if (rangeCeiling) rangeCeiling.answers++;
      for (const c of contracts) perBlock.set(c, (logs.get(c) ?? 0) / Math.max(1, blocks));
      const set = sets.get(keyOf(contracts));
      if (set) set.answers++;
    },
    learned() {
      const learned = [...sets.values()].flatMap(({ state, answers }) => {
        const range = learnedRange(state);
        return range === undefined ? [] : [{ range, answers }];
      });
      const most = Math.max(0, ...learned.map((l) => l.answers));
      const counted = learned.filter((l) => l.answers * LEARNED_SHARE >= most);
      return counted.length ? Math.min(...counted.map((l) => l.range)) : undefined;
    },
    blockLimit: () => (rangeCeiling ? { ...rangeCeiling } : hadCeiling ? 'gone' : undefined),
  };
}

/**
 * The logs per block of a set of contracts, from each one's lately (undefined where no answer has told it yet: its
 * first call is still out, say): their sum, each one not told counted as busy as the busiest told (`guessed`).
 * Undefined when none is told. Before, any contract not told left the set sized by the last call's range alone: 1,012–1,274
 * blocks for three contracts at 9.3–9.7 logs a block, refused over QuickNode's 10,000 (bench/NOTES.md, "A
 * twenty-eighth day"). The node source now names no such contract in a call; the guess sizes what is only looked at
 * (how far behind a query may be that a call waits for).
 *
 * @example setLogsPerBlock([2.5, 4, undefined]) // → { perBlock: 10.5, guessed: true }: 2.5 + 4 + 4
 */
export function setLogsPerBlock(rates: readonly (number | undefined)[]): { perBlock: number; guessed: boolean } | undefined {
  const told = rates.filter((r): r is number => r !== undefined);
  if (!told.length) return undefined;
  const untold = rates.length - told.length;
  return { perBlock: told.reduce((a, b) => a + b, 0) + untold * Math.max(...told), guessed: untold > 0 };
}
