/**
 * True logs blooms for the reference server's chains (yellow paper, §4.4.3): every log sets the three bits
 * of its address and the three bits of each of its topics. An ERC-20 transfer's log is its contract, with
 * topics [Transfer, from, to]; a foreign log (foreign-logs.ts) brings its own address and topics.
 *
 * Blooms are 256-byte arrays that the caller owns and ORs logs into, so a bloom may start from other bits
 * (random ones for a synthetic block's other logs, or the bloom a block had before a reorg).
 */
import { hexToBytes } from '@noble/hashes/utils.js';
import { type BloomTransfer, bloomBits, TRANSFER_TOPIC } from '../eth/logs-bloom.ts';
import type { LogBody } from './chain-log.ts';

const BLOOM_BYTES = 256;
const BLOOM_HEX = /^0x[0-9a-fA-F]{512}$/;
const ADDRESS_TOPIC_PREFIX = '00'.repeat(12);

/** Sets the bits of logs into blooms; each distinct address and topic is hashed once per writer. */
export interface BloomWriter {
  /** ORs an ERC-20 transfer's log into `bloom`: the contract, the Transfer topic, from and to as 32-byte topics. */
  addTransfer(bloom: Uint8Array, transfer: BloomTransfer): void;
  /** ORs a log into `bloom`: its address and every topic. */
  addLog(bloom: Uint8Array, log: Pick<LogBody, 'address' | 'topics'>): void;
}

/**
 * A writer with its own cache of bits: contracts, the Transfer topic and the busy addresses of a chain recur,
 * so generating a chain costs about one keccak per distinct item rather than four per transfer. The cache
 * lives as long as the writer: make one per chain (or per reorg), not one per server.
 *
 * @example
 * const bloom = emptyBloom();
 * createBloomWriter().addTransfer(bloom, { contractAddress, fromAddress, toAddress });
 * bloomHasBits(bloom, bloomBits(hexToBytes(contractAddress.slice(2)))); // → true
 */
export function createBloomWriter(): BloomWriter {
  /** Bits of an item by its `0x` hex: an address (20 bytes) or a topic (32 bytes). */
  const items = new Map<string, readonly number[]>();
  /** Bits of an address's 32-byte topic, by the address. */
  const addressTopics = new Map<string, readonly number[]>();

  const itemBits = (hex: string): readonly number[] => {
    let bits = items.get(hex);
    if (bits === undefined) {
      bits = hexItemBits(hex);
      items.set(hex, bits);
    }
    return bits;
  };
  const topicBits = (address: string): readonly number[] => {
    let bits = addressTopics.get(address);
    if (bits === undefined) {
      bits = addressTopicBits(address);
      addressTopics.set(address, bits);
    }
    return bits;
  };

  return {
    addTransfer(bloom, transfer) {
      setBloomBits(bloom, itemBits(transfer.contractAddress));
      setBloomBits(bloom, TRANSFER_TOPIC_BITS);
      setBloomBits(bloom, topicBits(transfer.fromAddress));
      setBloomBits(bloom, topicBits(transfer.toAddress));
    },
    addLog(bloom, log) {
      setBloomBits(bloom, itemBits(log.address));
      for (const topic of log.topics) setBloomBits(bloom, itemBits(topic));
    },
  };
}

/** The bloom bits of an item given as `0x` hex: an address (20 bytes) or a topic (32 bytes). */
export function hexItemBits(hex: string): readonly number[] {
  return bloomBits(hexToBytes(hex.slice(2)));
}

/** The bloom bits of an address as an indexed topic (12 zero bytes, then the address), as `from` and `to` are. */
export function addressTopicBits(address: string): readonly number[] {
  return bloomBits(hexToBytes(ADDRESS_TOPIC_PREFIX + address.slice(2)));
}

/** The bloom bits of the Transfer topic, which every transfer log has. */
export const TRANSFER_TOPIC_BITS: readonly number[] = hexItemBits(TRANSFER_TOPIC);

/** Sets bits into a bloom as `bloomHasBits` reads them: bit b is bit (b mod 8) of byte 255 − ⌊b / 8⌋. */
export function setBloomBits(bloom: Uint8Array, bits: readonly number[]): void {
  for (const b of bits) bloom[BLOOM_BYTES - 1 - (b >> 3)]! |= 1 << (b & 7);
}

/** A bloom with no bit set. */
export function emptyBloom(): Uint8Array {
  return new Uint8Array(BLOOM_BYTES);
}

/** The bloom of a header field, as a new array: undefined unless it is `0x` and 512 hex digits. */
export function parseBloom(hex: string | null | undefined): Uint8Array | undefined {
  if (typeof hex !== 'string' || !BLOOM_HEX.test(hex)) return undefined;
  return Uint8Array.from(Buffer.from(hex.slice(2), 'hex'));
}

/** A bloom as a header field: `0x` and 512 lower-case hex digits. */
export function bloomHex(bloom: Uint8Array): string {
  return `0x${Buffer.from(bloom.buffer, bloom.byteOffset, bloom.byteLength).toString('hex')}`;
}
