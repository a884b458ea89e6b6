import { LogsLimitFailure, RpcHang } from './node-methods.ts';
import { RPC_ERRORS, RpcFailure, rpcErrorBody, type RpcId } from './rpc-errors.ts';
import { rpcMethod, type RpcMethodContext } from './rpc-methods.ts';
import type { RefusalReason } from './stats.ts';

/** The most calls a batch may hold unless the server is told otherwise: geth's default (Erigon's is 100). */
const MAX_BATCH = 1000;

export interface RpcOutcome {
  status: number;
  /** `undefined` when nothing is answered (a notification). */
  body: unknown;
  /** `true` when the request must never be answered: a call in it hangs (`--logs-hang-rate`). */
  hang?: boolean;
}

export interface RpcObserver {
  call(method: string): void;
  /** A JSON-RPC error code, or `hang` for a call left unanswered. */
  error(code: number | 'hang'): void;
  /** A call of `method` answered with `result` (reported once its batch is answered). */
  answered(method: string, result: unknown): void;
  /** A call of `method` refused, or left unanswered (`hang`), and why (reported once its batch is answered, or hangs). */
  refused(method: string, reason: RefusalReason): void;
}

/** One call's outcome, with what became of it, reported by `handleRpcBody` once the whole body's fate is known. */
interface CallOutcome extends RpcOutcome {
  settled?: { method: string; result: unknown } | { method: string; reason: RefusalReason };
}

/**
 * Answers one JSON-RPC 2.0 HTTP body, single or batch. A single request gets the HTTP status of its
 * error (chain-api.md §2); a batch is answered 200 with one member per request that has an id. A batch of
 * more than `maxBatch` calls is refused as a whole: HTTP 400, one error -32600. A batch holding a call that
 * hangs hangs as a whole, as a node answers a batch only when every call in it is done.
 */
export function handleRpcBody(text: string, ctx: RpcMethodContext, observe: RpcObserver, maxBatch = MAX_BATCH): RpcOutcome {
  let parsed: unknown;
  try {
    parsed = JSON.parse(text);
  } catch {
    observe.error(RPC_ERRORS.parse.code);
    return { status: RPC_ERRORS.parse.status, body: rpcErrorBody(null, RPC_ERRORS.parse.code, 'parse error') };
  }
  if (Array.isArray(parsed)) {
    const problem = parsed.length === 0 ? 'empty batch' : parsed.length > maxBatch ? `batch too large (at most ${maxBatch})` : '';
    if (problem) {
      observe.error(RPC_ERRORS.invalidRequest.code);
      return { status: RPC_ERRORS.invalidRequest.status, body: rpcErrorBody(null, RPC_ERRORS.invalidRequest.code, problem) };
    }
    const answers = parsed.map((member) => answer(member, ctx, observe));
    // a batch that hangs answers none of its calls: only the hanging ones count, as refused
    const hang = answers.some((a) => a.hang);
    for (const a of answers) if (!hang || a.hang) settle(a, observe);
    if (hang) return { status: 0, body: undefined, hang: true };
    return { status: 200, body: answers.filter((a) => a.body !== undefined).map((a) => a.body) };
  }
  const outcome = answer(parsed, ctx, observe);
  settle(outcome, observe);
  return { status: outcome.status, body: outcome.body, ...(outcome.hang && { hang: true }) };
}

function settle({ settled }: CallOutcome, observe: RpcObserver): void {
  if (settled === undefined) return;
  if ('reason' in settled) observe.refused(settled.method, settled.reason);
  else observe.answered(settled.method, settled.result);
}

/** Why a call was refused, for `/__stats`: an `eth_getLogs` cap by which cap it was, any other error by its kind. */
function refusalReason(err: RpcFailure): RefusalReason {
  if (err instanceof LogsLimitFailure) return err.limit === 'results' ? 'resultsCap' : 'rangeCap';
  return err.kind;
}

function answer(request: unknown, ctx: RpcMethodContext, observe: RpcObserver): CallOutcome {
  const r = request as { jsonrpc?: unknown; method?: unknown; params?: unknown; id?: unknown } | null;
  const id = validId(r?.id);
  if (!r || typeof r !== 'object' || Array.isArray(r) || r.jsonrpc !== '2.0' || typeof r.method !== 'string' || id === undefined) {
    observe.error(RPC_ERRORS.invalidRequest.code);
    return {
      status: RPC_ERRORS.invalidRequest.status,
      body: rpcErrorBody(id ?? null, RPC_ERRORS.invalidRequest.code, 'invalid request'),
    };
  }
  const isNotification = !('id' in r);
  observe.call(r.method);
  try {
    const method = rpcMethod(r.method, ctx);
    if (r.params !== undefined && r.params !== null && !Array.isArray(r.params)) {
      throw new RpcFailure('invalidParams', 'non-array args');
    }
    const result = method((r.params as unknown[] | undefined) ?? [], ctx);
    return { status: 200, body: isNotification ? undefined : { jsonrpc: '2.0', id, result }, settled: { method: r.method, result } };
  } catch (err) {
    if (err instanceof RpcHang) {
      observe.error('hang');
      return { status: 0, body: undefined, hang: true, settled: { method: r.method, reason: 'hang' } };
    }
    if (!(err instanceof RpcFailure)) throw err;
    observe.error(err.code);
    return {
      status: RPC_ERRORS[err.kind].status,
      body: isNotification ? undefined : rpcErrorBody(id, err.code, err.message, err.data),
      settled: { method: r.method, reason: refusalReason(err) },
    };
  }
}

/** A request id: number, string or null; absent means a notification (also `null` here). */
function validId(id: unknown): RpcId | undefined {
  if (id === undefined || id === null) return null;
  if (typeof id === 'string' || (typeof id === 'number' && Number.isFinite(id))) return id;
  return undefined;
}
