import { FatalError } from '../common/errors.ts';
import type { LogsRefusal } from './provider-errors.ts';

/**
 * How many blocks each `eth_getLogs` call asks for (node-source.md, "The exporter adapts"). Pure: the caller
 * keeps the state, asks `nextSpan` what to query, and reports each answer (`afterAnswer`) or refusal
 * (`afterRefusal`), getting the next state back.
 *
 * - Start: the job's `logsRange`, else the range learned by an earlier run, else 2,000 blocks.
 * - Refused as too large (or no answer in time): follow the provider's suggested range when it is inside the
 *   range asked and smaller; else its stated block limit when smaller than the range asked; else halve. A
 *   suggestion equal to the range asked, or a stated limit the range asked does not exceed, is no hint (the
 *   limit is then read as one block less than the range asked).
 * - One block refused: ask it per contract; one block of one contract refused: the run fails, naming both.
 * - Answered: size the range by the last answer's density so an answer holds the target number of logs,
 *   shrinking at once when the last answer was denser; grow only after 2 full-size answers in a row, at most
 *   doubling; past the longest span that answered in this run, no further than the busiest of the last 3 answers
 *   lets an answer hold the target (logs per block vary about twofold from one stretch of the chain to the next:
 *   sized by the last answer alone, a range grown out of a quiet stretch into a busy one is refused); never above
 *   the block limit (the provider's, else 100,000). The target starts at 70 % of the results
 *   cap (the provider's, else 10,000 logs); each refusal for size (not for a block limit, not a timeout) cuts it
 *   by 20 %, each answer raises it by 1 %, back up to 70 % of the cap: bursts of logs, and caps no message states,
 *   cost a few refusals, not one in every few calls.
 * - A refusal that gave no number (or a timeout) is a ceiling: growth stays below it, probing halfway between
 *   range and ceiling, and forgets it after 100 answers; a refusal with a number needs no ceiling, as sizing by
 *   density (or the limit) keeps below it.
 * - A refusal that names the block range but no number (Ankr's `block range is too wide`, the OP stack's `Block
 *   range is too large`; not `backend response too large`), over a span whose logs, at the busiest density of the
 *   last answers, would be under a quarter of the most an answer is sized to hold, when no call of the run answered
 *   over as many blocks, is a block limit the provider does not state: it counts blocks, not logs. Its span is the
 *   run's block ceiling, for every set of contracts (`rangeCeiling`, kept by range-book.ts, which every 100 answers
 *   has one call ask that span again, and drops the ceiling once a call answers over it); the retry asks the
 *   longest span that answered, when at least half, else half; the target is not cut, and growth probes halfway up
 *   to it.
 * - A call may stretch past its range to the end of a chunk, to leave no sliver of less than a quarter of the
 *   range for a call of its own, within what a call may ask and 1.15 times the target at the busiest density of the
 *   last answers (`mayStretch`).
 * - Learned for the next run: the range the densest stretch allowed, and no more than the largest that answered:
 *   starting low costs a few answers while the range grows, starting high costs refusals.
 */

/** Inclusive block numbers. */
export interface BlockSpan {
  fromBlock: number;
  toBlock: number;
}

export interface LogsRangeState {
  /** Blocks per call from now on. */
  readonly range: number;
  /** Full-size answers in a row since the range last changed. */
  readonly streak: number;
  /** Answers since the last refusal. */
  readonly sinceRefusal: number;
  /** The smallest span refused without a number (or unanswered) lately: growth stays below it. */
  readonly ceiling: number | undefined;
  /** The smallest span refused for its blocks without a number (a block limit not stated): every range stays below it. */
  readonly rangeCeiling: number | undefined;
  /** This state is a refusal's that met a block limit (`rangeCeiling` is its span): the run's ceiling from now on (range-book.ts). */
  readonly metBlockLimit: boolean;
  /** The most blocks per call: the provider's stated limit, else the configured cap. */
  readonly maxRange: number;
  /** The most logs per answer, as a provider stated it. */
  readonly maxResults: number | undefined;
  /** The logs an answer is sized to hold. */
  readonly target: number;
  /** The largest span that answered in this run. */
  readonly largest: number | undefined;
  /** The most blocks a call of this run answered over, for any set of contracts: no span up to it is over a block limit. */
  readonly longestAnswered: number;
  /** The smallest range the density of a full-size answer (over more than one block) allowed in this run. */
  readonly densest: number | undefined;
  /** Logs per block of the last answers (`LOGS_RANGE.growthMemory` of them), newest last: past `largest`, growth is sized by the busiest of them. */
  readonly recent: readonly number[];
  /** The contracts' logs per block a set was seeded with (`seedRange`), while no answer of its own tells. */
  readonly seededDensity: number | undefined;
}

export const LOGS_RANGE = {
  /** The first range when neither the job nor an earlier run gives one. */
  initial: 2_000,
  /** Blocks per call, at most, when the provider states no limit (reth's default limit). */
  maxRange: 100_000,
  /** Logs per answer sized for when the provider states no cap: a memory bound, and Infura's cap. */
  results: 10_000,
  /** The share of the results cap an answer is sized to hold, at most: room for denser blocks. */
  fill: 0.7,
  /** What a refusal for size leaves of the target. */
  targetCut: 0.8,
  /** What an answer adds to the target, up to `fill` of the cap. */
  targetGain: 1.01,
  /**
   * What a call stretched past its range to the end of a chunk (`mayStretch`) may hold, at most, as a share of the
   * target at the busiest logs per block lately: 80.5 % of the cap at a target of 70 %. Stretched by up to a quarter at
   * the last answer's density alone, calls held up to 87.5 % of the cap there and were refused where logs per block
   * rose; bounded by the target itself, hand runs' first runs made 34–43 calls against 33–37, and the bench's fill fell
   * to 53.4–57.8 % of the cap (bench/NOTES.md, "A twenty-eighth day").
   */
  stretch: 1.15,
  /** Full-size answers in a row before the range grows (at most doubling). */
  growAfter: 2,
  /**
   * Answers whose density bounds growth past the longest span that answered. Simulated with this controller over the
   * bench's dense chain (1,000,000 transfers of 3 contracts; each contract alone and the three in one call, from a
   * learned 438 blocks, in chunks of 100,000 and 25,000 blocks): sized by the last answer alone, 0–1 refusals per
   * contract alone and 3–4 for the three together; with this bound, none and 0–1, at 55–65 % of the cap per answer
   * against 56–65 %, in 155–162 calls for the three against 164–165.
   */
  growthMemory: 3,
  /** Answers after which a ceiling is forgotten and growth may probe above it again. */
  forgetCeilingAfter: 100,
  /** A growth step smaller than range/16 is not worth a possible refusal. */
  minStep: 1 / 16,
  /**
   * A refusal naming blocks but no number, over a span whose logs (at the busiest density of the last answers) would be fewer
   * than this share of the most an answer is sized to hold (70 % of the results cap), is read as a block limit: far
   * fewer logs than any results cap sized for.
   */
  blockLimitShare: 0.25,
} as const;

/**
 * The state to start a run with.
 *
 * @example startLogsRange({ jobRange: undefined, learned: 1500 }) // → { range: 1500, streak: 0, … maxRange: 100000 }
 */
export function startLogsRange(options: { jobRange?: number | undefined; learned?: number | undefined; maxRange?: number | undefined } = {}): LogsRangeState {
  const maxRange = options.maxRange ?? LOGS_RANGE.maxRange;
  if (!isCount(maxRange)) throw new RangeError(`maxRange must be a positive integer, got ${maxRange}`);
  const first = options.jobRange ?? options.learned ?? LOGS_RANGE.initial;
  if (!isCount(first)) throw new RangeError(`the first eth_getLogs range must be a positive integer of blocks, got ${first}`);
  const target = LOGS_RANGE.fill * LOGS_RANGE.results;
  return {
    range: Math.min(first, maxRange),
    streak: 0,
    sinceRefusal: 0,
    ceiling: undefined,
    rangeCeiling: undefined,
    metBlockLimit: false,
    maxRange,
    maxResults: undefined,
    target,
    largest: undefined,
    longestAnswered: 0,
    densest: undefined,
    recent: [],
    seededDensity: undefined,
  };
}

/**
 * The state for calls that name a different set of contracts than `known`'s did: the provider's caps and the
 * target carry over; the range is what `logsPerBlock` (the contracts' logs per block lately, summed), if known,
 * lets an answer hold, else `known`'s; a ceiling, and what was learned of ranges, start again.
 *
 * @example seedRange(groupState, 2.5).range // → 2800: 7,000 logs at 2.5 a block
 */
export function seedRange(known: LogsRangeState, logsPerBlock: number | undefined): LogsRangeState {
  const sized = logsPerBlock !== undefined && logsPerBlock > 0 ? Math.floor(known.target / logsPerBlock) : known.range;
  const range = Math.max(1, Math.min(sized, known.maxRange));
  // a ceiling is a bound on the logs of the contracts that met it: other contracts' logs differ; a block ceiling is
  // the run's (`withRunBounds`)
  return {
    ...known,
    range,
    streak: 0,
    sinceRefusal: 0,
    ceiling: undefined,
    rangeCeiling: undefined,
    metBlockLimit: false,
    largest: undefined,
    densest: undefined,
    recent: [],
    seededDensity: logsPerBlock,
  };
}

/**
 * `state` with what the whole run knows (every set of contracts): the most blocks a call answered over
 * (`longestAnswered`), and the block ceiling the run holds (`rangeCeiling`: the run's, replacing the set's own,
 * which may be one the run forgot), under which a range above it comes down to the longest span that answered when
 * that is below it, else to one block less than it.
 *
 * @example withRunBounds({ ...state, range: 2000 }, { rangeCeiling: 400, longestAnswered: 300 }) // → { …, range: 300, rangeCeiling: 400, longestAnswered: 300 }
 */
export function withRunBounds(state: LogsRangeState, run: { rangeCeiling: number | undefined; longestAnswered: number }): LogsRangeState {
  const longestAnswered = Math.max(state.longestAnswered, run.longestAnswered);
  const { rangeCeiling } = run;
  if (longestAnswered === state.longestAnswered && rangeCeiling === state.rangeCeiling && (rangeCeiling === undefined || state.range < rangeCeiling)) return state;
  const range =
    rangeCeiling === undefined || state.range < rangeCeiling ? state.range : longestAnswered > 0 && longestAnswered < rangeCeiling ? longestAnswered : belowCeiling(rangeCeiling);
  return { ...state, range, rangeCeiling, longestAnswered };
}

/**
 * The next call's blocks, from `fromBlock` up to the range or `toBlock`.
 *
 * @example nextSpan({ ...state, range: 2000 }, 100, 50_000) // → { fromBlock: 100, toBlock: 2099 }
 */
export function nextSpan(state: LogsRangeState, fromBlock: number, toBlock: number): BlockSpan {
  return { fromBlock, toBlock: Math.min(toBlock, fromBlock + state.range - 1) };
}

/**
 * The state after an answer of `logs` logs (every log of the answer, stored or not: a provider's cap counts them
 * all) for `asked`.
 *
 * @example afterAnswer(startLogsRange(), { fromBlock: 1, toBlock: 2000 }, 15_000).range // → 933: 7,000 logs, 70 % of the 10,000 assumed
 */
export function afterAnswer(state: LogsRangeState, asked: BlockSpan, logs: number): LogsRangeState {
  const span = spanOf(asked);
  const full = span >= state.range;
  const fits = logs > 0 ? Math.max(1, Math.floor((span * state.target) / logs)) : Number.POSITIVE_INFINITY;
  const sinceRefusal = state.sinceRefusal + 1;
  const ceiling = sinceRefusal >= LOGS_RANGE.forgetCeilingAfter ? undefined : state.ceiling;
  // the run's block ceiling is asked again, and dropped, by the range book
  const { rangeCeiling } = state;
  const recent = [...state.recent, logs / span].slice(-LOGS_RANGE.growthMemory);
  const next: LogsRangeState = {
    ...state,
    streak: full ? state.streak + 1 : state.streak,
    sinceRefusal,
    ceiling,
    target: Math.min(topTarget(state.maxResults), state.target * LOGS_RANGE.targetGain),
    metBlockLimit: false,
    largest: Math.max(state.largest ?? 0, span),
    longestAnswered: Math.max(state.longestAnswered, span),
    densest: full && span > 1 ? Math.min(state.densest ?? Number.POSITIVE_INFINITY, fits, state.maxRange) : state.densest,
    recent,
  };
  if (fits < state.range) return { ...next, range: fits, streak: 0 };
  if (next.streak < LOGS_RANGE.growAfter) return next;
  const bound = Math.min(ceiling ?? Number.POSITIVE_INFINITY, rangeCeiling ?? Number.POSITIVE_INFINITY);
  const below = bound === Number.POSITIVE_INFINITY ? bound : Math.min(Math.floor((state.range + bound) / 2), belowCeiling(bound));
  const busiest = Math.max(...recent);
  const fitsBusiest = busiest > 0 ? Math.max(1, Math.floor(state.target / busiest)) : Number.POSITIVE_INFINITY;
  // a span as long as one that answered already is sized by the last answer; a longer one by the busiest lately
  const reach = Math.max(fitsBusiest, state.largest ?? 0);
  const grown = Math.min(state.range * 2, fits, reach, state.maxRange, below);
  if (grown < state.range + Math.ceil(state.range * LOGS_RANGE.minStep)) return next;
  return { ...next, range: grown, streak: 0 };
}

/** A query of `eth_getLogs`: its blocks and the contracts it names. */
export interface LogsAsk extends BlockSpan {
  contracts: readonly string[];
}

/** What chose a retry's size: the provider's suggestion, its stated limit, the largest span that answered below a block limit it does not state, else half. */
type Because = 'suggested' | 'max-range' | 'block-limit' | 'halved';

export type RangeDecision =
  /** Ask `span` (the same first block, fewer blocks); `because` says what chose its size. */
  | { action: 'retry'; span: BlockSpan; because: Because; state: LogsRangeState }
  /** One block was refused for several contracts: ask it once per contract. */
  | { action: 'per-contract'; block: number; state: LogsRangeState }
  /** One block of one contract was refused: no smaller query exists. */
  | { action: 'fail'; error: FatalError };

/**
 * What to do after `asked` was refused as too large (or got no answer in time).
 *
 * @example afterRefusal(state, { fromBlock: 100, toBlock: 2099, contracts }, parseLogsRefusal(error)!)
 * // → { action: 'retry', span: { fromBlock: 100, toBlock: 699 }, because: 'suggested', state: { range: 600, … } }
 */
export function afterRefusal(state: LogsRangeState, asked: LogsAsk, refusal: LogsRefusal): RangeDecision {
  const span = spanOf(asked);
  const maxResults = refusal.maxResults === undefined ? state.maxResults : Math.min(refusal.maxResults, state.maxResults ?? refusal.maxResults);
  // a stated limit the refused span did not exceed is read one block short: the provider counts differently
  const maxRange = refusal.maxRange === undefined ? state.maxRange : Math.max(1, Math.min(state.maxRange, refusal.maxRange, span - 1));
  // only a message naming blocks may be a block limit: "backend response too large" or "max results" are caps on the answer
  const numberless = refusal.blocks === true && refusal.maxRange === undefined && refusal.maxResults === undefined && refusal.suggested === undefined;
  const blockLimit = numberless && span > 1 && isBlockLimit(state, span);
  // a refusal for size means fewer logs than aimed at fit here; a block limit or a hang says nothing of logs
  const forSize = !refusal.timedOut && !blockLimit && !(refusal.maxRange !== undefined && refusal.maxResults === undefined && refusal.suggested === undefined);
  const target = Math.max(1, Math.min(topTarget(maxResults), forSize ? state.target * LOGS_RANGE.targetCut : state.target));
  const rangeCeiling = blockLimit ? Math.min(span, state.rangeCeiling ?? span) : state.rangeCeiling;
  const next = (range: number, ceiling = state.ceiling): LogsRangeState => ({
    ...state,
    range,
    streak: 0,
    sinceRefusal: 0,
    ceiling,
    rangeCeiling,
    metBlockLimit: blockLimit,
    maxRange,
    maxResults,
    target,
  });
  if (span === 1) {
    const [contract, ...others] = asked.contracts;
    if (others.length > 0) return { action: 'per-contract', block: asked.fromBlock, state: next(1) };
    return { action: 'fail', error: unanswerable(asked.fromBlock, contract, refusal) };
  }
  const suggestion = refusal.suggested;
  if (suggestion && suggestion.fromBlock >= asked.fromBlock && suggestion.toBlock <= asked.toBlock && spanOf(suggestion) < span) {
    return retry(next(spanOf(suggestion)), asked, 'suggested');
  }
  if (refusal.maxRange !== undefined && refusal.maxRange < span) return retry(next(maxRange), asked, 'max-range');
  // a block limit lies between the longest span that answered and this one (longer than any that answered): ask that
  const proven = Math.max(state.largest ?? 0, state.longestAnswered);
  if (blockLimit && proven >= Math.floor(span / 2)) return retry(next(proven), asked, 'block-limit');
  // a refusal that names no number leaves only the span itself as a bound
  const ceiling = refusal.maxResults === undefined && refusal.maxRange === undefined ? Math.min(span, state.ceiling ?? span) : state.ceiling;
  return retry(next(Math.floor(span / 2), ceiling), asked, 'halved');
}

/**
 * The range to remember for the next run of this job and endpoint: what the densest stretch of this run allowed,
 * at most the largest span that answered and the block limit; undefined when no full-size answer (over more than
 * one block) measured it. An answer cut short by the end of a chunk (a resumed chunk's last blocks, say) tells
 * nothing of the provider: learned from, it would start the next run at a few blocks a call.
 *
 * @example learnedRange(state) // → 2500 after dense blocks at 3 logs a block, a 10,000-log cap
 */
export function learnedRange(state: LogsRangeState): number | undefined {
  if (state.largest === undefined || state.densest === undefined) return undefined;
  return Math.min(state.largest, state.densest, state.maxRange);
}

/**
 * Whether a refusal naming blocks but no number over `span` blocks reads as a block limit: the logs the busiest of the last
 * answers' densities (else the density the set was seeded with) puts in it are fewer than
 * `LOGS_RANGE.blockLimitShare` of what an answer is sized to hold at most, and no call of the run answered over as
 * many blocks (which a block limit would have refused). Nothing known of the density (a run's first calls): not one.
 */
function isBlockLimit(state: LogsRangeState, span: number): boolean {
  // a span no longer than one that answered is not over a block limit: a cap on logs (one far under 10,000, say)
  if (span <= state.longestAnswered) return false;
  const density = state.recent.length ? Math.max(...state.recent) : state.seededDensity;
  // against the most an answer is sized to hold, not the target: refusals before any density was known cut it
  return density !== undefined && span * density < LOGS_RANGE.blockLimitShare * topTarget(state.maxResults);
}

/**
 * The most blocks one call may ask: the provider's block limit, and below a block ceiling and a ceiling met lately
 * (a call may stretch past the range to leave no sliver of a chunk for a call of its own, never past these).
 *
 * @example longestSpan({ ...state, range: 1000, maxRange: 1100 }) // → 1100
 */
export function longestSpan(state: LogsRangeState): number {
  return Math.min(state.maxRange, belowCeiling(state.rangeCeiling), belowCeiling(state.ceiling));
}

/**
 * Whether a call may ask `span` blocks, past its range, to leave no sliver of a chunk for a call of its own: within
 * what a call may ask (`longestSpan`), and holding at most `LOGS_RANGE.stretch` times the target at the busiest logs
 * per block of the last answers (else the set's seeded logs per block; with neither known, as far as a call may ask).
 *
 * @example mayStretch({ ...state, range: 3219, target: 7000, recent: [2.17, 2.06, 2.06] }, 4018) // → false: about 8,720 logs, over 8,050
 */
export function mayStretch(state: LogsRangeState, span: number): boolean {
  if (span > longestSpan(state)) return false;
  const density = state.recent.length ? Math.max(...state.recent) : state.seededDensity;
  return density === undefined || span * density <= state.target * LOGS_RANGE.stretch;
}

/** The most blocks a range may have below a ceiling (a span refused): one less; no bound without one. */
function belowCeiling(ceiling: number | undefined): number {
  return ceiling === undefined ? Number.POSITIVE_INFINITY : Math.max(1, ceiling - 1);
}

function retry(state: LogsRangeState, asked: BlockSpan, because: Because): RangeDecision {
  return { action: 'retry', span: nextSpan(state, asked.fromBlock, asked.toBlock), because, state };
}

function unanswerable(block: number, contract: string | undefined, refusal: LogsRefusal): FatalError {
  const answer = refusal.timedOut ? refusal.message : `${refusal.code === undefined ? '' : `${refusal.code} `}${JSON.stringify(refusal.message)}`;
  const remedy = refusal.timedOut ? 'raise --rpc-timeout, or read this job from another node' : 'read this job from a node or provider with a larger eth_getLogs cap';
  return new FatalError(
    `eth_getLogs refuses the Transfer logs of contract ${contract ?? '(none named)'} in block ${block}, even alone (${answer}): no smaller query exists. ` +
      `To export this block, ${remedy}; committed progress is kept`,
    { details: { block, contract, code: refusal.code, providerMessage: refusal.message } },
  );
}

/** The most an answer is sized to hold: 70 % of the stated cap, else of 10,000. */
function topTarget(maxResults: number | undefined): number {
  return LOGS_RANGE.fill * (maxResults ?? LOGS_RANGE.results);
}

function spanOf(span: BlockSpan): number {
  return span.toBlock - span.fromBlock + 1;
}

function isCount(n: number): boolean {
  return Number.isSafeInteger(n) && n >= 1;
}
