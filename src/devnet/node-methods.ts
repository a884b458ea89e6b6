/**
 * The standard node methods the reference server answers besides Erigon's (node-source.md): `eth_getLogs`
 * with a provider's limits, `eth_getBlockByHash` / `eth_getBlockByNumber` (the header as the dataset holds
 * it) and `eth_call` of a token's metadata getters.
 */
import type { HeaderJson } from '../eth/header-fields.ts';
import type { ChainStore } from './chain-store.ts';
import type { StoredLog } from './chain-log.ts';
import { parseLogFilter, storedLogMatches } from './log-filter.ts';
import { LogsAnswer } from './logs-answer.ts';
import { type LogsLimits, logsLimitError } from './logs-limit-errors.ts';
import { addressArgument, arity, blockNumberArgument, hashArgument, isBlockTag } from './rpc-arguments.ts';
import { RpcFailure } from './rpc-errors.ts';
import { tokenCallAnswer } from './token-calls.ts';

/** What the node methods read: the chain, and the behaviour the server was started with. */
export interface NodeContext {
  chain: ChainStore;
  /** `true` when this lookup must answer "not found" (a lagging node behind a load balancer). */
  headerLags(hash: string): boolean;
  /** The provider's `eth_getLogs` limits and the style of its refusals; unset: no limits. */
  logsLimits?: LogsLimits | undefined;
  /** `true` when this `eth_getLogs` call (over more than one block) must hang. */
  logsHang?(): boolean;
}

/** Thrown by a method whose call must never be answered: the connection is left open, silent. */
export class RpcHang extends Error {
  constructor() {
    super('this call hangs: no answer');
  }
}

/** An `eth_getLogs` refused for being over a cap, saying which: `/__stats` counts refusals by it. */
export class LogsLimitFailure extends RpcFailure {
  constructor(
    readonly limit: 'range' | 'results',
    message: string,
    extra: { code: number; data?: unknown },
  ) {
    super('logsLimit', message, extra);
  }
}

/**
 * `eth_getLogs`: the matching logs in chain order (a `LogsAnswer`: JSON.stringify gives them as geth does). Over
 * `--logs-max-range` blocks, or over `--logs-max-results` logs, the style's error instead; a query over more than one
 * block may hang.
 */
export function getLogs(params: unknown[], ctx: NodeContext): LogsAnswer {
  const filter = parseLogFilter(params, ctx.chain);
  let from: number;
  let to: number;
  if ('hash' in filter.blocks) {
    const header = ctx.chain.headerByHash(filter.blocks.hash);
    if (!header) throw new RpcFailure('notFound', 'unknown block');
    // a block that left the chain has no logs the server still holds
    if (!ctx.chain.isCanonical(header.hash)) return new LogsAnswer([]);
    from = to = Number(BigInt(header.number!));
  } else {
    ({ from, to } = filter.blocks);
  }
  const limits = ctx.logsLimits;
  if (limits?.maxRange && to - from + 1 > limits.maxRange) throw limitFailure(limits, from, to, []);
  if (to > from && ctx.logsHang?.()) throw new RpcHang();
  const logs = ctx.chain.storedLogs(from, Math.min(to, ctx.chain.head()), filter.addresses).filter((l) => storedLogMatches(filter.topics, l));
  if (limits?.maxResults && logs.length > limits.maxResults) throw limitFailure(limits, from, to, logs);
  return new LogsAnswer(logs);
}

/**
 * The style's refusal of blocks `from` to `to`. Over the range cap the logs are not read (providers refuse
 * before reading), so a range suggested then keeps to the range cap only.
 */
function limitFailure(limits: LogsLimits, from: number, to: number, logs: readonly StoredLog[]): LogsLimitFailure {
  const error = logsLimitError(limits, { from, to, logBlocks: logs.map((l) => l.blockNumber) });
  if (!error) throw new TypeError(`blocks ${from}-${to} with ${logs.length} logs are within the limits`);
  return new LogsLimitFailure(error.limit, error.message, { code: error.code, data: error.data });
}

/** `eth_getBlockByHash [hash, fullTransactions]`: the block's header as given, or `null`. */
export function getBlockByHash(params: unknown[], ctx: NodeContext): unknown {
  arity(params, 2);
  const hash = hashArgument(params[0]);
  fullTransactionsArgument(params[1]);
  const header = ctx.headerLags(hash) ? undefined : ctx.chain.headerByHash(hash);
  return header ? block(header) : null;
}

/**
 * `eth_getBlockByNumber [number | tag, fullTransactions]`: the block's header as given, or `null`. A tag
 * names the highest block held at or below it (`latest`: the head).
 */
export function getBlockByNumber(params: unknown[], ctx: NodeContext): unknown {
  arity(params, 2);
  const number = blockNumberArgument(params[0], ctx.chain);
  fullTransactionsArgument(params[1]);
  const header = isBlockTag(params[0]) ? ctx.chain.headerAtOrBelow(number) : ctx.chain.headerByNumber(number);
  return header ? block(header) : null;
}

function fullTransactionsArgument(value: unknown): void {
  if (typeof value !== 'boolean') throw new RpcFailure('invalidParams', 'invalid argument 1: json: cannot unmarshal non-bool into Go value of type bool');
}

/**
 * A block as `eth_getBlockBy*` answers it: every key of the header as the dataset holds it, then an empty
 * `transactions` and `uncles` where the header has none (the server holds no transaction bodies).
 */
function block(header: HeaderJson): Record<string, unknown> {
  const out: Record<string, unknown> = { ...header };
  out.transactions ??= [];
  out.uncles ??= [];
  return out;
}

/** `eth_call [{ to, data | input }, block?, overrides?]`: a token's `name()`, `symbol()` or `decimals()`. */
export function call(params: unknown[], ctx: NodeContext): unknown {
  arity(params, 1, 3);
  const tx = params[0];
  if (tx === null || typeof tx !== 'object' || Array.isArray(tx)) {
    throw new RpcFailure('invalidParams', 'invalid argument 0: json: cannot unmarshal non-object into Go value of type ethapi.TransactionArgs');
  }
  const { to: rawTo, data, input } = tx as Record<string, unknown>;
  if (params[1] !== undefined && params[1] !== null && typeof params[1] !== 'object') blockNumberArgument(params[1], ctx.chain, 'invalid argument 1');
  if (rawTo === undefined || rawTo === null) return '0x';
  const to = addressArgument(rawTo, 'invalid argument 0: to');
  const payload = input ?? data ?? '0x';
  if (typeof payload !== 'string' || !/^0x(?:[0-9a-fA-F]{2})*$/.test(payload)) {
    throw new RpcFailure('invalidParams', 'invalid argument 0: json: cannot unmarshal invalid hex string into Go struct field TransactionArgs.data of type hexutil.Bytes');
  }
  const token = ctx.chain.token(to);
  const isContract = token !== undefined || ctx.chain.transfersOf(to).length > 0;
  const answer = tokenCallAnswer(to, payload, { token, isContract });
  if ('reverted' in answer) throw new RpcFailure('reverted', 'execution reverted');
  return answer.result;
}
