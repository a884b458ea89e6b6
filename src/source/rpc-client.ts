import { FatalError } from '../common/errors.ts';
import { BadResponseError, BatchRefusedError, HttpStatusError } from './errors.ts';
import type { HttpClient } from './http-client.ts';
import { show } from '../dataset/validate.ts';

/** JSON-RPC codes with a meaning here (chain-api.md §2). */
const RPC_CODES = {
  methodNotFound: -32601,
  /** Erigon's "block header not found". */
  notFound: -32000,
  /** A request the server will not take: for a batch of well-formed calls, the batch's size. */
  invalidRequest: -32600,
} as const;

export interface RpcClient {
  /** The chain head, or undefined when the endpoint has no `eth_blockNumber`. */
  blockNumber(): Promise<number | undefined>;
  /**
   * The raw header of each hash (unchecked: see `checkHeader`), or null when the node does not know it.
   * Keys are the hashes as given; a hash given twice is asked for once.
   */
  headersByHash(hashes: readonly string[]): Promise<Map<string, unknown | null>>;
  /** `erigon_getHeaderByHash` calls per POST: callers that queue hashes send them in groups of this size. */
  readonly batchSize: number;
}

export interface RpcClientDeps {
  http: HttpClient;
  /** `erigon_getHeaderByHash` calls per POST (default 100). */
  batchSize?: number;
}

interface RpcAnswer {
  id?: unknown;
  result?: unknown;
  error?: { code?: unknown; message?: unknown };
}

/**
 * The JSON-RPC calls the exporter makes: the chain head, and block headers by hash in batches of at most
 * `batchSize` calls per POST, answers matched by id in any order. Counts `headerCalls` in `http.counters`
 * (one per call sent; the HTTP client counts the POSTs).
 *
 * @example
 * const rpc = createRpcClient({ http, batchSize: 100 });
 * await rpc.blockNumber(); // → 19000000
 * await rpc.headersByHash(['0xd4e5…8fa3', '0xffff…']); // → Map { '0xd4e5…8fa3' => { number: '0x0', … }, '0xffff…' => null }
 */
export function createRpcClient({ http, batchSize = 100 }: RpcClientDeps): RpcClient {
  if (!Number.isSafeInteger(batchSize) || batchSize < 1) throw new RangeError(`batchSize must be a positive integer, got ${batchSize}`);
  return {
    batchSize,

    async blockNumber() {
      let answer: unknown;
      try {
        answer = await http.postJson({ jsonrpc: '2.0', id: 1, method: 'eth_blockNumber', params: [] });
      } catch (err) {
        if (err instanceof HttpStatusError && err.apiCode === RPC_CODES.methodNotFound) return undefined;
        throw err;
      }
      const a = (answer ?? {}) as RpcAnswer;
      if (a.error && typeof a.error === 'object') {
        if (a.error.code === RPC_CODES.methodNotFound) return undefined;
        throw new BadResponseError(`eth_blockNumber failed: JSON-RPC error ${show(a.error.code)} ${show(a.error.message)}`);
      }
      if (typeof a.result !== 'string' || !/^0x(?:0|[1-9a-fA-F][0-9a-fA-F]{0,12})$/.test(a.result)) {
        throw new BadResponseError('eth_blockNumber answered a malformed result', [`result: expected a 0x hex block number, got ${show(a.result)}`]);
      }
      return Number.parseInt(a.result.slice(2), 16);
    },

    async headersByHash(hashes) {
      const unique = [...new Set(hashes)];
      const out = new Map<string, unknown | null>();
      for (let start = 0; start < unique.length; start += batchSize) {
        const batch = unique.slice(start, start + batchSize);
        const calls = batch.map((hash, i) => ({ jsonrpc: '2.0', id: i + 1, method: 'erigon_getHeaderByHash', params: [hash] }));
        http.counters.headerCalls += calls.length;
        let answer: unknown;
        try {
          answer = await http.postJson(calls);
        } catch (err) {
          if (err instanceof HttpStatusError && err.apiCode === RPC_CODES.methodNotFound) throw noErigon(err.apiMessage);
          if (calls.length > 1 && err instanceof HttpStatusError && refusesBatch(err.apiCode, err.apiMessage)) {
            throw new BatchRefusedError(calls.length, `HTTP ${err.status}, ${show(err.apiCode)} ${show(err.apiMessage)}`);
          }
          throw err;
        }
        const missing = [answer].flat().find((a) => (a as RpcAnswer | null)?.error?.code === RPC_CODES.methodNotFound) as RpcAnswer | undefined;
        if (missing) throw noErigon(missing.error?.message);
        const refusal = calls.length > 1 ? batchRefusal(answer) : undefined;
        if (refusal) throw new BatchRefusedError(calls.length, refusal);
        for (const [hash, header] of matchAnswers(batch, answer)) out.set(hash, header);
      }
      return out;
    },
  };
}

/**
 * The endpoint has no `erigon_getHeaderByHash` (JSON-RPC -32601): a node that is not Erigon. Not the data's fault, and
 * no retry helps: the builder source cannot read headers there, a node source can.
 */
function noErigon(message: unknown): FatalError {
  return new FatalError(
    `CHAIN_API_URL does not serve erigon_getHeaderByHash (JSON-RPC -32601 ${show(message)}), which the builder source reads block headers with. ` +
      'Read this job from that endpoint as a node (`--source node`, or "source": "node" in the job file), or point CHAIN_API_URL at the builder API. ' +
      'The transfers committed so far are kept; the next run that can read headers fetches theirs.',
    { details: { method: 'erigon_getHeaderByHash', code: RPC_CODES.methodNotFound } },
  );
}

/**
 * A batch refused as a whole, answered 200: one error in place of the answers, alone or as a batch of one.
 * geth answers -32600 "batch too large"; Erigon -32000 "batch limit 100 exceeded (can increase by
 * --rpc.batch.limit) …", the code it also uses for an unknown block, so its message decides. Well-formed
 * calls get -32600 for nothing else. Undefined for any other answer.
 */
function batchRefusal(answer: unknown): string | undefined {
  const single = Array.isArray(answer) && answer.length === 1 ? (answer[0] as unknown) : answer;
  const error = (single as RpcAnswer | null)?.error;
  if (!error || typeof error !== 'object' || !refusesBatch(error.code, error.message)) return undefined;
  return `${show(error.code)} ${show(error.message)}`;
}

/** An error that refuses a batch of well-formed calls: -32600, or a message about the batch's size. */
function refusesBatch(code: unknown, message: unknown): boolean {
  return code === RPC_CODES.invalidRequest || (typeof message === 'string' && /\bbatch\b.*\b(limit|too large|size)\b/i.test(message));
}

/** Pairs each hash with its answer by id; throws one BadResponseError listing every problem. */
function matchAnswers(batch: readonly string[], answer: unknown): Map<string, unknown | null> {
  const summary = `erigon_getHeaderByHash answered a malformed batch of ${batch.length} call${batch.length === 1 ? '' : 's'}`;
  if (!Array.isArray(answer)) {
    const error = (answer as RpcAnswer | null)?.error;
    const what = error ? `a single JSON-RPC error ${show(error.code)} ${show(error.message)}` : show(answer);
    throw new BadResponseError(summary, [`body: expected a JSON array of answers, got ${what}`]);
  }
  const byId = new Map<unknown, RpcAnswer>();
  const problems: string[] = [];
  for (const member of answer as unknown[]) {
    const a = member as RpcAnswer | null;
    if (a === null || typeof a !== 'object' || !('id' in a)) {
      problems.push(`answer ${show(member)}: expected a JSON-RPC answer with an id`);
      continue;
    }
    if (byId.has(a.id)) problems.push(`answer id ${show(a.id)}: answered twice`);
    byId.set(a.id, a);
  }
  const out = new Map<string, unknown | null>();
  batch.forEach((hash, i) => {
    const a = byId.get(i + 1);
    const where = `block ${hash}`;
    if (!a) {
      problems.push(`${where}: no answer with id ${i + 1}`);
      return;
    }
    if (a.error !== undefined && a.error !== null) {
      if (a.error.code === RPC_CODES.notFound) out.set(hash, null);
      else problems.push(`${where}: JSON-RPC error ${show(a.error.code)} ${show(a.error.message)}`);
      return;
    }
    if (a.result === null) out.set(hash, null);
    else if (a.result === undefined || typeof a.result !== 'object' || Array.isArray(a.result)) {
      problems.push(`${where}, result: expected a header object or null, got ${show(a.result)}`);
    } else out.set(hash, a.result);
  });
  if (problems.length) throw new BadResponseError(summary, problems);
  return out;
}
