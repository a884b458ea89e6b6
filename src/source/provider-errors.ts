/**
 * What providers answer when an `eth_getLogs` query is too large (node-source.md, "What providers answer"), read
 * into what the range controller (`logs-range.ts`) can use: a suggested range, a stated block-range limit, a
 * stated results cap, or none of these. Only the messages below count as "too large"; any other error (a rate
 * limit, a bad parameter, a node failure) is not one, so it is never answered by shrinking the range.
 */

/** An `eth_getLogs` call refused as too large (or left unanswered), with what the answer says about sizes. */
export interface LogsRefusal {
  /** The JSON-RPC error code, when there was an answer. */
  code: number | undefined;
  /** The provider's message as given (or what happened, for a timeout): for the error that may end a run. */
  message: string;
  /** A range the provider says would work, inclusive block numbers. */
  suggested?: { fromBlock: number; toBlock: number };
  /** The most blocks per call the provider states. */
  maxRange?: number;
  /** The most logs per answer the provider states. */
  maxResults?: number;
  /** No answer in time: treated as "too large" (the call is retried smaller). */
  timedOut?: true;
  /**
   * The message names the block range as what is too large, with no number (Ankr's `block range is too wide`, the OP
   * stack's `Block range is too large`): maybe a block limit the provider does not state (`logs-range.ts`).
   */
  blocks?: true;
}

type Reader = (match: RegExpMatchArray, into: LogsRefusal) => void;

const suggested: Reader = (m, into) => {
  const [fromBlock, toBlock] = [blockNumber(m[1]), blockNumber(m[2])];
  if (fromBlock !== undefined && toBlock !== undefined && fromBlock <= toBlock) into.suggested = { fromBlock, toBlock };
};
/** The first group that took part in the match: patterns with alternatives hold the number in one of several. */
const firstGroup = (m: RegExpMatchArray) => m.slice(1).find((group) => group !== undefined);
const maxRange: Reader = (m, into) => {
  const n = count(firstGroup(m));
  if (n !== undefined) into.maxRange = Math.min(n, into.maxRange ?? n);
};
const maxResults: Reader = (m, into) => {
  const n = count(firstGroup(m));
  if (n !== undefined) into.maxResults = Math.min(n, into.maxResults ?? n);
};
const tooLarge: Reader = () => {};
/** A block limit when it states its number, else a refusal that names blocks without one. */
const blocksMaybeLimit: Reader = (m, into) => {
  if (firstGroup(m) === undefined) into.blocks = true;
  else maxRange(m, into);
};
const blocksNamed: Reader = (_m, into) => {
  into.blocks = true;
};

/**
 * The messages, each with what it tells. The spec's table first (Infura, Alchemy, QuickNode, Ankr, reth,
 * Arbitrum, OP-stack), then limits other providers state, as `@ponder/utils`' `getLogsRetryHelper` (MIT)
 * records them. A limit "N" is read as N blocks per call, inclusive: one block short of what reth means
 * (`to − from ≤ N`), never one block over what another provider means.
 *
 * A number is a block range only where the message says blocks or a range: "limited to 10,000 results" is a
 * results cap, never a 10,000-block limit (a results cap read as a range would hold the range at as many
 * blocks as the cap has logs, and shrink it no further when the logs of fewer blocks still overflow it).
 */
const MESSAGES: readonly (readonly [RegExp, Reader])[] = [
  // Infura -32005, and zkSync: `query returned more than 10000 results. Try with this block range [0x…, 0x…].`
  [/try with this block range \[(0x[0-9a-f]+), *(0x[0-9a-f]+)\]/i, suggested],
  [/more than ([\d,]+) results/i, maxResults],
  // Infura -32602: `range 1000000 exceeds limit of 10000`
  [/\brange \d+ exceeds limit of ([\d,]+)/i, maxRange],
  // Alchemy -32602: `Log response size exceeded. … cap of 10K logs in the response. … this block range should work: [0x…, 0x…]`
  [/this block range should work: \[(0x[0-9a-f]+), *(0x[0-9a-f]+)\]/i, suggested],
  [/cap of ([\d,]+k?) logs/i, maxResults],
  // QuickNode -32614: `eth_getLogs is limited to a 10,000 range`; 1RPC `… limited to a 1000 blocks range`; BlockPI
  // `… limited to 1024 block range`
  [/limited to (?:a )?([\d,]+) (?:blocks? )?range|limited to ([\d,]+) blocks?\b/i, maxRange],
  // QuickNode's results cap, -32614: `eth_getLogs is limited to 10,000 results` (or logs): a results cap, not a range
  [/limited to (?:a )?([\d,]+) (?:results|logs)\b/i, maxResults],
  // Ankr -32600: `block range is too wide` (Moonbeam adds `(maximum 1024)`)
  [/block range is too wide(?: \(maximum ([\d,]+)\))?/i, blocksMaybeLimit],
  // reth -32602: `query exceeds max results 20000, retry with the range 25766988-25775072` (LlamaRPC, Ankr and
  // others the same, some without the number)
  [/max results(?::? ([\d,]+))?/i, maxResults],
  [/retry with the range (\d+)-(\d+)/i, suggested],
  // reth -32602: `query exceeds max block range 100000`; Cloudflare `Max range: 3500`; PublicNode `maximum block range: 50000`;
  // Tron `exceed max block range: 5000`
  [/max(?:imum)? (?:block )?range:? ([\d,]+)/i, maxRange],
  // Arbitrum (nitro) -32000: `logs matched by query exceeds limit of 10000`
  [/logs matched by query exceeds limit of ([\d,]+)/i, maxResults],
  // OP-stack providers -32000: `backend response too large` / `Block range is too large`; Base, Monad: `block range too large`
  [/backend response too large/i, tooLarge],
  [/block range (?:is )?too large/i, blocksNamed],
  // Coinbase `please limit the query to at most 1000 blocks`, Avalanche `requested too many blocks from 0 to 5000,
  // maximum is set to 2048`, dRPC `ranges over 10000 blocks are not supported on freetier`
  [/at most ([\d,]+) blocks|too many blocks from \d+ to \d+, maximum is set to ([\d,]+)|ranges over ([\d,]+) blocks/i, maxRange],
  // thirdweb `Maximum allowed number of requested blocks is 1000`, Ankr (TAC) `maximum [from, to] blocks distance: 10000`,
  // Swell `block range greater than 1000 max`, Somnia `block range exceeds 1000`, Merkle `eth_getLogs range is too
  // large, max is 10k blocks`, Harmony `query must be smaller than size 1024`, Blast (paid) `exceeds the range
  // allowed for your plan (5000 > 1000)`
  [
    /requested blocks is ([\d,]+)|blocks distance: ([\d,]+)|block range greater than ([\d,]+) max|block range exceeds ([\d,]+)|max is ([\d,]+k?) blocks|smaller than size ([\d,]+)|allowed for your plan \(\d+ > ([\d,]+)\)/i,
    maxRange,
  ],
  // Chainstack `Block range limit exceeded.`, Altitude and eRPC `(allowed block) range threshold exceeded`, 1RPC
  // `response size should not greater than 10000000 bytes`: too large, no number of blocks or logs
  [/block range limit exceeded|range threshold exceeded/i, blocksNamed],
  [/response size should not greater than/i, tooLarge],
];

/**
 * Reads a JSON-RPC error of `eth_getLogs` as a refusal for size, or `undefined` when it is not one. The
 * message (and a text `data`, where some providers put details) is matched against the known messages; every
 * match adds what it tells, so Infura's -32005 gives both its results cap and its suggested range.
 *
 * @example
 * parseLogsRefusal({ code: -32005, message: 'query returned more than 10000 results. Try with this block range [0x11d8f10, 0x11d9b5c].' })
 * // → { code: -32005, message: 'query returned …', maxResults: 10000, suggested: { fromBlock: 18714384, toBlock: 18717532 } }
 * parseLogsRefusal({ code: -32005, message: 'daily request count exceeded, request rate limited' }) // → undefined
 */
export function parseLogsRefusal(error: { code?: unknown; message?: unknown; data?: unknown }): LogsRefusal | undefined {
  const message = typeof error.message === 'string' ? error.message : '';
  const text = typeof error.data === 'string' ? `${message} ${error.data}` : message;
  const refusal: LogsRefusal = { code: typeof error.code === 'number' ? error.code : undefined, message };
  let known = false;
  for (const [pattern, read] of MESSAGES) {
    const match = text.match(pattern);
    if (match === null) continue;
    known = true;
    read(match, refusal);
  }
  return known ? refusal : undefined;
}

/**
 * A call that got no answer in time, as a refusal: the range controller retries it smaller.
 *
 * @example timeoutRefusal(30_000) // → { code: undefined, message: 'no answer within 30 s', timedOut: true }
 */
export function timeoutRefusal(timeoutMs: number): LogsRefusal {
  return { code: undefined, message: `no answer within ${timeoutMs % 1000 === 0 ? `${timeoutMs / 1000} s` : `${timeoutMs} ms`}`, timedOut: true };
}

/** `10,000`, `10000` or `10K` → 10000; undefined when not a positive safe integer. */
function count(text: string | undefined): number | undefined {
  if (text === undefined) return undefined;
  const thousands = /k$/i.test(text);
  const n = Number(text.replace(/[,kK]/g, '')) * (thousands ? 1000 : 1);
  return Number.isSafeInteger(n) && n > 0 ? n : undefined;
}

/** `0x11d8f10` or `25766988` → a block number; undefined when out of range. */
function blockNumber(text: string | undefined): number | undefined {
  if (text === undefined) return undefined;
  const n = Number(text);
  return Number.isSafeInteger(n) && n >= 0 ? n : undefined;
}
