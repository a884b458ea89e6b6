import { NO_BUDGET, type TimeBudget } from '../common/time-budget.ts';
import type { Logger } from 'pino';
import { systemClock, type Clock } from '../common/clock.ts';
import { RetryableError } from '../common/errors.ts';
import { withRetry } from '../common/retry.ts';
import type { SourceCounters } from '../common/source-counters.ts';
import type { TransferRecord } from '../dataset/types.ts';
import { isHexQuantity } from '../eth/hex.ts';
import { createBloomBitsCache, createBloomSlabs, missingFromBloom } from '../eth/logs-bloom.ts';
import { BadResponseError, describeContext, PageKeyRejectedError } from './errors.ts';
import { createHeaderChecker } from './header-check.ts';
import type { HttpClient } from './http-client.ts';
import { createFirstAnswerGate } from './first-answer.ts';
import { afterAnswer, afterRefusal, LOGS_RANGE, longestSpan, type LogsRangeState, mayStretch } from './logs-range.ts';
import { createRangeBook, type BlockLimit } from './range-book.ts';
import { createNodeHeaders } from './node-headers.ts';
import type { LogsRefusal } from './provider-errors.ts';
import { blockNumber, chainIdOnce, getTransferLogs } from './node-rpc.ts';
import type { PageQuery, SkippedLogCounts, Source, SourceChecks } from './source.ts';
import { readTokenMetadata } from './token-metadata.ts';
import { blockTimestampOf, logTimestampProblem, readLogsAnswer, withBlockTimestamp, type LogsAnswer, type ReadLog, type SkippedLog, type TransferLog } from './transfer-log.ts';
import { createLogsGroups, type Member, memberKey } from './logs-groups.ts';
import type { TokenMetadata, TransfersPage } from './transfers-page.ts';
import { countedRows, rowsProvedTooFew, storedSpan } from './stored-logs.ts';
import { createStoredWindows, type StoredRowsReader } from './stored-windows.ts';

/** A node source: a `Source`, and what the CLI asks of a node besides. */
export type NodeSource = Source & {
  /** `eth_chainId`: a run checks it against the job's chain. */
  chainId(): Promise<bigint | number>;
  /** A query whose pages the pipeline stopped reading is named in no call again, nor waited for. */
  endQuery(query: Pick<PageQuery, 'contract' | 'fromBlock' | 'toBlock'>): void;
  /** The `eth_getLogs` range to remember for this job and endpoint (`learnedRange`); undefined when no call answered. */
  learnedRange(): number | undefined;
  /** What became of a block limit the provider does not state, to remember with the range (`RangeBook.blockLimit`). */
  learnedBlockLimit(): BlockLimit | 'gone' | undefined;
  /** Whether the node answers `erigon_getHeaderByHash` (else headers come from `eth_getBlockByHash`), for `probe`. */
  supportsErigon(): Promise<boolean>;
};

export interface NodeSourceDeps {
  /** The HTTP client of the node's JSON-RPC URL (`postJson` posts to it). */
  http: HttpClient;
  counters: SourceCounters;
  /** Header calls per JSON-RPC POST at first (the job's `headerBatchSize`); halved while the node refuses batches. */
  headerBatchSize: number;
  /** How long an `eth_getLogs` call may take before it is asked again over fewer blocks (`--rpc-timeout`, default 30 s). */
  rpcTimeoutMs?: number;
  /** The first `eth_getLogs` range, in blocks: the job's `logsRange`, else the range learned by an earlier run; else 2,000. */
  startRange?: number;
  /**
   * A block limit the provider does not state, kept by an earlier run, with its answers since it was met or last asked
   * again: every call stays under it from the first (asked again at 100 answers, counted on from these).
   */
  blockLimit?: BlockLimit;
  /** The range that earlier run learned, which answered under the limit: where calls start when the range asked is not under it. */
  answeredBefore?: number;
  clock?: Clock;
  /** Told of each refusal (debug: the span asked, why, the span asked next), and when the stored headers cannot be read (warn). */
  logger?: Pick<Logger, 'debug' | 'warn'>;
  /**
   * The headers the warehouse holds already, of these hashes (verified when they were stored): a page takes its
   * blocks' times and blooms from them instead of asking the node, so a re-run fetches no header it has.
   */
  storedHeaders?: (blocks: readonly { hash: string; number: number }[]) => Promise<ReadonlyMap<string, { number: number; seconds: string; logsBloom: string }>>;
  /**
   * The rows the warehouse holds, and which blocks jobs read in full: a call over blocks each of its contracts' queries
   * read in full is sized by the rows stored there (`storedSpan`), read a window at a time as each query moves down
   * (`createStoredWindows`).
   */
  storedRows?: StoredRowsReader;
  /** Where the run's time goes (`--time-budget`): logs read and checked count as `parse`, headers fetched as `headers`. */
  budget?: TimeBudget;
  /**
   * The chain the source's headers are checked for, by its hash rule (`chain-rules.ts`): the job's. Chain 1 when
   * unset, as for a job that names none (`probe`'s source checks no header).
   */
  chain?: number;
}

const DEFAULT_RPC_TIMEOUT_MS = 30_000;
/** A page whose logs or headers show the chain moving under it is asked again 5 times, after 0.2, 0.4, … 3.2 s. */
const REORG_RETRY = { retries: 5, minDelayMs: 200, maxDelayMs: 3_200 } as const;
const KEY_PREFIX = 'node:';
/** Contracts named in one eth_getLogs call, at most. */
const MAX_CONTRACTS_PER_CALL = 50;
/**
 * A call follows a span another call took at its top (so that contracts read over the same blocks go in step and
 * share calls) only when that span holds at least this share of its own range. Chunks of different contracts
 * rarely reach a top at the same time after their first pages; a contract read alone behind another set's calls,
 * over their shorter spans, got answers of 176–3,064 logs where its own range would hold about 4,700 by its logs
 * per block (20,000 blocks of the bench's chain, ankr style: 41–47 calls of 4,459–5,024 logs on average before,
 * 34–35 calls of 5,783–6,082 after).
 */
const MET_SPAN_SHARE = 0.75;
/** How long a query waits for others behind it to come down to its top (`catchUp`), at most. */
const CATCH_UP_MS = 2_000;
/** Others are behind a query when they are expected within this many of its ranges above its top. */
const CATCH_UP_RANGES = 2;
/** How long a query whose wait ran out calls without waiting. */
const CATCH_UP_PAUSE_MS = 30_000;
/** Single blocks remembered as refused for several contracts. */
const ALONE_REMEMBERED = 1_024;

/** What a page needs of a block's checked header: its number, time and logsBloom. */
interface BlockFacts {
  number: number;
  time: string;
  /** `time` in seconds, to compare with a log's own `blockTimestamp` without parsing `time` again for every log. */
  seconds: number;
  bloom: Uint8Array;
}

/**
 * Blocks whose header facts are remembered (about 0.5 KB each): a page of a contract not read in the same call
 * reaches the same blocks later.
 */
const FACTS_REMEMBERED = 8_192;

/** What one call found for one contract: its logs in [from, the call's top], in chain order. */
interface Slice {
  from: number;
  logs: TransferLog[];
  skipped: SkippedLog[];
}

/** The chain reorganized under a query: its logs were marked removed, or a block they name is unknown to the node. */
class ChainMovedError extends RetryableError {}

/**
 * Any Ethereum node (or RPC provider) as a source, through `eth_getLogs` (node-source.md). A page is one call of
 * a contract's Transfer logs over the blocks at the top of what is left of the query: as many as the adaptive
 * range allows (one range per source, shared by its chunks), shrunk and asked again while the node refuses the
 * call as too large or leaves it unanswered for `rpcTimeoutMs`. Its rows are the transfers newest first, each
 * with its block's time from the block's header (fetched once, batched, checked, and kept for `headersByHash`;
 * or the warehouse's, `storedHeaders`) and each proven in the header's `logsBloom` (`bloomProven`); the next
 * page key is the block below the span. Logs that are not
 * ERC-20 transfers are counted per contract (`skippedLogs`), never rows; logs marked removed fail the page
 * (retryable: the chain moved; the page is asked again a few times first).
 *
 * @example
 * const source = createNodeSource({ http, counters, headerBatchSize: 100 });
 * await source.fetchPage({ contract: usdc, fromBlock: 17000000, toBlock: 17999999, pageSize: 1000 });
 * // → { transfers: [… blocks 17998000–17999999, newest first], nextPageKey: 'node:17997999', … }
 */
export function createNodeSource(deps: NodeSourceDeps): NodeSource {
  const { http, counters } = deps;
  const clock = deps.clock ?? systemClock;
  const rpcTimeoutMs = deps.rpcTimeoutMs ?? DEFAULT_RPC_TIMEOUT_MS;
  const budget = deps.budget ?? NO_BUDGET;
  const headers = createNodeHeaders({ http, batchSize: deps.headerBatchSize });
  const bloomBits = createBloomBitsCache();
  // the blooms of remembered blocks, dropped oldest first with them
  const bloomBytes = createBloomSlabs();
  // the pipeline checks the same headers again with it: each header is hashed once, and its check against the same block is remembered
  const chain = deps.chain ?? 1;
  const checker = createHeaderChecker(chain);
  // a bad header is named as the answer of the method that gave it, wherever it is checked (here, or by the pipeline)
  const checks: SourceChecks = { chain, checkHeader: (raw, expected) => checker(raw, { method: headers.method(), ...expected }) };
  /** What pages need of checked headers, by hash (the raw header goes once the pipeline has taken it). */
  const blockFacts = new Map<string, BlockFacts>();
  const rememberFacts = (hash: string, facts: BlockFacts) => {
    blockFacts.delete(hash);
    blockFacts.set(hash, facts);
    if (blockFacts.size > FACTS_REMEMBERED) blockFacts.delete(blockFacts.keys().next().value!);
  };
  const skipped = new Map<string, SkippedLogCounts>();
  const tokens = new Map<string, Promise<TokenMetadata>>();
  const tokensKnown = new Map<string, TokenMetadata>();
  const ranges = createRangeBook({ learned: deps.startRange, blockLimit: deps.blockLimit, answeredBefore: deps.answeredBefore });
  const groups = createLogsGroups<Slice>(MAX_CONTRACTS_PER_CALL);
  const firstAnswer = createFirstAnswerGate();
  /** Tops of single blocks refused for several contracts at once: asked per contract. */
  const alone = new Set<number>();
  /** Queries (`memberKey`) whose last wait for others ran out, and until when they do not wait again. */
  const impatient = new Map<string, number>();
  /** The rows the warehouse holds near each query's next calls. */
  const stored = deps.storedRows && createStoredWindows({ reader: deps.storedRows, logger: deps.logger });
  /** The most logs an answer of this run held: the node answers that many in one call. */
  let mostLogsAnswered = 0;

  /**
   * The blocks a call for `members` at `top` asks, sized by the rows the warehouse holds where each of their queries
   * holds them over the blocks (`storedSpan`); undefined where it does not.
   */
  function storedBlocks(members: readonly Member[], top: number, range: LogsRangeState): number | undefined {
    const held = stored?.windows(members);
    if (!held) return undefined;
    // rows tell nothing of blocks: under a block limit the node does not state, or a span refused without a number (or
    // unanswered), no further than the range or the longest span that answered (before either is met, a call may ask as
    // many blocks as the rows allow: one refused call then teaches the run the limit, as a first call would)
    const bounds = ranges.peek(
      members.map((m) => m.contract),
      top,
    );
    // the call that asks the block limit again asks it as the range book sized it
    if (range.range > longestSpan(bounds)) return undefined;
    const blocksBound = bounds.rangeCeiling !== undefined || bounds.ceiling !== undefined;
    const longest = blocksBound ? Math.min(longestSpan(bounds), Math.max(range.range, range.longestAnswered)) : longestSpan(range);
    return storedSpan(held, top, { target: range.target, longest, range: range.range });
  }

  /** The rows stored of `members` over [from, top], where each of their windows holds them (`countedRows`). */
  function storedRows(members: readonly Member[], from: number, top: number): number | undefined {
    const held = stored?.windows(members);
    return held && countedRows(held, from, top);
  }

  /**
   * Of these blocks (hash → the number the logs give it), those whose facts are neither remembered nor in the
   * warehouse: the ones to ask the node for. The warehouse's are remembered, when their number agrees; the facts
   * found go `into` the map given (a page's blocks, however many the memory keeps).
   */
  async function notKnown(blocks: ReadonlyMap<string, number>, into?: Map<string, BlockFacts>): Promise<string[]> {
    let unknown = withoutFacts([...blocks.keys()], blocks, into);
    // a header fetched already was looked for in the warehouse first (by the call that fetched it): not again
    const ask = unknown.filter((hash) => !headers.holds(hash));
    if (!ask.length || !deps.storedHeaders) return unknown;
    let stored: ReadonlyMap<string, { number: number; seconds: string; logsBloom: string }>;
    try {
      stored = await deps.storedHeaders(ask.map((hash) => ({ hash, number: blocks.get(hash)! })));
    } catch (err) {
      deps.logger?.warn({ msg: 'could not read the stored headers; asking the node for them', blocks: ask.length, err: (err as Error).message });
      return unknown;
    }
    unknown = unknown.filter((hash) => {
      const header = stored.get(hash);
      if (header === undefined || header.number !== blocks.get(hash)) return true;
      const seconds = Number(header.seconds);
      const facts = { number: header.number, time: new Date(seconds * 1000).toISOString(), seconds, bloom: bloomBytes(header.logsBloom) };
      rememberFacts(hash, facts);
      into?.set(hash, facts);
      return false;
    });
    return unknown;
  }

  /**
   * The hashes of `blocks` with no facts remembered; those remembered go `into` the map given. Called again right
   * before the node is asked (in the same turn): another page may have checked a block meanwhile, and the
   * pipeline taken its header, which the node would then be asked for again.
   */
  function withoutFacts(hashes: readonly string[], blocks: ReadonlyMap<string, number>, into?: Map<string, BlockFacts>): string[] {
    return hashes.filter((hash) => {
      const facts = blockFacts.get(hash);
      if (facts === undefined || facts.number !== blocks.get(hash)) return true;
      into?.set(hash, facts);
      return false;
    });
  }

  /**
   * One page over the blocks at the top of [query.fromBlock, top]: what a call for another contract found for
   * this query, else a call of its own (naming the contracts expected at the same top too).
   */
  async function readPage(query: PageQuery, contract: string, top: number): Promise<TransfersPage> {
    const me: Member = { contract, fromBlock: query.fromBlock, toBlock: query.toBlock };
    await stored?.ready(me, top, ranges.peek([contract], top).target);
    // before the provider has answered over a whole range once, one query at a time: what a refusal teaches, the next
    // query knows
    const turnEnded = await firstAnswer.turn();
    let slice: Slice;
    try {
      let shared = groups.take(me, top);
      const caughtUp = shared ? undefined : catchUp(me, top);
      // taken and, if none, called at once after the wait: queries woken together share one call
      if (caughtUp) {
        await caughtUp;
        shared = groups.take(me, top);
      }
      // the turn ends when the call is answered (its headers are fetched after), or when it fails
      const answered = (full: boolean) => {
        firstAnswer.answered(full);
        turnEnded();
      };
      slice = (shared && (await shared.catch(() => undefined))) ?? (await call(me, top, answered));
    } finally {
      turnEnded();
    }
    const where = describeContext({ contract, fromBlock: slice.from, toBlock: top });
    const transfers = await withTime(slice.logs, contract, where);
    // the headers fetched for these blocks (by this page or another) that the pipeline has not taken yet: each was
    // looked for in the warehouse before it was fetched
    const fetched = new Set<string>();
    let block: string | undefined;
    for (const t of transfers) {
      // a block's rows are adjacent: each block asked once
      if (t.blockHash === block) continue;
      block = t.blockHash;
      if (headers.holds(block)) fetched.add(block);
    }
    for (const log of slice.skipped) {
      const counts = skipped.get(log.contract) ?? { erc721: 0, other: 0 };
      counts[log.skipped]++;
      skipped.set(log.contract, counts);
    }
    return {
      token: tokensKnown.get(contract) ?? { contractAddress: contract, name: null, symbol: null, decimals: null },
      count: transfers.length,
      nextPageKey: slice.from > query.fromBlock ? `${KEY_PREFIX}${slice.from - 1}` : undefined,
      transfers,
      warnings: [],
      bloomProven: true,
      headersFetched: fetched,
    };
  }

  /**
   * The first block of a call at `top`: where the shortest recent span holding `top` started (when no longer than
   * the range allows, and no shorter than `MET_SPAN_SHARE` of it), else as far down as the range allows; never
   * below a member's query (each chunk's bottom is where others' chunks start), and not leaving a sliver of less
   * than a quarter of the range above it for a call of its own, where the span stays within what a call may ask (a
   * stated block limit, a block ceiling) and the logs it may hold (`mayStretch`).
   */
  function spanStart(members: readonly Member[], top: number, range: LogsRangeState, mayStretchTo = (span: number) => mayStretch(range, span)): number {
    const lowest = Math.max(...members.map((m) => m.fromBlock));
    const met = groups.spanFrom(top);
    // a span the range allows now (another set's may be longer: denser logs would overflow it) and nearly fills,
    // else a range-sized call: a span sized for busier contracts would leave this call's answer short
    // …or a short span that ends where a query waits for this one (`catchUp`): from there on, one call names both
    const follow = met !== undefined && top - met + 1 <= range.range && (top - met + 1 >= range.range * MET_SPAN_SHARE || groups.awaited(met - 1));
    const from = follow ? met : top - range.range + 1;
    // a range reaching past the members' bottom is cut there; one that leaves a sliver there is stretched to it if it may
    return from <= lowest || (from - lowest < range.range / 4 && mayStretchTo(top - lowest + 1)) ? lowest : from;
  }

  /**
   * A query about to call at `top` while queries of other contracts over the same blocks are a span or two behind
   * it (two of the ranges of the contracts it would call with) waits for them to come down to it, at most
   * `CATCH_UP_MS`: it started a call before them, and would otherwise stay a call ahead of them, on its own, all the
   * way down. A query whose wait ran out does not wait again for `CATCH_UP_PAUSE_MS` (what it waited for may be slow
   * for a while). Undefined when none is behind.
   */
  function catchUp(me: Member, top: number): Promise<void> | undefined {
    if (alone.has(top) || (impatient.get(memberKey(me)) ?? 0) > clock.now()) return undefined;
    const range = ranges.peek(
      groups.members(me, top).map((m) => m.contract),
      top,
    ).range;
    const wait = groups.behind(me, top, CATCH_UP_RANGES * range);
    if (!wait) return undefined;
    let timer: NodeJS.Timeout | undefined;
    const timedOut = new Promise<boolean>((resolve) => (timer = setTimeout(resolve, CATCH_UP_MS, true)));
    return Promise.race([wait.caughtUp.then(() => false), timedOut]).then((late) => {
      clearTimeout(timer);
      wait.cancel();
      if (late) {
        impatient.set(memberKey(me), clock.now() + CATCH_UP_PAUSE_MS);
        deps.logger?.debug({ msg: 'eth_getLogs: queries behind did not come down in time; calling without them', contract: me.contract, top, waitedMs: CATCH_UP_MS });
      } else impatient.delete(memberKey(me));
    });
  }

  /**
   * One eth_getLogs at `top` for the asker and the contracts expected there, shrunk while refused (a single block
   * refused for several contracts is asked for the asker alone); what it finds for the others waits for them.
   * Resolves to the asker's slice once the headers of every block in the answer are fetched; `answered` is told as
   * soon as the node answers, and whether over the whole range (the first-answer gate's).
   */
  async function call(me: Member, top: number, answered?: (full: boolean) => void): Promise<Slice> {
    // a contract no answer has told the logs per block of yet (its first call is still out) is not named: the call
    // could not be sized for it, and it asks on its own once it comes down here
    let members = alone.has(top) || !ranges.told(me.contract) ? [me] : groups.members(me, top, ranges.told);
    const contractsOf = () => members.map((m) => m.contract);
    let range = ranges.of(contractsOf(), top);
    let from = spanStart(members, top, range);
    // a call that was to ask the block limit again, cut short under it, leaves that to the next and is sized as any other
    if (ranges.asked(contractsOf(), top, top - from + 1)) {
      range = ranges.peek(contractsOf(), top);
      from = spanStart(members, top, range);
    }
    const byRows = storedBlocks(members, top, range);
    if (byRows !== undefined) {
      if (byRows !== range.range) range = { ...range, range: byRows };
      // stretched to a chunk's end only as far as the rows stored there allow
      from = spanStart(members, top, range, (span) => (storedRows(members, top - span + 1, top) ?? Number.POSITIVE_INFINITY) <= range.target * LOGS_RANGE.stretch);
    }
    let settle: { resolve(slices: ReadonlyMap<string, Slice>): void; reject(err: unknown): void } | undefined;
    const found = new Promise<ReadonlyMap<string, Slice>>((resolve, reject) => {
      settle = { resolve, reject };
    });
    found.catch(() => undefined); // each share handles it
    groups.share(members.slice(1), top, (m) => found.then((slices) => slices.get(m.contract) ?? Promise.reject(new Error('asked alone'))));
    try {
      const { logs: result, read } = await callLogs();
      // a span cut short by the end of a chunk tells nothing of the range: the next query still goes alone
      answered?.(top - from + 1 >= range.range);
      const contracts = contractsOf();
      const answer = budget.timeSync('parse', () => readLogsAnswer(result, { contracts, fromBlock: from, toBlock: top }, read));
      const logs = Array.isArray(result) ? result.length : 0;
      mostLogsAnswered = Math.max(mostLogsAnswered, logs);
      ranges.set(contracts, top, afterAnswer(range, { fromBlock: from, toBlock: top }, logs));
      ranges.answered(contracts, top - from + 1, logsPerContract(answer));
      const removed = answer.removed[0];
      if (removed) {
        throw new ChainMovedError(
          `eth_getLogs answered ${answer.removed.length} log(s) marked removed for ${describeContext({ contract: contracts.join(', '), fromBlock: from, toBlock: top })} ` +
            `(first: contract ${removed.contract}, block ${removed.blockNumber} ${removed.blockHash}, transaction ${removed.transactionHash}, log ${removed.logIndex}): ` +
            'the chain reorganized under the query; the blocks are asked again',
        );
      }
      const slices = new Map(members.map((m): [string, Slice] => [m.contract, { from: Math.max(from, m.fromBlock), logs: [], skipped: [] }]));
      const blocks = new Map<string, number>();
      for (const log of answer.transfers) {
        const slice = slices.get(log.transfer.contractAddress)!;
        if (log.transfer.blockNumber < slice.from) continue;
        slice.logs.push(log);
        blocks.set(log.transfer.blockHash, log.transfer.blockNumber);
      }
      for (const log of answer.skipped) {
        const slice = slices.get(log.contract)!;
        if (log.blockNumber >= slice.from) slice.skipped.push(log);
      }
      // every block of the answer not known yet, in as few batches as possible; each page then finds its headers remembered
      const unknown = await notKnown(blocks);
      await budget.time('headers', () => headers.get(withoutFacts(unknown, blocks)));
      settle!.resolve(slices);
      return slices.get(me.contract)!;
    } catch (err) {
      settle!.reject(err);
      for (const m of members) groups.forget(m);
      throw err;
    }

    async function callLogs(): Promise<{ logs: unknown; read?: ReadLog[] }> {
      for (;;) {
        groups.issued(members, top, from);
        const contracts = contractsOf();
        const outcome = await getTransferLogs(http, { contracts, fromBlock: from, toBlock: top }, rpcTimeoutMs);
        if ('logs' in outcome) return outcome;
        const decision = afterRefusal(range, { fromBlock: from, toBlock: top, contracts }, topAnchored(outcome.refusal, from, top));
        deps.logger?.debug({
          msg: 'eth_getLogs refused; asking again',
          contracts: contracts.length,
          fromBlock: from,
          toBlock: top,
          code: outcome.refusal.code,
          reason: outcome.refusal.message,
          next: decision.action === 'retry' ? decision.span.toBlock - decision.span.fromBlock + 1 : decision.action,
        });
        if (decision.action === 'fail') throw decision.error;
        ranges.set(contracts, top, decision.state);
        range = decision.state;
        if (decision.action === 'per-contract') {
          // the others ask this block on their own
          remember(alone, top);
          for (const m of members.slice(1)) groups.forget(m);
          members = [me];
          range = ranges.of(contractsOf(), top);
          from = top;
          if (ranges.asked(contractsOf(), top, 1)) range = ranges.peek(contractsOf(), top);
          continue;
        }
        // rows stored over the span refused no more than the node is known to answer in one call (its stated cap, or
        // the most logs an answer of this run held), where it refused them as too many logs: fewer rows stored than
        // the node holds (deleted since they were read); its answers size these queries' calls from here on
        if (rowsProvedTooFew(outcome.refusal, storedRows(members, from, top), Math.max(range.maxResults ?? 0, mostLogsAnswered))) stored?.tooFew(members);
        // the span the controller chose, at the top of what is left: pages go newest first; fewer blocks where the
        // stored rows show that its logs would still be more than the target (a refusal cut it, or taught the cap)
        const blocks = Math.min(decision.span.toBlock - decision.span.fromBlock + 1, storedBlocks(members, top, range) ?? Number.POSITIVE_INFINITY);
        from = top - blocks + 1;
      }
    }
  }

  /**
   * The rows, newest first: each transfer with its block's time, from the block's header (checked against the
   * logs' block: hash, number; keccak256 of its fields), agreeing with a log's own time where the node gives one,
   * and each transfer present in the header's logsBloom.
   */
  async function withTime(logs: readonly TransferLog[], contract: string, where: string): Promise<TransferRecord[]> {
    const blocks = new Map<string, number>();
    for (const { transfer } of logs) blocks.set(transfer.blockHash, transfer.blockNumber);
    const known = new Map<string, BlockFacts>();
    const unchecked = withoutFacts(await notKnown(blocks, known), blocks, known);
    const raw = unchecked.length ? await budget.time('headers', () => headers.get(unchecked)) : new Map<string, unknown>();
    return budget.timeSync('parse', () => checkedRows(logs, contract, where, blocks, unchecked, raw, known));
  }

  /** `withTime`'s checks, once the headers are at hand: each new header's, then each row's against its block. */
  function checkedRows(
    logs: readonly TransferLog[],
    contract: string,
    where: string,
    blocks: ReadonlyMap<string, number>,
    unchecked: readonly string[],
    raw: ReadonlyMap<string, unknown>,
    known: Map<string, BlockFacts>,
  ): TransferRecord[] {
    const problems: string[] = [];
    for (const hash of unchecked) {
      const number = blocks.get(hash)!;
      const header = raw.get(hash);
      if (header === null || header === undefined) {
        throw new ChainMovedError(
          `the node does not know block ${number} (${hash}) that its logs for ${where} name: the chain reorganized under the query; the blocks are asked again`,
        );
      }
      const seconds = (header as { timestamp?: unknown }).timestamp;
      const time = typeof seconds === 'string' ? safeTime(seconds) : undefined;
      if (time === undefined && typeof seconds === 'string' && isHexQuantity(seconds)) {
        problems.push(`contract ${contract}, block ${number} (${hash}), header.timestamp: expected seconds within the dates, got ${seconds}`);
        continue;
      }
      // a malformed time fails here, as any malformed field
      const checked = checks.checkHeader(header, { hash, number, timestamp: time ?? new Date(0).toISOString(), contracts: [contract] });
      const facts: BlockFacts = { number, time: time!, seconds: Date.parse(time!) / 1000, bloom: bloomBytes(checked.header.logsBloom!) };
      rememberFacts(hash, facts);
      known.set(hash, facts);
    }
    if (problems.length) throw new BadResponseError(`the node answered bad headers for ${where}`, problems);
    const rows: TransferRecord[] = [];
    // the page is one contract's: once its address and the Transfer topic are in a block's bloom, they are for the block's next rows
    let held: BlockFacts | undefined;
    for (let i = logs.length - 1; i >= 0; i--) {
      const log = logs[i]!;
      const t = log.transfer;
      const block = known.get(t.blockHash)!;
      // the log's own time, where it has one, against its header's (the problem's text made only when they differ)
      if (log.logTimestamp !== undefined && log.logTimestamp !== block.seconds) problems.push(logTimestampProblem(log, block.time)!);
      const missing = missingFromBloom(block.bloom, t, bloomBits, held === block && t.contractAddress === contract);
      if (missing === undefined || missing === 'from topic' || missing === 'to topic') held = block;
      if (missing) {
        problems.push(
          `transaction ${t.transactionHash}, log ${t.logIndex}, contract ${t.contractAddress}, block ${t.blockNumber} (${t.blockHash}): ` +
            `the block header's logsBloom rules out its ${missing}: the transfer is not in that block`,
        );
      }
      rows.push(withBlockTimestamp(t, block.time));
    }
    if (problems.length) throw new BadResponseError(`eth_getLogs answered transfers their blocks' headers contradict, for ${where}`, problems);
    return rows;
  }

  return {
    async fetchPage(query) {
      // `query.pageSize` is not used: a page is one eth_getLogs call over whole blocks, sized by the adaptive range
      const contract = query.contract.toLowerCase();
      const top = query.pageKey === undefined ? query.toBlock : keyBlock(query);
      if (top < query.fromBlock)
        return { token: { contractAddress: contract, name: null, symbol: null, decimals: null }, count: 0, nextPageKey: undefined, transfers: [], warnings: [] };
      return withRetry(() => readPage(query, contract, top), { ...REORG_RETRY, clock });
    },
    endQuery(query) {
      const me = { contract: query.contract.toLowerCase(), fromBlock: query.fromBlock, toBlock: query.toBlock };
      groups.forget(me);
      stored?.forget(me);
    },
    headersByHash: (hashes) => headers.serve(hashes),
    checks,
    get headerBatchSize() {
      return headers.batchSize;
    },
    async chainHead() {
      return { head: await blockNumber(http), from: 'eth_blockNumber' };
    },
    tokenMetadata(contract) {
      const key = contract.toLowerCase();
      let token = tokens.get(key);
      if (token === undefined) {
        token = readTokenMetadata(http, key).then((t) => {
          tokensKnown.set(key, t);
          return t;
        });
        token.catch(() => tokens.delete(key));
        tokens.set(key, token);
      }
      return token;
    },
    skippedLogs: () => skipped,
    counters,
    close: () => http.close(),
    chainId: chainIdOnce(http),
    learnedRange: () => ranges.learned(),
    learnedBlockLimit: () => ranges.blockLimit(),
    supportsErigon: () => headers.supportsErigon(),
  };
}

/** The block a page key of this source names (the top of the next page), checked against its query. */
function keyBlock(query: PageQuery): number {
  const key = query.pageKey!;
  const block = key.startsWith(KEY_PREFIX) && /^\d{1,16}$/.test(key.slice(KEY_PREFIX.length)) ? Number(key.slice(KEY_PREFIX.length)) : undefined;
  if (block !== undefined && Number.isSafeInteger(block) && block >= query.fromBlock - 1 && block < query.toBlock) return block;
  const request = `eth_getLogs pages (${describeContext({ contract: query.contract, fromBlock: query.fromBlock, toBlock: query.toBlock })})`;
  return rejectKey(request, key);
}

function rejectKey(request: string, key: string): never {
  const message = `${request}: the page key ${JSON.stringify(key.slice(0, 40))} is not one of this node source's keys for this query: restart the query without it from the lowest committed block`;
  throw new PageKeyRejectedError(message, request, { status: 400 });
}

/**
 * A refusal as it helps a span asked again at the top: providers suggest a range from the first block asked
 * (Infura, Alchemy, reth), the blocks whose logs fit below the first that overflows. Its size, moved to the top,
 * fits as well only where the logs are spread evenly; when the overflow is near the top (the suggestion covers
 * more than half the span), following it would shed a few blocks at a time: the span is halved instead.
 */
function topAnchored(refusal: LogsRefusal, from: number, top: number): LogsRefusal {
  const suggested = refusal.suggested;
  if (suggested === undefined || (suggested.toBlock - suggested.fromBlock + 1) * 2 <= top - from + 1) return refusal;
  const { suggested: _, ...rest } = refusal;
  return rest;
}

/** Each contract's logs in an answer, whatever their kind: a provider's cap counts them all. */
function logsPerContract(answer: LogsAnswer): Map<string, number> {
  const counts = new Map<string, number>();
  const add = (contract: string) => counts.set(contract, (counts.get(contract) ?? 0) + 1);
  for (const log of answer.transfers) add(log.transfer.contractAddress);
  for (const log of answer.skipped) add(log.contract);
  for (const log of answer.removed) add(log.contract);
  return counts;
}

function remember(set: Set<number>, block: number): void {
  set.add(block);
  if (set.size > ALONE_REMEMBERED) set.delete(set.values().next().value!);
}

/** `blockTimestampOf`, or undefined when the seconds are beyond the dates. */
function safeTime(seconds: string): string | undefined {
  try {
    return blockTimestampOf(seconds);
  } catch {
    return undefined;
  }
}
