/**
 * The `eth_getLogs` filter object, read as geth reads it (the JSON-RPC spec): `address` one or many,
 * `topics` by position with `null` wildcards and OR-arrays, `fromBlock`/`toBlock` as hex or tags (both
 * `latest` when absent), or `blockHash` alone.
 */
import { type StoredLog, storedTopic, storedTopicCount } from './chain-log.ts';
import { addressArgument, blockNumberArgument, hashArgument, type TagChain } from './rpc-arguments.ts';
import { RpcFailure } from './rpc-errors.ts';

export interface LogFilter {
  /** Blocks asked, inclusive, unless the filter names one block by `blockHash`. */
  blocks: { from: number; to: number } | { hash: string };
  /** Emitters kept; `undefined` keeps every address. */
  addresses: ReadonlySet<string> | undefined;
  /** One entry per topic position: the values accepted there, or `null` for any. */
  topics: readonly (ReadonlySet<string> | null)[];
}

const WHERE = 'invalid argument 0';
/** geth's limit on topic positions (a log has at most four topics). */
const MAX_TOPICS = 4;

/**
 * The filter of `eth_getLogs` params; throws -32602 with geth's message for a bad one.
 *
 * @example
 * parseLogFilter([{ address: '0xC02a…', topics: [TRANSFER, null, [a, b]], fromBlock: '0x1', toBlock: 'latest' }], chain)
 * // → { blocks: { from: 1, to: chain.head() }, addresses: Set { '0xc02a…' }, topics: [Set {TRANSFER}, null, Set {a, b}] }
 */
export function parseLogFilter(params: unknown[], chain: TagChain): LogFilter {
  if (params.length !== 1) {
    throw new RpcFailure('invalidParams', params.length ? 'too many arguments, want at most 1' : 'missing value for required argument 0');
  }
  const raw = params[0];
  if (raw === null || typeof raw !== 'object' || Array.isArray(raw)) {
    throw new RpcFailure('invalidParams', `${WHERE}: json: cannot unmarshal ${Array.isArray(raw) ? 'array' : typeof raw} into Go value of type filters.FilterCriteria`);
  }
  const f = raw as Record<string, unknown>;
  const present = (key: string) => f[key] !== undefined && f[key] !== null;
  let blocks: LogFilter['blocks'];
  if (present('blockHash')) {
    if (present('fromBlock') || present('toBlock')) {
      throw new RpcFailure('invalidParams', `${WHERE}: cannot specify both BlockHash and FromBlock/ToBlock, choose one or the other`);
    }
    blocks = { hash: hashArgument(f.blockHash, WHERE) };
  } else {
    const from = blockNumberArgument(present('fromBlock') ? f.fromBlock : 'latest', chain, WHERE);
    const to = blockNumberArgument(present('toBlock') ? f.toBlock : 'latest', chain, WHERE);
    if (from > to) throw new RpcFailure('invalidParams', 'invalid block range params');
    blocks = { from, to };
  }
  return { blocks, addresses: addressesOf(f.address), topics: topicsOf(f.topics) };
}

function addressesOf(value: unknown): ReadonlySet<string> | undefined {
  if (value === undefined || value === null) return undefined;
  if (typeof value === 'string') return new Set([addressArgument(value, `${WHERE}: invalid address`)]);
  if (!Array.isArray(value)) throw new RpcFailure('invalidParams', `${WHERE}: invalid addresses in query`);
  // an empty list filters nothing, as in geth
  if (value.length === 0) return undefined;
  return new Set(value.map((a, i) => addressArgument(a, `${WHERE}: invalid address at index ${i}`)));
}

function topicsOf(value: unknown): (ReadonlySet<string> | null)[] {
  if (value === undefined || value === null) return [];
  if (!Array.isArray(value)) throw new RpcFailure('invalidParams', `${WHERE}: invalid topic(s)`);
  if (value.length > MAX_TOPICS) throw new RpcFailure('invalidParams', `${WHERE}: exceed max topics`);
  return value.map((position: unknown, i) => {
    if (position === null) return null;
    if (typeof position === 'string') return new Set([hashArgument(position, `${WHERE}: invalid topic ${i}`)]);
    if (!Array.isArray(position)) throw new RpcFailure('invalidParams', `${WHERE}: invalid topic(s)`);
    // a null among the alternatives, or no alternative at all, matches any topic there
    if (position.length === 0 || position.includes(null)) return null;
    return new Set(position.map((t: unknown) => hashArgument(t, `${WHERE}: invalid topic ${i}`)));
  });
}

/**
 * Whether a log's topics fit the filter's positions: a log with fewer topics than the filter has positions
 * never fits; a position left `null` fits anything.
 *
 * @example topicsMatch([new Set([TRANSFER]), null, null], [TRANSFER, from, to, tokenId]) // → true
 */
export function topicsMatch(filter: LogFilter['topics'], topics: readonly string[]): boolean {
  return topicsFit(filter, topics.length, (i) => topics[i]!);
}

/** `topicsMatch` of a stored log's topics, a transfer's made only for the positions the filter names. */
export function storedLogMatches(filter: LogFilter['topics'], log: StoredLog): boolean {
  return topicsFit(filter, storedTopicCount(log), (i) => storedTopic(log, i));
}

function topicsFit(filter: LogFilter['topics'], count: number, topic: (i: number) => string): boolean {
  if (filter.length > count) return false;
  return filter.every((accepted, i) => accepted === null || accepted.has(topic(i)));
}
