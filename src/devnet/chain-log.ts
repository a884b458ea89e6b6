/**
 * A log as the chain holds it, and as `eth_getLogs` answers it. An ERC-20 transfer row is the log its
 * contract emitted: `Transfer(address indexed from, address indexed to, uint256 value)` (node-source.md).
 */
import type { TransferRecord } from '../dataset/types.ts';
import { toQuantity } from '../eth/hex.ts';

/** keccak256("Transfer(address,address,uint256)"): topic 0 of ERC-20 and ERC-721 transfers alike. */
export const TRANSFER_TOPIC = '0xddf252ad1be2c89b69c2b068fc378daa952ba7f163c4a11628f55a4df523b3ef';

export interface ChainLog {
  address: string;
  topics: readonly string[];
  data: string;
  blockNumber: number;
  blockHash: string;
  /** Unix seconds: the block's timestamp, which newer nodes add to each log. */
  blockTimestamp: number;
  transactionHash: string;
  transactionIndex: number;
  logIndex: number;
}

/** The log fields that do not depend on where the log stands in the chain. */
export type LogBody = Pick<ChainLog, 'address' | 'topics' | 'data'>;

/**
 * An address as an indexed topic: 12 zero bytes, then its 20 bytes.
 *
 * @example addressTopic('0xc02aaa39b223fe8d0a0e5c4f27ead9083c756cc2')
 * // → '0x000000000000000000000000c02aaa39b223fe8d0a0e5c4f27ead9083c756cc2'
 */
export function addressTopic(address: string): string {
  return `0x000000000000000000000000${address.slice(2)}`;
}

/**
 * A uint256 as one 32-byte ABI word: 64 hex digits, big-endian, no `0x`.
 *
 * @example uint256Word(255n) // → '00…00ff' (62 zeros, then ff)
 */
export function uint256Word(value: bigint | number | string): string {
  return BigInt(value).toString(16).padStart(64, '0');
}

/** The log a transfer row stands for: topics [TRANSFER, from, to], the value as 32 bytes of data. */
export function transferLog(t: TransferRecord): ChainLog {
  return {
    address: t.contractAddress,
    topics: [TRANSFER_TOPIC, addressTopic(t.fromAddress), addressTopic(t.toAddress)],
    data: `0x${uint256Word(t.value)}`,
    blockNumber: t.blockNumber,
    blockHash: t.blockHash,
    blockTimestamp: Date.parse(t.blockTimestamp) / 1000,
    transactionHash: t.transactionHash,
    transactionIndex: t.transactionIndex,
    logIndex: t.logIndex,
  };
}

/**
 * A log as geth answers it in `eth_getLogs`, numbers as hex quantities, with `blockTimestamp` as newer
 * nodes add it and `removed: false` (the server only serves the canonical chain). Its own fields are the
 * answer's, in geth's key order, so it spreads and stringifies as the plain object would; it is frozen.
 * The server's answers write the same text without making it (logs-answer.ts).
 */
export class RpcLog {
  readonly address: string;
  readonly topics: readonly string[];
  readonly data: string;
  readonly blockNumber: string;
  readonly blockHash: string;
  readonly blockTimestamp: string;
  readonly transactionHash: string;
  readonly transactionIndex: string;
  readonly logIndex: string;
  readonly removed = false;

  constructor(log: ChainLog) {
    this.address = log.address;
    this.topics = Object.freeze([...log.topics]);
    this.data = log.data;
    this.blockNumber = toQuantity(log.blockNumber);
    this.blockHash = log.blockHash;
    this.blockTimestamp = toQuantity(log.blockTimestamp);
    this.transactionHash = log.transactionHash;
    this.transactionIndex = toQuantity(log.transactionIndex);
    this.logIndex = toQuantity(log.logIndex);
    Object.freeze(this);
  }
}

/** The `eth_getLogs` answer of a log: see `RpcLog`. */
export function rpcLog(log: ChainLog): RpcLog {
  return new RpcLog(log);
}

/**
 * A log as the chain store holds it: a transfer row, whose log (`transferLog`) is made only when asked for, or a log
 * of its own (a foreign one: foreign-logs.ts).
 */
export type StoredLog = TransferRecord | ChainLog;

export function isTransferRow(log: StoredLog): log is TransferRecord {
  return 'fromAddress' in log;
}

/** The log a stored log stands for. */
export function chainLogOf(log: StoredLog): ChainLog {
  return isTransferRow(log) ? transferLog(log) : log;
}

/** How many topics a stored log has (a transfer's: three). */
export function storedTopicCount(log: StoredLog): number {
  return isTransferRow(log) ? 3 : log.topics.length;
}

/** A stored log's topic `i` (`i` below its count), a transfer's made as asked: `transferLog(t).topics[i]`. */
export function storedTopic(log: StoredLog, i: number): string {
  if (!isTransferRow(log)) return log.topics[i]!;
  return i === 0 ? TRANSFER_TOPIC : addressTopic(i === 1 ? log.fromAddress : log.toAddress);
}
