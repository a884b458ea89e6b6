import { show } from '../dataset/validate.ts';
import { BadResponseError, HttpStatusError } from './errors.ts';
import type { HttpClient } from './http-client.ts';
import { RPC_CODES, rpcCall } from './node-rpc.ts';

/**
 * Block headers from a node (node-source.md, "Methods"): `erigon_getHeaderByHash` where it exists, else
 * `eth_getBlockByHash(hash, false)` with the block's body keys dropped, so both give the header as Erigon
 * answers it. Asked in JSON-RPC batches that halve when the node refuses one, and remembered until served: the
 * page that needed a header (for its time and bloom) fetches it, and the pipeline's header queue, asking right
 * after the page is committed, is answered from memory (and the header forgotten: the source keeps what its
 * pages need of it). A hash being fetched is not asked again meanwhile.
 */

export interface NodeHeaders {
  /** Raw headers by hash (unchecked), null when the node does not know the block; fetched once while remembered. */
  get(hashes: readonly string[]): Promise<Map<string, unknown | null>>;
  /** As `get`, for the pipeline: what it is given is forgotten (it stores the headers). */
  serve(hashes: readonly string[]): Promise<Map<string, unknown | null>>;
  /** Whether the block's header was fetched (the node knew it) and is remembered, or is being fetched. */
  holds(hash: string): boolean;
  /** Calls per POST now: the configured size, halved at each batch the node refused. */
  readonly batchSize: number;
  /** Whether the node answers `erigon_getHeaderByHash` (asked once, with one call, when not known yet). */
  supportsErigon(): Promise<boolean>;
  /** The method headers come by now: `erigon_getHeaderByHash` until the node refused it, then `eth_getBlockByHash`. */
  method(): HeaderMethod;
}

export type HeaderMethod = 'erigon_getHeaderByHash' | 'eth_getBlockByHash';

/** What a block answer holds beyond its header (`eth_getBlockByHash`): dropped. */
const BODY_KEYS = ['transactions', 'uncles', 'withdrawals', 'size', 'totalDifficulty'] as const;

/** Erigon's "block header not found". */
const NOT_FOUND = -32000;

/**
 * Headers remembered until the pipeline asks for them, at most (about 2 KB each). A run whose warehouse has
 * the headers already (a re-run) never asks: the oldest go.
 */
const REMEMBERED = 8_192;

interface RpcAnswer {
  id?: unknown;
  result?: unknown;
  error?: { code?: unknown; message?: unknown } | null;
}

/**
 * @example
 * const headers = createNodeHeaders({ http, batchSize: 100 });
 * await headers.get(['0xd4e5…8fa3']); // → Map { '0xd4e5…8fa3' => { number: '0x0', hash: '0xd4e5…8fa3', … } }
 */
export function createNodeHeaders(deps: { http: HttpClient; batchSize: number; remembered?: number }): NodeHeaders {
  const { http } = deps;
  if (!Number.isSafeInteger(deps.batchSize) || deps.batchSize < 1) throw new RangeError(`headerBatchSize must be a positive integer, got ${deps.batchSize}`);
  const limits = deps.remembered ?? REMEMBERED;
  let batchSize = deps.batchSize;
  // undefined until the node tells: erigon_getHeaderByHash is tried first, with one call (see fetchBatch)
  let erigon: boolean | undefined;
  const unserved = new Map<string, unknown>();
  const inFlight = new Map<string, Promise<unknown | null>>();

  const remember = (hash: string, header: unknown) => {
    unserved.delete(hash);
    unserved.set(hash, header);
    if (unserved.size > limits) unserved.delete(unserved.keys().next().value!);
  };

  /** One POST of `batch`: the headers, or 'refused' when the node refuses a batch this large. */
  async function post(batch: readonly string[]): Promise<Map<string, unknown | null> | 'refused'> {
    const method = erigon === false ? 'eth_getBlockByHash' : 'erigon_getHeaderByHash';
    const calls = batch.map((hash, i) => ({ jsonrpc: '2.0', id: i + 1, method, params: method === 'erigon_getHeaderByHash' ? [hash] : [hash, false] }));
    http.counters.headerCalls += calls.length;
    let answer: unknown;
    try {
      answer = await http.postJson(calls);
    } catch (err) {
      if (!(err instanceof HttpStatusError)) throw err;
      if (method === 'erigon_getHeaderByHash' && err.apiCode === RPC_CODES.methodNotFound) return fallBack(batch);
      if (calls.length > 1 && refusesBatch(err.apiCode, err.apiMessage)) return 'refused';
      throw err;
    }
    const members = Array.isArray(answer) ? (answer as RpcAnswer[]) : [answer as RpcAnswer];
    if (method === 'erigon_getHeaderByHash' && members.some((m) => m?.error?.code === RPC_CODES.methodNotFound)) return fallBack(batch);
    const single = members.length === 1 ? members[0]?.error : undefined;
    if (calls.length > 1 && single && refusesBatch(single.code, single.message)) return 'refused';
    const headers = matchAnswers(method, batch, answer);
    if (method === 'erigon_getHeaderByHash') erigon = true;
    return headers;
  }

  function fallBack(batch: readonly string[]) {
    erigon = false;
    return post(batch);
  }

  /** The headers of `batch`, halving the batch size (for good) while the node refuses batches. */
  async function fetchBatch(batch: readonly string[]): Promise<Map<string, unknown | null>> {
    // until the node has answered erigon_getHeaderByHash or refused it, a batch asks its first block alone: a node
    // without the method refuses one call, not a whole batch of them (each a call a provider bills), and a node with it
    // answers that block's header, asked once as every other
    if (erigon === undefined && batch.length > 1) {
      const first = await fetchBatch(batch.slice(0, 1));
      const rest = await fetchBatch(batch.slice(1));
      return new Map([...first, ...rest]);
    }
    const answer = await post(batch);
    if (answer !== 'refused') return answer;
    batchSize = Math.min(batchSize, Math.max(1, Math.floor(batch.length / 2)));
    const out = new Map<string, unknown | null>();
    for (let i = 0; i < batch.length; i += batchSize) {
      for (const [hash, header] of await fetchBatch(batch.slice(i, i + batchSize))) out.set(hash, header);
    }
    return out;
  }

  async function lookup(hashes: readonly string[], serving: boolean): Promise<Map<string, unknown | null>> {
    const out = new Map<string, unknown | null>();
    const waits: Promise<void>[] = [];
    const wanted: string[] = [];
    for (const hash of new Set(hashes)) {
      const known = unserved.get(hash);
      if (known !== undefined) {
        out.set(hash, known);
        if (serving) unserved.delete(hash);
        continue;
      }
      const pending = inFlight.get(hash);
      if (pending) waits.push(pending.then((header) => void out.set(hash, header)));
      else wanted.push(hash);
    }
    // the batches go one after another; each hash is marked as on its way from the start
    const batches: string[][] = [];
    for (let start = 0; start < wanted.length; start += batchSize) batches.push(wanted.slice(start, start + batchSize));
    let previous: Promise<unknown> = Promise.resolve();
    const fetches = batches.map((batch) => {
      const fetched = previous.then(() => fetchBatch(batch));
      fetched.catch(() => undefined); // awaited below
      previous = fetched;
      for (const hash of batch) {
        const one = fetched.then((m) => m.get(hash) ?? null);
        one.catch(() => undefined); // whoever waits for it gets the failure
        inFlight.set(hash, one);
      }
      return fetched;
    });
    try {
      for (const fetched of fetches) {
        for (const [hash, header] of await fetched) {
          out.set(hash, header);
          if (header !== null && !serving) remember(hash, header);
        }
      }
    } finally {
      for (const hash of wanted) inFlight.delete(hash);
    }
    await Promise.all(waits);
    return out;
  }

  return {
    get: (hashes) => lookup(hashes, false),
    serve: (hashes) => lookup(hashes, true),
    holds: (hash) => (unserved.get(hash) ?? null) !== null || inFlight.has(hash),
    method: () => (erigon === false ? 'eth_getBlockByHash' : 'erigon_getHeaderByHash'),
    get batchSize() {
      return batchSize;
    },
    async supportsErigon() {
      if (erigon === undefined) {
        const outcome = await rpcCall(http, 'erigon_getHeaderByHash', [`0x${'00'.repeat(32)}`]).catch((err: unknown) => {
          // -32601 under any HTTP status (a 403 or 501 some providers answer an unknown method with) says no as well
          if (err instanceof HttpStatusError && err.apiCode === RPC_CODES.methodNotFound) return { error: { code: RPC_CODES.methodNotFound } };
          throw err;
        });
        erigon ??= !('error' in outcome && outcome.error.code === RPC_CODES.methodNotFound);
      }
      return erigon;
    },
  };
}

/** An error that refuses a batch of well-formed calls: -32600, or a message about the batch's size (as rpc-client.ts reads it). */
function refusesBatch(code: unknown, message: unknown): boolean {
  return code === RPC_CODES.invalidRequest || (typeof message === 'string' && /\bbatch\b.*\b(limit|too large|size)\b/i.test(message));
}

/** Pairs each hash with its answer by id, body keys dropped; throws one BadResponseError listing every problem. */
function matchAnswers(method: string, batch: readonly string[], answer: unknown): Map<string, unknown | null> {
  const summary = `${method} answered a malformed batch of ${batch.length} call${batch.length === 1 ? '' : 's'}`;
  if (!Array.isArray(answer)) throw new BadResponseError(summary, [`body: expected a JSON array of answers, got ${show(answer)}`]);
  const byId = new Map<unknown, RpcAnswer>();
  const problems: string[] = [];
  for (const member of answer as unknown[]) {
    if (member === null || typeof member !== 'object' || !('id' in member)) problems.push(`answer ${show(member)}: expected a JSON-RPC answer with an id`);
    else if (byId.has(member.id)) problems.push(`answer id ${show(member.id)}: answered twice`);
    else byId.set(member.id, member as RpcAnswer);
  }
  const out = new Map<string, unknown | null>();
  batch.forEach((hash, i) => {
    const a = byId.get(i + 1);
    if (!a) problems.push(`block ${hash}: no answer with id ${i + 1}`);
    else if (a.error !== undefined && a.error !== null) {
      if (a.error.code === NOT_FOUND) out.set(hash, null);
      else problems.push(`block ${hash}: JSON-RPC error ${show(a.error.code)} ${show(a.error.message)}`);
    } else if (a.result === null) out.set(hash, null);
    else if (a.result === undefined || typeof a.result !== 'object' || Array.isArray(a.result))
      problems.push(`block ${hash}, result: expected a header object or null, got ${show(a.result)}`);
    else out.set(hash, headerOf(a.result as Record<string, unknown>));
  });
  if (problems.length) throw new BadResponseError(summary, problems);
  return out;
}

/** The header of a block answer: its keys but the body's. */
function headerOf(block: Record<string, unknown>): Record<string, unknown> {
  if (!BODY_KEYS.some((k) => k in block)) return block;
  const header = { ...block };
  for (const key of BODY_KEYS) delete header[key];
  return header;
}
