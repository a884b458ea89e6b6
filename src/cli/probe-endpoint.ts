/**
 * What `erc20-etl probe` asks an endpoint, and what it concludes. Pure: every question goes through the calls it
 * is given (`ProbeDeps`), so it runs against a fake in unit tests and against the HTTP client in the command.
 */
import type { SourceKind } from '../config/job-schema.ts';
import { verifyChainHeader } from '../eth/chain-rules.ts';
import { TRANSFER_TOPIC } from '../eth/logs-bloom.ts';
import { parseLogsRefusal } from '../source/provider-errors.ts';

/** A JSON-RPC call's answer: its result, the JSON-RPC error it was answered with, nothing within the deadline, or more than the probe reads. */
export type CallReply = { result: unknown } | { error: { code?: unknown; message?: unknown; data?: unknown } } | { timedOut: string } | { tooLarge: string };

/** A batch's answer: the body (an array of answers, or one error), or why it was refused as a whole (an HTTP status). */
export type BatchReply = { answers: unknown } | { refused: string } | { timedOut: string };

export interface ProbeDeps {
  source: SourceKind;
  /** One JSON-RPC call. A transport failure (the endpoint unreachable, 401, 5xx after retries) throws; the probe notes it. */
  call(method: string, params: unknown[]): Promise<CallReply>;
  /** One POST of `size` `eth_blockNumber` calls, ids 1 to `size`. */
  batch(size: number): Promise<BatchReply>;
  /** The node source's own `eth_chainId`, where there is one: the probe then says what a run will see. */
  chainId?(): Promise<bigint | number>;
  /** The node source's own test for `erigon_getHeaderByHash`. */
  supportsErigon?(): Promise<boolean>;
  /** A builder source: one page of `getTokenTransfers` (of no contract, at the head); throws what went wrong. */
  page?(head: number | undefined): Promise<void>;
}

/**
 * How hard the probe pushes: the first `eth_getLogs` span back from the head, its calls at most, the calls left
 * unanswered in time it waits through (each costs a whole `--rpc-timeout`: a node that hangs would otherwise hold
 * the probe 16 of them), the first batch size, the batch POSTs at most and those it waits through unanswered.
 */
export const PROBE_LIMITS = { firstLogsSpan: 100_000, logsCalls: 16, logsTimeouts: 4, batchSize: 100, batchPosts: 8, batchTimeouts: 2 } as const;

export type LogsCall =
  | { fromBlock: number; toBlock: number; outcome: 'answered'; logs: number }
  | { fromBlock: number; toBlock: number; outcome: 'refused' | 'timeout' | 'error'; message: string };

export interface LogsFindings {
  /**
   * `yes`: it answered, or refused for size (or in time); `no`: the method does not exist (-32601); `failed`: only
   * other errors, or a failure of the endpoint; `not asked`: the head is unknown.
   */
  method: 'yes' | 'no' | 'failed' | 'not asked';
  /** The largest span (blocks) answered, with its blocks and logs. */
  accepted: { fromBlock: number; toBlock: number; blocks: number; logs: number } | null;
  /** The most logs any answer held. */
  largestAnswer: number | null;
  /** The smallest span refused as too large (or unanswered in time). */
  smallestRefused: number | null;
  /** Limits the provider's refusals stated. */
  statedMaxRange: number | null;
  statedMaxResults: number | null;
  /**
   * The calls unanswered in time, when the probe stopped asking wider spans because `PROBE_LIMITS.logsTimeouts` of
   * them went unanswered (after a last call of one block, when nothing had answered yet).
   */
  stoppedAfterTimeouts?: number;
  calls: LogsCall[];
  /** Why the method failed (`failed`/`no`), or why it was not asked. */
  error: string | null;
}

export interface BatchFindings {
  /** The largest batch of calls answered whole; null when even one call failed. */
  largestAccepted: number | null;
  /** The smallest batch refused, and why. */
  refused: { size: number; message: string } | null;
  /** The first size tried: a batch of it answered means the limit is at least that (larger are not tried). */
  triedUpTo: number;
  /** Set when the probe stopped because `PROBE_LIMITS.batchTimeouts` POSTs went unanswered in time. */
  stoppedAfterTimeouts?: number;
}

/** A method that exists (`yes`), answers -32601 (`no`), or could not be asked (`unknown`, with why). */
export interface MethodFinding {
  supported: 'yes' | 'no' | 'unknown';
  detail: string | null;
}

export interface ProbeFindings {
  source: SourceKind;
  /** `eth_chainId`: a number, or decimal text past 2^53−1; null when unknown. */
  chainId: number | string | null;
  chainIdError: string | null;
  head: number | null;
  headError: string | null;
  erigonGetHeaderByHash: MethodFinding;
  /** A node source's headers where there is no Erigon; not asked for a builder source. */
  ethGetBlockByHash: MethodFinding | null;
  /** A node source's transfers; null for a builder source. */
  logs: LogsFindings | null;
  batch: BatchFindings | null;
  /** A builder source's page API (`getTokenTransfers`); null for a node source. */
  pageApi: { reachable: boolean; detail: string | null } | null;
  /**
   * How the exporter treats this chain's headers, judged on the head block (`eth_getBlockByNumber`) by the chain's
   * hash rule: `verified` by `rule`, or not, with the `reason` (a header that fails its rule is in `missing`; a chain
   * with no known rule, `rule` "unknown", has its headers stored unverified). Null when the chain id or the head
   * block is unknown.
   */
  headers: HeadersFinding | null;
  /** What the source cannot do without, each with why: the probe fails when any is. */
  missing: string[];
}

export interface HeadersFinding {
  block: number;
  rule: string;
  verified: boolean;
  reason?: string;
}

const METHOD_NOT_FOUND = -32601;
const ZERO_HASH = `0x${'00'.repeat(32)}`;

/**
 * Asks the endpoint what a source of `deps.source` needs: chain id, head, the header methods, and for a node
 * the largest `eth_getLogs` span and answer it takes (from 100,000 blocks back from the head: following the
 * provider's suggested range or stated limit, else halving, then narrowing between what answered and what was
 * refused, 16 calls at most: halving alone takes 10 to come down to a few hundred blocks, as some providers' unstated
 * limits are), and the largest JSON-RPC batch it answers (100 calls, halved while refused, then narrowed).
 *
 * @example await probeEndpoint({ source: 'node', call, batch }) // → { chainId: 1, head: 23000000, logs: { accepted: { blocks: 2000, logs: 9120, … }, … }, missing: [] }
 */
export async function probeEndpoint(deps: ProbeDeps): Promise<ProbeFindings> {
  const node = deps.source === 'node';
  const [chainId, chainIdError] = await attempt(async () => {
    if (deps.chainId) return showChainId(await deps.chainId());
    const reply = await deps.call('eth_chainId', []);
    if (!('result' in reply)) throw new AnsweredError(replyText(reply));
    if (typeof reply.result !== 'string' || !/^0x[0-9a-fA-F]{1,64}$/.test(reply.result)) throw new AnsweredError(`a malformed result ${shown(reply.result)}`);
    return showChainId(BigInt(reply.result));
  });
  const [head, headError] = await attempt(async () => {
    const reply = await deps.call('eth_blockNumber', []);
    if (!('result' in reply)) throw new AnsweredError(replyText(reply));
    const n = quantity(reply.result);
    if (n === undefined) throw new AnsweredError(`a malformed result ${shown(reply.result)}`);
    return n;
  });
  if (headError !== undefined && !(headError instanceof AnsweredError)) {
    // no answer at all (unreachable, the key refused, failing): nothing else can be learned
    return unreachable(deps.source, chainId, chainIdError, headError.message);
  }
  const headBlock = head === undefined ? undefined : await blockAt(deps, head);
  const headHash = headBlock?.hash;
  const headers = headBlock && typeof chainId === 'number' ? headersFinding(chainId, headBlock.block) : null;
  const erigon = await methodExists(deps, 'erigon_getHeaderByHash', [headHash ?? ZERO_HASH], deps.supportsErigon);
  const byHash = node ? await methodExists(deps, 'eth_getBlockByHash', [headHash ?? ZERO_HASH, false]) : null;
  const logs = node ? await probeLogs(deps, head) : null;
  const batch = head === undefined ? null : await probeBatch(deps);
  const pageApi = node ? null : await probePage(deps, head);

  const missing: string[] = [];
  if (node) {
    if (chainIdError !== undefined) missing.push(`eth_chainId (${chainIdError.message})`);
    if (headError !== undefined) missing.push(`eth_blockNumber (${headError.message})`);
    if (logs && (logs.method === 'no' || logs.method === 'failed')) missing.push(`eth_getLogs (${logs.error})`);
    if (erigon.supported !== 'yes' && byHash?.supported !== 'yes') {
      missing.push(`block headers: neither eth_getBlockByHash (${byHash?.detail ?? 'not asked'}) nor erigon_getHeaderByHash (${erigon.detail ?? 'not asked'})`);
    }
  } else {
    if (erigon.supported !== 'yes') missing.push(`erigon_getHeaderByHash, which a builder source reads headers with (${erigon.detail ?? 'not asked'})`);
    if (pageApi && !pageApi.reachable) missing.push(`the page API, getTokenTransfers (${pageApi.detail})`);
  }
  if (headers && !headers.verified && headers.rule !== 'unknown') missing.push(`verified headers: ${headers.reason}`);
  return {
    source: deps.source,
    chainId: chainId ?? null,
    chainIdError: chainIdError?.message ?? null,
    head: head ?? null,
    headError: headError?.message ?? null,
    erigonGetHeaderByHash: erigon,
    ethGetBlockByHash: byHash,
    logs,
    batch,
    pageApi,
    headers,
    missing,
  };
}

/** The head block (`eth_getBlockByNumber`) and its hash, so the header methods are asked for a block that exists; undefined when not answered. */
async function blockAt(deps: ProbeDeps, head: number): Promise<{ block: Record<string, unknown>; hash: string } | undefined> {
  const [found] = await attempt(async () => {
    const reply = await deps.call('eth_getBlockByNumber', [hex(head), false]);
    const block = 'result' in reply && typeof reply.result === 'object' && reply.result !== null ? (reply.result as Record<string, unknown>) : undefined;
    const h = block?.hash;
    return block && typeof h === 'string' && /^0x[0-9a-fA-F]{64}$/.test(h) ? { block, hash: h.toLowerCase() } : undefined;
  });
  return found;
}

/** The chain's hash rule applied to a header, as the probe reports it. */
function headersFinding(chainId: number, block: Record<string, unknown>): HeadersFinding {
  const verdict = verifyChainHeader(chainId, block);
  if (verdict.verified) return { block: verdict.block, rule: verdict.rule, verified: true };
  return { block: verdict.block, rule: verdict.failed ? verdict.rule : 'unknown', verified: false, reason: verdict.reason };
}

/** Whether a method exists: any answer but -32601 (a header, null for an unknown block, another error) says it does. */
async function methodExists(deps: ProbeDeps, method: string, params: unknown[], own?: () => Promise<boolean>): Promise<MethodFinding> {
  try {
    if (own) return (await own()) ? { supported: 'yes', detail: null } : { supported: 'no', detail: `-32601: the node has no ${method}` };
    const reply = await deps.call(method, params);
    if ('error' in reply && reply.error.code === METHOD_NOT_FOUND) return { supported: 'no', detail: replyText(reply) };
    if ('timedOut' in reply) return { supported: 'unknown', detail: reply.timedOut };
    return { supported: 'yes', detail: null };
  } catch (err) {
    return { supported: 'unknown', detail: messageOf(err) };
  }
}

/**
 * The largest `eth_getLogs` span the node answers, all contracts' Transfer logs, ending at the head: starting at
 * 100,000 blocks, following a suggested range or a stated limit, else halving; once a span answered, halfway
 * between it and the smallest refused, while that gains more than a twentieth.
 */
async function probeLogs(deps: ProbeDeps, head: number | undefined): Promise<LogsFindings> {
  const out: LogsFindings = {
    method: 'not asked',
    accepted: null,
    largestAnswer: null,
    smallestRefused: null,
    statedMaxRange: null,
    statedMaxResults: null,
    calls: [],
    error: null,
  };
  if (head === undefined) {
    out.error = 'the head is unknown (eth_blockNumber)';
    return out;
  }
  const anchored = (blocks: number) => ({ fromBlock: Math.max(0, head - blocks + 1), toBlock: head });
  let timeouts = 0;
  let ask: { fromBlock: number; toBlock: number } | undefined = anchored(Math.min(PROBE_LIMITS.firstLogsSpan, head + 1));
  while (ask && out.calls.length < PROBE_LIMITS.logsCalls) {
    const { fromBlock, toBlock } = ask;
    const blocks: number = toBlock - fromBlock + 1;
    let reply: CallReply;
    try {
      reply = await deps.call('eth_getLogs', [{ fromBlock: hex(fromBlock), toBlock: hex(toBlock), topics: [TRANSFER_TOPIC] }]);
    } catch (err) {
      out.method = out.method === 'yes' ? 'yes' : 'failed';
      out.error = messageOf(err);
      return out;
    }
    if ('result' in reply) {
      if (!Array.isArray(reply.result)) {
        out.method = 'failed';
        out.error = `answered ${shown(reply.result)}, expected an array of logs`;
        return out;
      }
      const logs = reply.result.length;
      out.method = 'yes';
      out.calls.push({ fromBlock, toBlock, outcome: 'answered', logs });
      out.largestAnswer = Math.max(out.largestAnswer ?? 0, logs);
      if (!out.accepted || blocks > out.accepted.blocks) out.accepted = { fromBlock, toBlock, blocks, logs };
    } else if ('error' in reply && reply.error.code === METHOD_NOT_FOUND) {
      out.method = 'no';
      out.error = replyText(reply);
      return out;
    } else {
      // a refusal for size, no answer in time, or another error (some providers refuse large queries in words
      // of their own): each is asked again smaller; only errors and nothing else make the method fail
      const refusal = 'error' in reply ? parseLogsRefusal(reply.error) : undefined;
      const outcome = 'timedOut' in reply ? 'timeout' : refusal || 'tooLarge' in reply ? 'refused' : 'error';
      if (outcome !== 'error') out.method = 'yes';
      out.calls.push({ fromBlock, toBlock, outcome, message: replyText(reply) });
      out.smallestRefused = Math.min(out.smallestRefused ?? blocks, blocks);
      if (refusal?.maxRange !== undefined) out.statedMaxRange = Math.min(out.statedMaxRange ?? refusal.maxRange, refusal.maxRange);
      if (refusal?.maxResults !== undefined) out.statedMaxResults = Math.min(out.statedMaxResults ?? refusal.maxResults, refusal.maxResults);
      if (outcome === 'timeout' && ++timeouts >= PROBE_LIMITS.logsTimeouts) {
        // a node this slow is not worth more whole deadlines: what answered is the finding; with nothing answered
        // yet, one block (unless that was just asked) tells whether the method answers at all
        out.stoppedAfterTimeouts = timeouts;
        ask = !out.accepted && blocks > 1 ? anchored(1) : undefined;
        continue;
      }
      const suggested = refusal?.suggested;
      if (!out.accepted && suggested && suggested.fromBlock >= fromBlock && suggested.toBlock <= toBlock && suggested.toBlock - suggested.fromBlock + 1 < blocks) {
        ask = suggested;
        continue;
      }
    }
    // the one block asked after the last timeout ends it, whatever it brought
    ask = out.stoppedAfterTimeouts === undefined ? nextLogsAsk(out, anchored) : undefined;
  }
  const last = out.calls.at(-1);
  if (out.method === 'not asked') {
    out.method = 'failed';
    out.error = last && last.outcome !== 'answered' ? last.message : 'no answer';
  } else if (out.method === 'yes' && !out.accepted) {
    // refused for size or unanswered down to the smallest span asked: a node source could read nothing through it
    out.method = 'failed';
    out.error = `none of ${out.calls.length} calls was answered, down to ${out.smallestRefused === 1 ? 'a single block' : `${out.smallestRefused} blocks`}${last && last.outcome !== 'answered' ? `; the last: ${last.message}` : ''}`;
  }
  return out;
}

/** After an answer or a refusal without a usable suggestion: the next span, or undefined when the probe has learned enough. */
function nextLogsAsk(out: LogsFindings, anchored: (blocks: number) => { fromBlock: number; toBlock: number }): { fromBlock: number; toBlock: number } | undefined {
  const accepted = out.accepted?.blocks;
  const refused = out.smallestRefused;
  const stated = out.statedMaxRange;
  if (refused === null) return undefined; // the first span answered
  if (accepted === undefined) {
    // the last call left, nothing answered yet: one block tells whether the method answers at all
    if (out.calls.length === PROBE_LIMITS.logsCalls - 1) return refused > 1 ? anchored(1) : undefined;
    // nothing answered yet: a stated limit below what was refused, else half of it
    const next = stated !== null && stated < refused ? stated : Math.floor(refused / 2);
    return next >= 1 ? anchored(next) : undefined;
  }
  if (stated !== null && accepted >= stated) return undefined; // the stated limit answered: that is the limit
  const cap = out.statedMaxResults;
  if (cap !== null && (out.accepted?.logs ?? 0) >= cap * 0.9) return undefined; // a wider span would overflow the stated cap
  const next = Math.floor((accepted + Math.min(refused, stated !== null ? stated + 1 : refused)) / 2);
  return next - accepted > Math.max(1, accepted / 20) ? anchored(next) : undefined;
}

/**
 * The largest batch of `eth_blockNumber` calls answered whole: 100, halved while refused, then halfway between
 * the largest answered and the smallest refused (8 POSTs at most).
 */
async function probeBatch(deps: ProbeDeps): Promise<BatchFindings> {
  const out: BatchFindings = { largestAccepted: null, refused: null, triedUpTo: PROBE_LIMITS.batchSize };
  let size: number = PROBE_LIMITS.batchSize;
  let timeouts = 0;
  for (let posts = 0; size >= 1 && posts < PROBE_LIMITS.batchPosts; posts++) {
    let reply: BatchReply;
    try {
      reply = await deps.batch(size);
    } catch (err) {
      reply = { refused: messageOf(err) };
    }
    if ('timedOut' in reply) {
      reply = { refused: reply.timedOut };
      if (++timeouts >= PROBE_LIMITS.batchTimeouts) out.stoppedAfterTimeouts = timeouts;
    }
    const problem = 'refused' in reply ? reply.refused : batchProblem(reply.answers, size);
    if (problem === undefined) out.largestAccepted = Math.max(out.largestAccepted ?? 0, size);
    else if (!out.refused || size < out.refused.size) out.refused = { size, message: problem };
    if (!out.refused || out.stoppedAfterTimeouts !== undefined) return out; // the first size answered, or the node is too slow to go on
    const accepted = out.largestAccepted;
    size = accepted === null ? Math.floor(out.refused.size / 2) : Math.floor((accepted + out.refused.size) / 2);
    if (accepted !== null && size <= accepted) return out;
  }
  return out;
}

/** Why a batch's body is not `size` answers with results; undefined when it is. */
function batchProblem(answers: unknown, size: number): string | undefined {
  if (!Array.isArray(answers)) {
    const error = (answers as { error?: unknown } | null)?.error;
    return error ? errorText(error) : `answered ${shown(answers)}, expected an array of answers`;
  }
  const failed = answers.find((a) => (a as { error?: unknown } | null)?.error);
  if (failed) return errorText((failed as { error: unknown }).error);
  const results = answers.filter((a) => a !== null && typeof a === 'object' && 'result' in a).length;
  return results === size ? undefined : `answered ${results} of ${size} calls`;
}

async function probePage(deps: ProbeDeps, head: number | undefined): Promise<{ reachable: boolean; detail: string | null }> {
  if (!deps.page) return { reachable: false, detail: 'not asked' };
  try {
    await deps.page(head);
    return { reachable: true, detail: null };
  } catch (err) {
    return { reachable: false, detail: messageOf(err) };
  }
}

/** A call the endpoint answered, with an error or a malformed result: the endpoint is there. */
class AnsweredError extends Error {}

/** Runs `work`: its value, or what it threw. */
async function attempt<T>(work: () => Promise<T>): Promise<[T | undefined, Error | undefined]> {
  try {
    return [await work(), undefined];
  } catch (err) {
    return [undefined, err instanceof Error ? err : new Error(String(err))];
  }
}

/** The findings when the endpoint answered nothing: what failed, once. */
function unreachable(source: SourceKind, chainId: number | string | undefined, chainIdError: Error | undefined, error: string): ProbeFindings {
  const notAsked: MethodFinding = { supported: 'unknown', detail: 'not asked' };
  return {
    source,
    chainId: chainId ?? null,
    chainIdError: chainIdError?.message ?? null,
    head: null,
    headError: error,
    erigonGetHeaderByHash: notAsked,
    ethGetBlockByHash: source === 'node' ? notAsked : null,
    logs: null,
    batch: null,
    pageApi: null,
    headers: null,
    missing: [`an answer to eth_blockNumber (${error})`],
  };
}

function showChainId(id: bigint | number): number | string {
  const big = BigInt(id);
  return big <= BigInt(Number.MAX_SAFE_INTEGER) ? Number(big) : big.toString();
}

function quantity(value: unknown): number | undefined {
  if (typeof value !== 'string' || !/^0x[0-9a-fA-F]{1,14}$/.test(value)) return undefined;
  const n = Number(value);
  return Number.isSafeInteger(n) ? n : undefined;
}

function hex(n: number): string {
  return `0x${n.toString(16)}`;
}

function replyText(reply: CallReply): string {
  if ('timedOut' in reply) return reply.timedOut;
  if ('tooLarge' in reply) return reply.tooLarge;
  if ('error' in reply) return errorText(reply.error);
  return `a result ${shown(reply.result)}`;
}

function errorText(error: unknown): string {
  const e = (error ?? {}) as { code?: unknown; message?: unknown };
  return [e.code, typeof e.message === 'string' ? JSON.stringify(e.message) : undefined].filter((v) => v !== undefined).join(' ') || shown(error);
}

function messageOf(err: unknown): string {
  return err instanceof Error ? err.message : String(err);
}

function shown(value: unknown): string {
  const text = JSON.stringify(value) ?? String(value);
  return text.length > 80 ? `${text.slice(0, 77)}…` : text;
}

/**
 * The findings as the lines `probe` prints.
 *
 * @example probeText(findings, 'https://eth.example/<redacted>')
 * // → 'erc20-etl probe: node source at https://eth.example/<redacted>\n  chain id:     1\n  head:         23000000\n …'
 */
export function probeText(f: ProbeFindings, endpoint: string): string {
  const lines = [`erc20-etl probe: ${f.source} source at ${endpoint}`];
  lines.push(`  chain id:     ${f.chainId ?? `unknown (eth_chainId: ${f.chainIdError})`}`);
  lines.push(`  head:         ${f.head ?? `unknown (eth_blockNumber: ${f.headError})`}`);
  lines.push(`  erigon_getHeaderByHash: ${methodText(f.erigonGetHeaderByHash)}`);
  if (f.ethGetBlockByHash) lines.push(`  eth_getBlockByHash:     ${methodText(f.ethGetBlockByHash)}`);
  if (f.logs) lines.push(...logsLines(f.logs));
  if (f.batch) lines.push(`  batch limit:  ${batchText(f.batch)}`);
  if (f.headers) lines.push(`  headers:      ${headersText(f.headers)}`);
  if (f.pageApi) lines.push(`  page API:     ${f.pageApi.reachable ? 'reachable (getTokenTransfers answered)' : `not reachable (${f.pageApi.detail})`}`);
  lines.push(f.missing.length ? `  missing:      ${f.missing.join('; ')}` : `  everything a ${f.source} source needs is there`);
  return `${lines.join('\n')}\n`;
}

function headersText(h: HeadersFinding): string {
  if (h.verified) return `verified by the ${h.rule} rule (block ${h.block})`;
  return h.rule === 'unknown' ? `stored unverified: ${h.reason}` : `fail the ${h.rule} rule: ${h.reason}`;
}

function methodText(m: MethodFinding): string {
  return m.supported === 'yes' ? 'yes' : m.supported === 'no' ? 'no' : `unknown (${m.detail})`;
}

function logsLines(l: LogsFindings): string[] {
  if (l.method === 'no' || l.method === 'failed' || l.method === 'not asked') {
    const failed = `  eth_getLogs:  ${l.method === 'no' ? 'no' : 'failed'} (${l.error})`;
    return l.stoppedAfterTimeouts === undefined ? [failed] : [failed, `                ${SLOW_HINT}`];
  }
  const lines: string[] = [];
  const a = l.accepted;
  lines.push(
    a
      ? `  eth_getLogs:  largest range accepted ${a.blocks} blocks (${a.fromBlock}–${a.toBlock}: ${a.logs} logs); largest answer ${l.largestAnswer} logs`
      : `  eth_getLogs:  no range accepted down to ${l.smallestRefused} blocks (runs start there and go smaller)`,
  );
  if (l.smallestRefused !== null) lines.push(`                smallest range refused ${l.smallestRefused} blocks`);
  if (l.stoppedAfterTimeouts !== undefined) lines.push(`                stopped after ${l.stoppedAfterTimeouts} calls unanswered in time: a larger range may answer; ${SLOW_HINT}`);
  const stated = [
    l.statedMaxRange !== null && `at most ${l.statedMaxRange} blocks per call`,
    l.statedMaxResults !== null && `at most ${l.statedMaxResults} logs per answer`,
  ].filter(Boolean);
  if (stated.length) lines.push(`                stated by the node: ${stated.join(', ')}`);
  for (const c of l.calls) {
    const what = c.outcome === 'answered' ? `${c.logs} logs` : `${c.outcome}: ${c.message}`;
    lines.push(`                ${c.fromBlock}–${c.toBlock} (${c.toBlock - c.fromBlock + 1} blocks): ${what}`);
  }
  return lines;
}

/** What the probe says of a node too slow for it to learn more: each unanswered call cost a whole deadline. */
const SLOW_HINT = 'the node may only be slow: run probe again with a larger --rpc-timeout to learn more';

function batchText(b: BatchFindings): string {
  const slow = b.stoppedAfterTimeouts === undefined ? '' : `; stopped after ${b.stoppedAfterTimeouts} POSTs unanswered in time (${SLOW_HINT})`;
  return `${batchFinding(b)}${slow}`;
}

function batchFinding(b: BatchFindings): string {
  if (b.largestAccepted === null && b.stoppedAfterTimeouts !== undefined) return `no batch answered in time, down to ${b.refused?.size} calls: one call per POST`;
  if (b.largestAccepted === null) return `no batch answered (${b.refused?.message ?? 'unknown'}): one call per POST`;
  if (b.largestAccepted >= b.triedUpTo) return `${b.largestAccepted} calls per POST answered (larger not tried)`;
  return `${b.largestAccepted} calls per POST (${b.refused?.size} refused: ${b.refused?.message})`;
}
