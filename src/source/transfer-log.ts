import { disagreeingFields, type BlockSighting } from '../dataset/block-agreement.ts';
import type { TransferRecord } from '../dataset/types.ts';
import { show } from '../dataset/validate.ts';
import { isHexData, isHexText } from '../eth/hex.ts';
import { TRANSFER_TOPIC } from '../eth/logs-bloom.ts';
import { BadResponseError } from './errors.ts';

/**
 * A log of `eth_getLogs` (node-source.md, "From a log to a row") as an ERC-20 transfer, a skipped log
 * (ERC-721, other shapes) or a reorg signal, validated field by field as strictly as the builder source's rows.
 * Decoded by hand: a Transfer log is three topics and one uint256, and viem (ABI decoding) is not a production
 * dependency.
 */

/**
 * A transfer as its log tells it: a row whose `blockTimestamp` is empty until the block's header gives it
 * (`withBlockTimestamp`), built in the dataset's field order so that the row is this very object.
 */
export type LogTransfer = TransferRecord;

/** Where a log is: what a skipped log or a reorg signal is counted and reported by. */
export interface LogPlace {
  contract: string;
  blockNumber: number;
  blockHash: string;
  transactionHash: string;
  logIndex: number;
}

export interface TransferLog {
  kind: 'transfer';
  transfer: LogTransfer;
  /** The log's own `blockTimestamp` in seconds (newer nodes add it), to compare with the header's (`logTimestampProblem`). */
  logTimestamp: number | undefined;
}

/** A log with the Transfer topic that is not an ERC-20 transfer: counted per contract, never stored. */
export interface SkippedLog extends LogPlace {
  kind: 'skipped';
  /** 4 topics: ERC-721 (the token id indexed); any other shape: `other`. */
  skipped: 'erc721' | 'other';
}

/** A log with `removed: true`: its block left the chain. A reorg signal, never a row. */
export interface RemovedLog extends LogPlace {
  kind: 'removed';
}

export type LogReading = TransferLog | SkippedLog | RemovedLog;

/** Hex texts of a log, checked without a regular expression (`isHexText`: a log has five to seven). */
const isAddress = (s: string) => isHexText(s, 40);
const isHash = (s: string) => isHexText(s, 64);
const ADDRESS_TOPIC = { zeros: 24 } as const;
const isAddressTopic = (s: string) => isHexText(s, 64, ADDRESS_TOPIC);
/** A minimal hex quantity up to 2^53−1 (14 hex digits at most; the value is checked too). */
const QUANTITY = /^0x(?:0|[1-9a-fA-F][0-9a-fA-F]{0,13})$/;

const EXPECT = {
  address: 'expected a 0x address of 40 hex digits',
  hash: 'expected a 0x hash of 64 hex digits',
  quantity: 'expected a hex quantity (0x, no leading zeros) up to 2^53-1',
  topic: 'expected a 0x topic of 64 hex digits',
  addressTopic: 'expected an address topic (12 zero bytes, then 20 bytes)',
} as const;

/**
 * Reads one log of an `eth_getLogs` answer (a query for the Transfer topic). Pushes every problem, each naming
 * contract, block, log and field (and `result[index]` when the block or log index is unreadable), and
 * returns undefined for a bad log. Addresses and hashes come out lower case, the value as decimal text.
 *
 * @example
 * readTransferLog({ address: '0xA0b8…', topics: [TRANSFER_TOPIC, from, to], data: '0x…0f4240', blockNumber: '0x1036640', logIndex: '0x5', … }, problems)
 * // → { kind: 'transfer', transfer: { contractAddress: '0xa0b8…', …, value: '1000000', blockNumber: 17000000, logIndex: 5, … }, logTimestamp: undefined }
 * // or pushes: contract 0xa0b8…, block 17000000, log 5, topics[1]: expected an address topic (12 zero bytes, then 20 bytes), got "0x…"
 */
export function readTransferLog(raw: unknown, problems: string[], index?: number): LogReading | undefined {
  if (raw === null || typeof raw !== 'object' || Array.isArray(raw)) {
    problems.push(`${index === undefined ? 'log' : `result[${index}]`}: expected a log object, got ${show(raw)}`);
    return undefined;
  }
  const log = raw as Record<string, unknown>;
  const address = text(log.address, isAddress);
  const blockNumber = quantity(log.blockNumber);
  const logIndex = quantity(log.logIndex);
  const before = problems.length;
  // built only for a problem: a million logs a minute pass here
  const fail = (field: string, expected: string, value: unknown) => {
    const parts = [address && `contract ${address}`, blockNumber !== undefined && `block ${blockNumber}`, logIndex !== undefined && `log ${logIndex}`];
    if ((blockNumber === undefined || logIndex === undefined) && index !== undefined) parts.push(`result[${index}]`);
    problems.push(`${parts.filter(Boolean).join(', ') || 'log'}, ${field}: ${expected}, got ${show(value)}`);
  };

  if (address === undefined) fail('address', EXPECT.address, log.address);
  if (blockNumber === undefined) fail('blockNumber', EXPECT.quantity, log.blockNumber);
  if (logIndex === undefined) fail('logIndex', EXPECT.quantity, log.logIndex);
  const blockHash = text(log.blockHash, isHash);
  if (blockHash === undefined) fail('blockHash', EXPECT.hash, log.blockHash);
  const transactionHash = text(log.transactionHash, isHash);
  if (transactionHash === undefined) fail('transactionHash', EXPECT.hash, log.transactionHash);
  const transactionIndex = quantity(log.transactionIndex);
  if (transactionIndex === undefined) fail('transactionIndex', EXPECT.quantity, log.transactionIndex);
  if (log.removed !== undefined && typeof log.removed !== 'boolean') fail('removed', 'expected true or false', log.removed);
  const hasTimestamp = log.blockTimestamp !== undefined && log.blockTimestamp !== null;
  const logTimestamp = hasTimestamp ? quantity(log.blockTimestamp) : undefined;
  if (hasTimestamp && logTimestamp === undefined) fail('blockTimestamp', EXPECT.quantity, log.blockTimestamp);
  const data = typeof log.data === 'string' && isHexData(log.data) ? log.data : undefined;
  if (data === undefined) fail('data', 'expected 0x hex bytes', log.data);
  // an event's data is ABI-encoded: whole 32-byte words; a log cut short is damaged, not another shape to skip
  else if ((data.length - 2) % 64 !== 0) fail('data', 'expected ABI-encoded data (whole 32-byte words)', log.data);
  const topics = Array.isArray(log.topics) ? (log.topics as unknown[]) : [];
  if (!Array.isArray(log.topics)) fail('topics', 'expected an array of topics', log.topics);
  else if (topics.length === 0) fail('topics', `expected the Transfer topic ${TRANSFER_TOPIC} first`, topics);
  // topics 1 and 2 as address topics (each also a well-formed topic: tested once, the transfer's shape needs it)
  let addressTopics = 0;
  for (let i = 0; i < topics.length; i++) {
    const topic = topics[i];
    if (i === 0 && topic === TRANSFER_TOPIC) continue;
    if ((i === 1 || i === 2) && typeof topic === 'string' && isAddressTopic(topic)) {
      addressTopics++;
      continue;
    }
    if (typeof topic !== 'string' || !isHash(topic)) fail(`topics[${i}]`, EXPECT.topic, topic);
    else if (i === 0 && topic.toLowerCase() !== TRANSFER_TOPIC) fail('topics[0]', `expected the Transfer topic ${TRANSFER_TOPIC}, the one asked for`, topic);
  }
  if (problems.length > before) return undefined;

  const from = topics[1] as string;
  const to = topics[2] as string;
  if (log.removed !== true && topics.length === 3 && data!.length === 66) {
    if (addressTopics < 2) {
      if (!isAddressTopic(from)) fail('topics[1]', EXPECT.addressTopic, from);
      if (!isAddressTopic(to)) fail('topics[2]', EXPECT.addressTopic, to);
      return undefined;
    }
    return {
      kind: 'transfer',
      transfer: {
        contractAddress: address!,
        // lower-cased after joining, meant to leave one flat string rather than a join kept with its topic (not measured apart)
        fromAddress: `0x${from.slice(26)}`.toLowerCase(),
        toAddress: `0x${to.slice(26)}`.toLowerCase(),
        value: BigInt(data!).toString(),
        blockHash: blockHash!,
        blockNumber: blockNumber!,
        blockTimestamp: '',
        transactionHash: transactionHash!,
        transactionIndex: transactionIndex!,
        logIndex: logIndex!,
      },
      logTimestamp,
    };
  }
  const place: LogPlace = { contract: address!, blockNumber: blockNumber!, blockHash: blockHash!, transactionHash: transactionHash!, logIndex: logIndex! };
  if (log.removed === true) return { kind: 'removed', ...place };
  return { kind: 'skipped', skipped: topics.length === 4 ? 'erc721' : 'other', ...place };
}

/** A log of an answer read on its own (`readLogElement`): its reading, or the problems that make it unreadable. */
export type ReadLog = LogReading | { kind: 'unreadable'; problems: string[] };

/**
 * `readTransferLog` of the answer's log at `index`, as a value: what the HTTP client makes of each log as it parses
 * an answer (`CallOptions.resultElement`), for `readLogsAnswer`. Never throws.
 *
 * @example readLogElement({ address: 7 }, 3) // → { kind: 'unreadable', problems: ['result[3], address: expected a 0x address …', …] }
 */
export function readLogElement(raw: unknown, index: number): ReadLog {
  const problems: string[] = [];
  return readTransferLog(raw, problems, index) ?? { kind: 'unreadable', problems };
}

/** What an `eth_getLogs` call asked for. */
export interface LogsQuery {
  contracts: readonly string[];
  /** Inclusive. */
  fromBlock: number;
  /** Inclusive. */
  toBlock: number;
}

/** An `eth_getLogs` answer, read: transfers in chain order, skipped logs and reorg signals. */
export interface LogsAnswer {
  transfers: TransferLog[];
  skipped: SkippedLog[];
  removed: RemovedLog[];
}

/**
 * Reads and checks a whole `eth_getLogs` result against its query: every log as `readTransferLog` reads it,
 * each from a contract asked for and a block in the range, in chain order (block, then log index, ascending; a
 * log twice is out of order), and the logs of one block agreeing on its hash and time, by the project's one rule
 * for rows of a block (`disagreeingFields`): each log's hash against the log before it, its own `blockTimestamp`
 * (where it has one) against the first of the block that had one. Logs with `removed: true` are checked for
 * contract and range only. Throws one `BadResponseError` listing every problem. `read`: the result's logs already
 * read one by one (`readLogElement`, as the HTTP client parsed them), one for each element of `result`.
 *
 * @example readLogsAnswer(result, { contracts: ['0xa0b8…'], fromBlock: 17000000, toBlock: 17000099 })
 * // → { transfers: [{ kind: 'transfer', transfer: { … }, logTimestamp: undefined }, …], skipped: [], removed: [] }
 */
export function readLogsAnswer(result: unknown, query: LogsQuery, read?: readonly ReadLog[]): LogsAnswer {
  // each contract's text once: rows of the answer share it (and a block's logs share their block's hash) rather than each keep a copy
  const asked = new Map(query.contracts.map((c) => [c.toLowerCase(), c.toLowerCase()]));
  const blocks = query.fromBlock === query.toBlock ? `block ${query.fromBlock}` : `blocks ${query.fromBlock}–${query.toBlock}`;
  const scope = asked.size === 1 ? `contract ${[...asked.keys()][0]}, ${blocks}` : `${asked.size} contracts, ${blocks}`;
  const summary = `eth_getLogs answered a malformed result for ${scope}`;
  if (!Array.isArray(result)) throw new BadResponseError(summary, [`${scope}, result: expected an array of logs, got ${show(result)}`]);

  const problems: string[] = [];
  const answer: LogsAnswer = { transfers: [], skipped: [], removed: [] };
  // the previous log in chain order (none yet: index -1), and its block as the shared rule reads it: the previous
  // log's hash, and the block's time as the first of its logs that had one gave it ('' while none has)
  let lastIndex = -1;
  let lastLog = 0;
  let lastTime: number | undefined;
  const seen: BlockSighting = { hash: '', number: 0, timestamp: '' };
  // this log's block, reused from log to log (a million logs a minute pass here)
  const row = { blockHash: '', blockNumber: 0, blockTimestamp: '' };
  if (read !== undefined && read.length !== result.length) throw new Error(`readLogsAnswer: ${read.length} logs read for a result of ${result.length}`);
  for (let i = 0; i < result.length; i++) {
    const reading = read ? read[i]! : readLogElement(result[i], i);
    if (reading.kind === 'unreadable') {
      for (const p of reading.problems) problems.push(p);
      continue;
    }
    const place = reading.kind === 'transfer' ? reading.transfer : reading;
    const contract = reading.kind === 'transfer' ? reading.transfer.contractAddress : reading.contract;
    const { blockNumber: block, logIndex, blockHash } = place;
    const where = () => `contract ${contract}, block ${block}, log ${logIndex}, result[${i}]`;
    const shared = asked.get(contract);
    if (shared === undefined) problems.push(`${where()}.address: expected a contract asked for, got ${contract}`);
    else if (reading.kind === 'transfer') reading.transfer.contractAddress = shared;
    else reading.contract = shared;
    if (block === seen.number && blockHash === seen.hash) place.blockHash = seen.hash;
    if (block < query.fromBlock || block > query.toBlock) {
      problems.push(`${where()}.blockNumber: expected a block from ${query.fromBlock} to ${query.toBlock} (the queried range), got ${block}`);
    }
    if (reading.kind === 'removed') {
      answer.removed.push(reading);
      continue;
    }
    const time = reading.kind === 'transfer' ? reading.logTimestamp : undefined;
    if (lastIndex >= 0) {
      if (block === seen.number && logIndex === lastLog) {
        problems.push(`${where()}: the same log twice (block ${block} log ${logIndex}, as result[${lastIndex}]): expected each log once, in chain order`);
      } else if (block < seen.number || (block === seen.number && logIndex < lastLog)) {
        problems.push(
          `${where()}: expected chain order (blockNumber, then logIndex, ascending), got block ${block} log ${logIndex} after block ${seen.number} log ${lastLog} at result[${lastIndex}]`,
        );
      }
      if (block === seen.number) {
        row.blockHash = blockHash;
        row.blockNumber = block;
        // a log without its own time, or a block none of whose logs had one yet, has no time to disagree on; the
        // same seconds are the same time (no date to spell)
        row.blockTimestamp = time === undefined || lastTime === undefined || time === lastTime ? seen.timestamp : isoSeconds(time);
        // never `number`: the logs of one block number are the ones compared
        for (const field of disagreeingFields(seen, row)) {
          if (field === 'hash') problems.push(`${where()}.blockHash: expected ${seen.hash} as in result[${lastIndex}] of the same block, got ${blockHash}`);
          else if (field === 'timestamp') {
            problems.push(`${where()}.blockTimestamp: expected ${hexSeconds(lastTime!)} as in an earlier log of the same block, got ${hexSeconds(time!)}`);
          }
        }
      }
    }
    if (block !== seen.number) {
      lastTime = undefined;
      seen.timestamp = '';
    }
    if (lastTime === undefined && time !== undefined) {
      lastTime = time;
      seen.timestamp = isoSeconds(time);
    }
    lastIndex = i;
    seen.number = block;
    lastLog = logIndex;
    seen.hash = place.blockHash;
    if (reading.kind === 'transfer') answer.transfers.push(reading);
    else answer.skipped.push(reading);
  }
  if (problems.length) throw new BadResponseError(summary, problems);
  return answer;
}

/**
 * A block's time as rows carry it, from its header's `timestamp` (seconds, a hex quantity).
 *
 * @example blockTimestampOf('0x6431dbe3') // → '2023-04-08T21:25:55.000Z'
 */
export function blockTimestampOf(headerTimestamp: string): string {
  const seconds = quantity(headerTimestamp);
  const date = seconds === undefined ? undefined : new Date(seconds * 1000);
  if (date === undefined || Number.isNaN(date.getTime()))
    throw new RangeError(`a header timestamp must be a hex quantity of seconds within the dates, got ${show(headerTimestamp)}`);
  return date.toISOString();
}

/**
 * The row: the transfer given its block's time (`blockTimestampOf` its header), fields in dataset order. The
 * transfer itself becomes the row (a million rows a run are not copied once more).
 *
 * @example withBlockTimestamp(transfer, '2023-04-08T21:26:11.000Z') // → transfer, now { contractAddress, …, blockTimestamp: '2023-04-08T21:26:11.000Z', … }
 */
export function withBlockTimestamp(t: LogTransfer, blockTimestamp: string): TransferRecord {
  t.blockTimestamp = blockTimestamp;
  return t;
}

/**
 * Whether a log's own `blockTimestamp` agrees with its block header's time (ISO, as `blockTimestampOf` gives
 * it): a problem naming contract, block, log and both times, or undefined (also when the log has none).
 *
 * @example logTimestampProblem(log, '2023-04-08T21:25:55.000Z')
 * // → 'contract 0xa0b8…, block 17000000, log 5, blockTimestamp: expected 0x6431dbe3 (2023-04-08T21:25:55.000Z, the block header's time), got 0x6431dbe4 (2023-04-08T21:25:56.000Z)'
 */
export function logTimestampProblem(log: TransferLog, blockTimestamp: string): string | undefined {
  if (log.logTimestamp === undefined) return undefined;
  const headerSeconds = Date.parse(blockTimestamp) / 1000;
  if (log.logTimestamp === headerSeconds) return undefined;
  const { contractAddress, blockNumber, logIndex } = log.transfer;
  const header = Number.isInteger(headerSeconds)
    ? `${hexSeconds(headerSeconds)} (${blockTimestamp}, the block header's time)`
    : `${show(blockTimestamp)} (the block header's time)`;
  const own = new Date(log.logTimestamp * 1000);
  return `contract ${contractAddress}, block ${blockNumber}, log ${logIndex}, blockTimestamp: expected ${header}, got ${hexSeconds(log.logTimestamp)}${Number.isNaN(own.getTime()) ? '' : ` (${own.toISOString()})`}`;
}

/** Lower-case text when it matches `pattern`. */
function text(value: unknown, valid: (s: string) => boolean): string | undefined {
  return typeof value === 'string' && valid(value) ? value.toLowerCase() : undefined;
}

/** A minimal hex quantity up to 2^53−1 as a number. */
function quantity(value: unknown): number | undefined {
  if (typeof value !== 'string' || !QUANTITY.test(value)) return undefined;
  const n = Number(value);
  return Number.isSafeInteger(n) ? n : undefined;
}

function hexSeconds(seconds: number): string {
  return `0x${seconds.toString(16)}`;
}

/**
 * A log's time as the shared rule compares times: ISO 8601, or, beyond the dates a `Date` holds, the hex
 * quantity itself (which names no date: equal only to itself).
 */
function isoSeconds(seconds: number): string {
  const date = new Date(seconds * 1000);
  return Number.isNaN(date.getTime()) ? hexSeconds(seconds) : date.toISOString();
}
