import type { TransferRecord } from '../dataset/types.ts';
import { toQuantity } from '../eth/hex.ts';
import { isDigitsNumber, known, writeAscii, writeDigits, writeKnown } from '../common/ascii-bytes.ts';
import { type ChainLog, chainLogOf, isTransferRow, type RpcLog, rpcLog, type StoredLog, TRANSFER_TOPIC } from './chain-log.ts';

// A log's text between its fields, in geth's key order (RpcLog's)
const KEYS = [
  '{"address":"',
  '","topics":[',
  '],"data":"',
  '","blockNumber":"',
  '","blockHash":"',
  '","blockTimestamp":"',
  '","transactionHash":"',
  '","transactionIndex":"',
  '","logIndex":"',
  '","removed":false}',
].map(known);
const KEYS_LENGTH = KEYS.reduce((n, k) => n + k.length, 0);
const TOPICS_BETWEEN = known('","');
/** A transfer's topics up to its from topic: `"` + the Transfer topic + `","`. */
const TRANSFER_TOPIC_FIRST = known(`"${TRANSFER_TOPIC}","`);

/** An address topic's text before the address's 40 digits: `0x` and 12 zero bytes. */
const TOPIC_PAD = known(`0x${'0'.repeat(24)}`);

/** The most bytes `writeQuantity` writes for a whole number below 2^53: `0x` and 14 digits. */
const QUANTITY_BOUND = 16;

/**
 * The result of an `eth_getLogs` answer: the stored logs it holds, and their text as geth writes them. JSON.stringify
 * of it is that of the logs as `RpcLog`s (`toJSON`); the server writes the same bytes field by field into the answer's
 * memory (`writeJson`), making no log object and no text per log (a transfer's value still goes through a BigInt to its
 * hex digits). Answering 1,000,000 logs made as `RpcLog`s and then as text took about a third of the server's CPU in
 * garbage collection (bench/NOTES.md, "A twenty-third day").
 */
export class LogsAnswer {
  constructor(readonly logs: readonly StoredLog[]) {
    Object.freeze(this);
  }

  get length(): number {
    return this.logs.length;
  }

  /** The logs as the answer gives them: what JSON.stringify writes, and what the bad-data orders damage. */
  toJSON(): RpcLog[] {
    return this.logs.map((log) => rpcLog(chainLogOf(log)));
  }

  /** At least the bytes `writeJson` writes (a quantity is counted at its longest). */
  jsonBound(): number {
    let size = 2 + Math.max(0, this.logs.length - 1);
    for (const log of this.logs) size += logBound(log);
    return size;
  }

  /**
   * Writes `JSON.stringify(this)` into `bytes` from `at` and answers where it ends; `bytes` must hold `jsonBound()`
   * bytes from `at`. Every text field is written as stored: the chain store admits only text that needs no escaping
   * (chain-store.ts).
   */
  writeJson(bytes: Buffer, at: number): number {
    bytes[at++] = 0x5b; // [
    for (let i = 0; i < this.logs.length; i++) {
      if (i) bytes[at++] = 0x2c; // ,
      const log = this.logs[i]!;
      at = isTransferRow(log) ? writeTransferLog(log, bytes, at) : writeChainLog(log, bytes, at);
    }
    bytes[at++] = 0x5d; // ]
    return at;
  }
}

function logBound(log: StoredLog): number {
  let size = KEYS_LENGTH + quantityBound(log.blockNumber) + quantityBound(log.transactionIndex) + quantityBound(log.logIndex);
  if (isTransferRow(log)) {
    // three topics, quoted and comma-separated; the data: `0x` and the value's 32 bytes (at least 64 digits, and no
    // more than its text has); the time a whole number of seconds below 2^53 (Date.parse), else it throws when written
    size += log.contractAddress.length + 3 * 2 + 2 + TRANSFER_TOPIC.length + addressTopicLength(log.fromAddress) + addressTopicLength(log.toAddress);
    size += 2 + Math.max(64, log.value.length) + log.blockHash.length + log.transactionHash.length + QUANTITY_BOUND;
    return size;
  }
  size += log.address.length + log.data.length + log.blockHash.length + log.transactionHash.length + quantityBound(log.blockTimestamp);
  // each topic quoted, commas between them
  for (const topic of log.topics) size += topic.length + 2;
  size += Math.max(0, log.topics.length - 1);
  return size;
}

/** The most bytes `writeQuantity` writes for `n` (its text, for a number past 2^53). */
function quantityBound(n: number): number {
  return isDigitsNumber(n) ? QUANTITY_BOUND : toQuantity(n).length;
}

/** The log of a transfer row (`rpcLog(transferLog(t))`), written from the row's fields. */
function writeTransferLog(t: TransferRecord, bytes: Buffer, at: number): number {
  at = writeKnown(KEYS[0]!, bytes, at);
  at = writeAscii(t.contractAddress, bytes, at);
  at = writeKnown(KEYS[1]!, bytes, at);
  at = writeKnown(TRANSFER_TOPIC_FIRST, bytes, at);
  at = writeAddressTopic(t.fromAddress, bytes, at);
  at = writeKnown(TOPICS_BETWEEN, bytes, at);
  at = writeAddressTopic(t.toAddress, bytes, at);
  bytes[at++] = 0x22; // "
  at = writeKnown(KEYS[2]!, bytes, at);
  bytes[at++] = 0x30; // 0
  bytes[at++] = 0x78; // x
  const value = BigInt(t.value).toString(16);
  for (let zeros = 64 - value.length; zeros > 0; zeros--) bytes[at++] = 0x30;
  at = writeAscii(value, bytes, at);
  return writePlace(t.blockNumber, t.blockHash, Date.parse(t.blockTimestamp) / 1000, t.transactionHash, t.transactionIndex, t.logIndex, bytes, at);
}

/** A log the store holds as it is (`rpcLog(log)`). */
function writeChainLog(log: ChainLog, bytes: Buffer, at: number): number {
  at = writeKnown(KEYS[0]!, bytes, at);
  at = writeAscii(log.address, bytes, at);
  at = writeKnown(KEYS[1]!, bytes, at);
  for (let i = 0; i < log.topics.length; i++) {
    if (i) bytes[at++] = 0x2c; // ,
    bytes[at++] = 0x22;
    at = writeAscii(log.topics[i]!, bytes, at);
    bytes[at++] = 0x22;
  }
  at = writeKnown(KEYS[2]!, bytes, at);
  at = writeAscii(log.data, bytes, at);
  return writePlace(log.blockNumber, log.blockHash, log.blockTimestamp, log.transactionHash, log.transactionIndex, log.logIndex, bytes, at);
}

/** The fields after `data`: where the log stands in the chain. */
function writePlace(
  blockNumber: number,
  blockHash: string,
  blockTimestamp: number,
  transactionHash: string,
  transactionIndex: number,
  logIndex: number,
  bytes: Buffer,
  at: number,
): number {
  at = writeKnown(KEYS[3]!, bytes, at);
  at = writeQuantity(blockNumber, bytes, at);
  at = writeKnown(KEYS[4]!, bytes, at);
  at = writeAscii(blockHash, bytes, at);
  at = writeKnown(KEYS[5]!, bytes, at);
  at = writeQuantity(blockTimestamp, bytes, at);
  at = writeKnown(KEYS[6]!, bytes, at);
  at = writeAscii(transactionHash, bytes, at);
  at = writeKnown(KEYS[7]!, bytes, at);
  at = writeQuantity(transactionIndex, bytes, at);
  at = writeKnown(KEYS[8]!, bytes, at);
  at = writeQuantity(logIndex, bytes, at);
  return writeKnown(KEYS[9]!, bytes, at);
}

/** `toQuantity(n)`: as digits for a whole number below 2^53, else its text (which throws where toQuantity does). */
function writeQuantity(n: number, bytes: Buffer, at: number): number {
  if (!isDigitsNumber(n)) return writeAscii(toQuantity(n), bytes, at);
  bytes[at++] = 0x30; // 0
  bytes[at++] = 0x78; // x
  return writeDigits(n, 16, bytes, at);
}

/** `addressTopic(address)`: the pad, then the address after its `0x`. */
function writeAddressTopic(address: string, bytes: Buffer, at: number): number {
  at = writeKnown(TOPIC_PAD, bytes, at);
  // the address written whole over the pad's last two digits, which its `0x` replaces, then those two put back
  if (address.length < 2) return at;
  const start = at - 2;
  at = writeAscii(address, bytes, start);
  bytes[start] = 0x30;
  bytes[start + 1] = 0x30;
  return at;
}

function addressTopicLength(address: string): number {
  return TOPIC_PAD.length + Math.max(0, address.length - 2);
}
