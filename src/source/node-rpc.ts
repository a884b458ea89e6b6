import { FatalError, RetryableError } from '../common/errors.ts';
import { show } from '../dataset/validate.ts';
import { TRANSFER_TOPIC } from '../eth/logs-bloom.ts';
import { BadResponseError, describeContext, HttpStatusError, ResponseTooLargeError, type ErrorContext } from './errors.ts';
import { CallTimeoutError, type CallOptions, type HttpClient } from './http-client.ts';
import type { ElementReader } from './json-body.ts';
import { readLogBytes } from './log-bytes.ts';
import { parseLogsRefusal, timeoutRefusal, type LogsRefusal } from './provider-errors.ts';
import { readLogElement, type ReadLog } from './transfer-log.ts';

/**
 * The single JSON-RPC calls of the node source (node-source.md, "Methods"): the chain id, the head, and one
 * `eth_getLogs` of a contract's Transfer logs, answered as logs or as a refusal for size. Every request goes
 * through the HTTP client, which retries 429, 5xx and network failures.
 */

/** JSON-RPC codes with a meaning here. */
export const RPC_CODES = {
  methodNotFound: -32601,
  invalidRequest: -32600,
  invalidParams: -32602,
} as const;

export interface RpcErrorBody {
  code: unknown;
  message: unknown;
  data?: unknown;
}

export type RpcOutcome = { result: unknown } | { error: RpcErrorBody };

/**
 * One JSON-RPC call: its result, or the JSON-RPC error it was answered with, whether in a 200 answer or in an
 * HTTP 4xx carrying a JSON-RPC code (nodes answer -32601 and -32602 so). 401, 403, 408, 429, 5xx and transport
 * failures are thrown, as the HTTP client raises them.
 *
 * @example await rpcCall(http, 'eth_chainId', []) // → { result: '0x1' }
 */
export async function rpcCall(http: HttpClient, method: string, params: unknown[], context?: ErrorContext, options?: CallOptions): Promise<RpcOutcome> {
  let answer: unknown;
  try {
    answer = await http.postJson({ jsonrpc: '2.0', id: 1, method, params }, context, options);
  } catch (err) {
    if (err instanceof HttpStatusError && typeof err.apiCode === 'number' && err.status >= 400 && err.status < 500 && ![401, 403, 408, 429].includes(err.status)) {
      return { error: { code: err.apiCode, message: err.apiMessage } };
    }
    throw err;
  }
  const a = (answer ?? {}) as { result?: unknown; error?: unknown };
  if (a.error !== undefined && a.error !== null) {
    const e = (typeof a.error === 'object' ? a.error : { message: a.error }) as { code?: unknown; message?: unknown; data?: unknown };
    return { error: { code: e.code, message: e.message, data: e.data } };
  }
  if (!('result' in a) || Array.isArray(answer))
    throw new BadResponseError(`${method} answered no result`, [`body: expected a JSON-RPC answer with a result or an error, got ${show(answer)}`]);
  return { result: a.result };
}

/** A hex quantity up to 2^53−1, or undefined. */
export function readQuantity(value: unknown): number | undefined {
  if (typeof value !== 'string' || !/^0x(?:0|[1-9a-fA-F][0-9a-fA-F]{0,13})$/.test(value)) return undefined;
  const n = Number(value);
  return Number.isSafeInteger(n) ? n : undefined;
}

/** A call answered with an error that is not about its size: a bad request repeats, anything else (a lagging or failing node) may pass. */
export function rpcFailure(what: string, error: RpcErrorBody): FatalError | RetryableError {
  const text = `${what} failed: JSON-RPC error ${show(error.code)} ${show(error.message)}`;
  const fatal = error.code === RPC_CODES.methodNotFound || error.code === RPC_CODES.invalidRequest || error.code === RPC_CODES.invalidParams;
  return fatal ? new FatalError(`${text}: the node does not take this request`) : new RetryableError(`${text}: the node may answer it later`);
}

/** The newest block number (`eth_blockNumber`). */
export async function blockNumber(http: HttpClient): Promise<number> {
  const outcome = await rpcCall(http, 'eth_blockNumber', []);
  if ('error' in outcome) throw rpcFailure('eth_blockNumber', outcome.error);
  const head = readQuantity(outcome.result);
  if (head === undefined) throw new BadResponseError('eth_blockNumber answered a malformed result', [`result: expected a 0x hex block number, got ${show(outcome.result)}`]);
  return head;
}

/** The chain id (`eth_chainId`): a number, or a bigint when larger than 2^53−1. */
export async function chainId(http: HttpClient): Promise<bigint | number> {
  const outcome = await rpcCall(http, 'eth_chainId', []);
  if ('error' in outcome) throw rpcFailure('eth_chainId', outcome.error);
  if (typeof outcome.result !== 'string' || !/^0x[0-9a-fA-F]{1,64}$/.test(outcome.result)) {
    throw new BadResponseError('eth_chainId answered a malformed result', [`result: expected a 0x hex chain id, got ${show(outcome.result)}`]);
  }
  const id = BigInt(outcome.result);
  return id <= BigInt(Number.MAX_SAFE_INTEGER) ? Number(id) : id;
}

/**
 * `eth_chainId` asked once: the first answer (or failure) is every later call's. A source serves one run or one task,
 * and the chain an endpoint serves does not change under it.
 */
export function chainIdOnce(http: HttpClient): () => Promise<bigint | number> {
  let asked: Promise<bigint | number> | undefined;
  return () => (asked ??= chainId(http));
}

/** The blocks and contracts of one `eth_getLogs` call, inclusive. */
export interface LogsCall {
  contracts: readonly string[];
  fromBlock: number;
  toBlock: number;
}

/**
 * An answer's logs: the raw `result`, and, when the HTTP client read them as it parsed the answer, each log as
 * `readLogElement` read it (the raw elements then left undefined: JSON has no such value), for `readLogsAnswer`.
 */
export type LogsOutcome = { logs: unknown; read?: ReadLog[] } | { refusal: LogsRefusal };

/**
 * One `eth_getLogs` of the contracts' Transfer logs over `call`'s blocks, with `timeoutMs` to answer: the logs (the
 * raw result, for `readLogsAnswer`), or a refusal for size (one of the providers' messages, an answer over the
 * response size limit, or no answer in time). Any other JSON-RPC error is thrown (`rpcFailure`). Counts the call, and the refusal.
 *
 * @example await getTransferLogs(http, { contracts: ['0xa0b8…', '0xdac1…'], fromBlock: 17000000, toBlock: 17001999 }, 30_000) // → { refusal: { code: -32005, maxResults: 10000, … } }
 */
export async function getTransferLogs(http: HttpClient, call: LogsCall, timeoutMs: number): Promise<LogsOutcome> {
  const filter = { address: call.contracts, topics: [TRANSFER_TOPIC], fromBlock: hex(call.fromBlock), toBlock: hex(call.toBlock) };
  const [first, ...more] = call.contracts;
  const context = { contract: more.length ? `${first} and ${more.length} more` : first, fromBlock: call.fromBlock, toBlock: call.toBlock };
  const counters = http.counters;
  counters.logsCalls = (counters.logsCalls ?? 0) + 1;
  let outcome: RpcOutcome | undefined;
  let refusal: LogsRefusal | undefined;
  const logs = createLogsReader();
  try {
    outcome = await rpcCall(http, 'eth_getLogs', [filter], context, { timeoutMs, resultElement: logs.element });
  } catch (err) {
    // an answer too large to read is a refusal for size the node did not state: fewer blocks are asked
    if (err instanceof ResponseTooLargeError) refusal = { code: undefined, message: `an answer larger than the response size limit of ${err.limitBytes} bytes` };
    else if (err instanceof CallTimeoutError) refusal = timeoutRefusal(timeoutMs);
    else throw err;
  }
  if (outcome !== undefined && 'result' in outcome) {
    const result = outcome.result;
    const read = logs.read();
    // a client that does not read as it parses (CallOptions.resultElement) leaves the logs as they came
    const readAsParsed = Array.isArray(result) && read.length === result.length && result.every((l) => l === undefined);
    return readAsParsed ? { logs: result, read } : { logs: result };
  }
  if (outcome !== undefined) {
    refusal = parseLogsRefusal(outcome.error);
    if (refusal === undefined) throw rpcFailure(`eth_getLogs (${describeContext(context)})`, outcome.error);
  }
  counters.logsRefused = (counters.logsRefused ?? 0) + 1;
  if (refusal?.timedOut) counters.logsTimedOut = (counters.logsTimedOut ?? 0) + 1;
  return { refusal: refusal! };
}

/**
 * What reads an `eth_getLogs` answer's logs as the HTTP client parses it (`CallOptions.resultElement`): each log read
 * (`readLogElement`, or `readLogBytes` from the bytes of a group of them) and kept at its index, the raw log given back
 * as undefined, so an answer's raw logs are never all alive at once. An answer parsed again (a retried request, a body
 * parsed a second way) is read again from its first log.
 *
 * @example const logs = createLogsReader(); await rpcCall(http, 'eth_getLogs', [filter], context, { resultElement: logs.element }); logs.read() // → [ReadLog, …]
 */
export function createLogsReader(): { element: ElementReader; read(): ReadLog[] } {
  let read: ReadLog[] = [];
  const element: ElementReader = (value: unknown, index: number): undefined => {
    if (index === 0) read = [];
    read[index] = readLogElement(value, index);
    return undefined;
  };
  element.fromBytes = (bytes, from, to, count, index) => {
    const logs = readLogBytes(bytes, from, to, count);
    if (logs === undefined) return undefined;
    if (index === 0) read = [];
    for (let k = 0; k < count; k++) read[index + k] = logs[k]!;
    return new Array<undefined>(count).fill(undefined);
  };
  return { element, read: () => read };
}

function hex(n: number): string {
  return `0x${n.toString(16)}`;
}
