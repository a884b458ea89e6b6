/**
 * What a provider answers when an `eth_getLogs` query is over its limits: one row per provider of
 * node-source.md's table (code, message, hint), computed for the actual query. The reference server answers
 * with the row `--logs-error-style` names. A style with one message answers it for both limits, but QuickNode's,
 * whose message names the block range: over its results cap it says `eth_getLogs is limited to 10,000 results`.
 */
import { toQuantity } from '../eth/hex.ts';

export const LOGS_ERROR_STYLES = ['infura', 'alchemy', 'quicknode', 'ankr', 'reth', 'arbitrum'] as const;
export type LogsErrorStyle = (typeof LOGS_ERROR_STYLES)[number];

/** The style answered when a cap is set and no style is named. */
export const DEFAULT_LOGS_ERROR_STYLE: LogsErrorStyle = 'infura';

export interface LogsLimits {
  /** Most blocks one query may cover; unset: no limit. */
  maxRange?: number | undefined;
  /** Most logs one answer may hold; unset: no limit. */
  maxResults?: number | undefined;
  style: LogsErrorStyle;
}

export interface LogsQuery {
  /** Blocks asked, inclusive. */
  from: number;
  to: number;
  /** The block number of each log the query matches, in chain order. */
  logBlocks: readonly number[];
}

export interface LogsLimitError {
  /** Which limit the query is over. */
  limit: 'range' | 'results';
  code: number;
  message: string;
  data?: unknown;
}

/**
 * The error for a query over a limit (the block range first, as providers check it before reading logs),
 * or `undefined` when the query is within both.
 *
 * @example
 * logsLimitError({ maxResults: 2, style: 'infura' }, { from: 16, to: 32, logBlocks: [16, 17, 20, 30] })
 * // → { limit: 'results', code: -32005, message: 'query returned more than 2 results. Try with this block range [0x10, 0x13].', data: { from: '0x10', to: '0x13', limit: 2 } }
 */
export function logsLimitError(limits: LogsLimits, query: LogsQuery): LogsLimitError | undefined {
  const { maxRange, maxResults } = limits;
  if (maxRange && query.to - query.from + 1 > maxRange) return STYLES[limits.style]('range', maxRange, limits, query);
  if (maxResults && query.logBlocks.length > maxResults) return STYLES[limits.style]('results', maxResults, limits, query);
  return undefined;
}

/**
 * The widest range from `query.from` that fits under both limits: it ends before the block whose logs
 * overflow the results cap, and within the range cap; never empty, so when the first block alone overflows
 * it is that one block (which, for a one-block query, is the range asked).
 *
 * @example suggestedRange({ maxResults: 2, style: 'reth' }, { from: 16, to: 32, logBlocks: [16, 17, 20, 30] }) // → { from: 16, to: 19 }
 */
export function suggestedRange(limits: LogsLimits, query: LogsQuery): { from: number; to: number } {
  let to = query.to;
  if (limits.maxRange) to = Math.min(to, query.from + limits.maxRange - 1);
  const overflowing = limits.maxResults ? query.logBlocks[limits.maxResults] : undefined;
  if (overflowing !== undefined) to = Math.min(to, overflowing - 1);
  return { from: query.from, to: Math.max(to, query.from) };
}

type Style = (limit: 'range' | 'results', cap: number, limits: LogsLimits, query: LogsQuery) => LogsLimitError;

const STYLES: Readonly<Record<LogsErrorStyle, Style>> = {
  infura(limit, cap, limits, query) {
    if (limit === 'range') return { limit, code: -32602, message: `range ${query.to - query.from + 1} exceeds limit of ${cap}` };
    const r = suggestedRange(limits, query);
    return {
      limit,
      code: -32005,
      message: `query returned more than ${cap} results. Try with this block range [${toQuantity(r.from)}, ${toQuantity(r.to)}].`,
      data: { from: toQuantity(r.from), to: toQuantity(r.to), limit: cap },
    };
  },
  alchemy(limit, _cap, limits, query) {
    const r = suggestedRange(limits, query);
    return {
      limit,
      code: -32602,
      message:
        `Log response size exceeded. You can make eth_getLogs requests with up to a ${thousands(limits.maxRange ?? 2000)} block range and no limit on the ` +
        `response size, or you can request any block range with a cap of ${thousands(limits.maxResults ?? 10_000)} logs in the response. ` +
        `Based on your parameters, this block range should work: [${toQuantity(r.from)}, ${toQuantity(r.to)}]`,
    };
  },
  // its block-range refusal is the spec's row; over the results cap it says so in its own words, never as a range
  quicknode: (limit, cap) => ({
    limit,
    code: -32614,
    message: limit === 'range' ? `eth_getLogs is limited to a ${cap.toLocaleString('en-US')} range` : `eth_getLogs is limited to ${cap.toLocaleString('en-US')} results`,
  }),
  ankr: (limit) => ({ limit, code: -32600, message: 'block range is too wide' }),
  reth(limit, cap, limits, query) {
    if (limit === 'range') return { limit, code: -32602, message: `query exceeds max block range ${cap}` };
    const r = suggestedRange(limits, query);
    return { limit, code: -32602, message: `query exceeds max results ${cap}, retry with the range ${r.from}-${r.to}` };
  },
  arbitrum: (limit, cap) => ({ limit, code: -32000, message: `logs matched by query exceeds limit of ${cap}` }),
};

/** Alchemy's way of writing a limit: `2K` for 2000, the number itself when it is not whole thousands. */
function thousands(n: number): string {
  return n % 1000 === 0 ? `${n / 1000}K` : String(n);
}
