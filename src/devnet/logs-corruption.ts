import { hexToBytes } from '@noble/hashes/utils.js';
import type { HeaderJson } from '../eth/header-fields.ts';
import { toQuantity } from '../eth/hex.ts';
import { bloomBits, bloomHasBits } from '../eth/logs-bloom.ts';
import { type ChainLog, rpcLog } from './chain-log.ts';
import type { LogsCorruption } from './corruption.ts';
import { type LogFilter, topicsMatch } from './log-filter.ts';

/**
 * Bad `eth_getLogs` results, as a faulty node or provider could answer them: the node-source analogues of the
 * builder page kinds (corruption.ts). The transforms are pure: they take the logs of an answer and give a
 * damaged copy, naming the log (its block and log index) and the field they damaged.
 */

/** One log of an `eth_getLogs` result, as `rpcLog` writes it (hex quantities). */
export type LogJson = Record<string, unknown>;

/** What the `eth_getLogs` call asked for, its block tags resolved. */
export interface LogsCall {
  /** Inclusive. */
  from: number;
  /** Inclusive. */
  to: number;
  /** The emitters asked for; `undefined`: every address. */
  addresses: ReadonlySet<string> | undefined;
  topics: LogFilter['topics'];
}

/** What the transforms read of the chain: other emitters' logs and the headers of blocks (for their time and bloom). */
export interface LogsChain {
  logs(from: number, to: number): ChainLog[];
  headerByNumber(number: number): HeaderJson | undefined;
}

export interface LogsDamage {
  logs: LogJson[];
  /** The block of the damaged log (where it now stands, when it was moved). */
  block: number;
  /** The log index of the damaged log. */
  log: number;
  /** Where in the result: `result[3].topics[1]`, `result[0].blockNumber`, … */
  field: string;
}

/** The part of an address topic before its 20 address bytes: 12 zero bytes. */
const ADDRESS_TOPIC_PAD = `0x${'00'.repeat(12)}`;

/**
 * A damaged copy of an `eth_getLogs` result (its logs as objects of their fields, each copied here), or `undefined`
 * when `kind` cannot apply to it (no ERC-20 transfer log in it; no other emitter's log in the blocks asked; no block
 * asked whose bloom rules the log out): the order then waits for the next answer. The damage goes to the middle
 * ERC-20 transfer log (3 topics, 32 bytes of data):
 * - `logs-bad-address`: its topics[1] (from) gets a non-zero first byte: not an address topic;
 * - `logs-non-hex-value`: its data is the value as decimal text, not 0x hex;
 * - `logs-short-value`: its data loses its first byte: 31 bytes, not one uint256;
 * - `logs-missing-field`: it has no `transactionHash`;
 * - `logs-bad-timestamp`: every log of its block says the block's time one second later than the header;
 * - `logs-duplicate`: it is answered twice in a row;
 * - `logs-outside-range`: a copy of it, moved to the block below the blocks asked (above them, when they start
 *   at block 0), with that block's hash and time when the chain holds it, comes first (last);
 * - `logs-other-contract`: another emitter's log of the blocks asked, matching the topics asked, is added in
 *   chain order (the one nearest the middle log's block);
 * - `logs-bloom`: it is moved to the nearest other block asked whose header's logsBloom rules out its contract
 *   (hash, number and time of that block), in chain order.
 *
 * @example corruptLogs('logs-missing-field', logs, call, chain) // → { logs: <copy, result[2] without transactionHash>, block: 17000000, log: 5, field: 'result[2].transactionHash' }
 */
export function corruptLogs(kind: LogsCorruption, input: readonly object[], call: LogsCall, chain: LogsChain): LogsDamage | undefined {
  const logs = input.map((l): LogJson => ({ ...l }));
  const transfers = logs.flatMap((l, i) => (isTransferLog(l) ? [i] : []));
  if (!transfers.length) return undefined;
  const i = transfers[Math.floor((transfers.length - 1) / 2)]!;
  const log = logs[i]!;
  const block = numberOf(log.blockNumber);
  const logIndex = numberOf(log.logIndex);
  const at = (field: string, index = i) => ({ logs, block, log: logIndex, field: `result[${index}]${field}` });
  switch (kind) {
    case 'logs-bad-address': {
      const topics = [...(log.topics as string[])];
      topics[1] = `0xff${topics[1]!.slice(4)}`;
      log.topics = topics;
      return at('.topics[1]');
    }
    case 'logs-non-hex-value':
      log.data = BigInt(log.data as string).toString();
      return at('.data');
    case 'logs-short-value':
      log.data = `0x${(log.data as string).slice(4)}`;
      return at('.data');
    case 'logs-missing-field':
      delete log.transactionHash;
      return at('.transactionHash');
    case 'logs-bad-timestamp':
      for (const l of logs) if (l.blockNumber === log.blockNumber) l.blockTimestamp = toQuantity(BigInt(l.blockTimestamp as string) + 1n);
      return at('.blockTimestamp');
    case 'logs-duplicate':
      logs.splice(i + 1, 0, { ...log });
      return at('', i + 1);
    case 'logs-outside-range': {
      const below = call.from > 0;
      const outside = below ? call.from - 1 : call.to + 1;
      const header = chain.headerByNumber(outside);
      const copy: LogJson = {
        ...logs[below ? transfers[0]! : transfers.at(-1)!],
        blockNumber: toQuantity(outside),
        ...(header && { blockHash: header.hash, blockTimestamp: header.timestamp }),
      };
      if (below) logs.unshift(copy);
      else logs.push(copy);
      const index = below ? 0 : logs.length - 1;
      return { logs, block: outside, log: numberOf(copy.logIndex), field: `result[${index}].blockNumber` };
    }
    case 'logs-other-contract': {
      const asked = call.addresses;
      if (asked === undefined) return undefined;
      const others = chain.logs(call.from, call.to).filter((l) => !asked.has(l.address) && topicsMatch(call.topics, l.topics));
      const nearest = others.sort((a, b) => Math.abs(a.blockNumber - block) - Math.abs(b.blockNumber - block))[0];
      if (!nearest) return undefined;
      const index = placeInOrder(logs, { ...rpcLog(nearest) });
      return { logs, block: nearest.blockNumber, log: nearest.logIndex, field: `result[${index}].address` };
    }
    case 'logs-bloom': {
      const contractBits = bloomBits(hexToBytes((log.address as string).slice(2)));
      const answered = new Set(logs.map((l) => l.blockNumber));
      let target: HeaderJson | undefined;
      for (let d = 1; !target && (block - d >= call.from || block + d <= call.to); d++) {
        for (const n of [block - d, block + d]) {
          if (target || n < call.from || n > call.to || answered.has(toQuantity(n))) continue;
          const header = chain.headerByNumber(n);
          if (header?.logsBloom && header.timestamp && !bloomHasBits(hexToBytes(header.logsBloom.slice(2)), contractBits)) target = header;
        }
      }
      if (!target) return undefined;
      logs.splice(i, 1);
      const moved: LogJson = { ...log, blockNumber: target.number, blockHash: target.hash, blockTimestamp: target.timestamp };
      const index = placeInOrder(logs, moved);
      return { logs, block: numberOf(target.number), log: logIndex, field: `result[${index}].blockHash` };
    }
  }
}

/** An ERC-20 transfer's log: 3 topics, the second an address topic, and 32 bytes of data. */
function isTransferLog(log: LogJson): boolean {
  const topics = log.topics;
  return (
    Array.isArray(topics) &&
    topics.length === 3 &&
    typeof topics[1] === 'string' &&
    topics[1].startsWith(ADDRESS_TOPIC_PAD) &&
    typeof log.data === 'string' &&
    log.data.length === 66
  );
}

/** Inserts `log` into `logs` (in chain order) where chain order puts it; its index. */
function placeInOrder(logs: LogJson[], log: LogJson): number {
  const block = numberOf(log.blockNumber);
  const index = numberOf(log.logIndex);
  let at = logs.findIndex((l) => numberOf(l.blockNumber) > block || (numberOf(l.blockNumber) === block && numberOf(l.logIndex) > index));
  if (at < 0) at = logs.length;
  logs.splice(at, 0, log);
  return at;
}

function numberOf(quantity: unknown): number {
  return Number(BigInt(quantity as string));
}
