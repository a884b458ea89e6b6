import { hexToBytes } from '@noble/hashes/utils.js';
import { keccak256 } from './keccak.ts';

/** keccak256("Transfer(address,address,uint256)"): topic 0 of every ERC-20 (and ERC-721) Transfer log. */
export const TRANSFER_TOPIC = '0xddf252ad1be2c89b69c2b068fc378daa952ba7f163c4a11628f55a4df523b3ef';

/** A transfer as the bloom filter of its block must hold it: the contract's address, and the from and to topics. */
export interface BloomTransfer {
  contractAddress: string;
  fromAddress: string;
  toAddress: string;
}

/**
 * The three bits (of the 2048) that an item sets in a logs bloom (yellow paper, §4.4.3): the low 11 bits of
 * the first three byte pairs of keccak256(item), each as byte index × 8 + bit, counted from the bloom's end.
 */
export function bloomBits(item: Uint8Array): [number, number, number] {
  const h = keccak256(item);
  const bit = (i: number) => ((h[i]! << 8) | h[i + 1]!) & 2047;
  return [bit(0), bit(2), bit(4)];
}

/**
 * A header's `logsBloom` (0x and 512 hex digits) as its 256 bytes, in memory of their own: a bloom is kept as
 * long as its block is remembered, and a Buffer from Node's shared pool would keep the pool's whole 8 KB slab.
 */
export function bloomBytes(logsBloom: string): Uint8Array {
  const bytes = Buffer.allocUnsafeSlow(256);
  const written = bytes.write(logsBloom.slice(2), 'hex');
  return written === 256 ? bytes : bytes.subarray(0, written);
}

/**
 * `bloomBytes` for blooms kept a while (a source's remembered blocks): each is a view of a slab of `perSlab` blooms,
 * not a buffer of its own. Measured on 12,288 blooms: about 3 MB less resident memory (an ArrayBuffer, with its
 * bookkeeping, a bloom, against one a slab). A slab stays as long as any of its blooms is kept, so blooms should be
 * let go in about the order they were made (as a map of remembered blocks drops its oldest).
 *
 * @example const bloomOf = createBloomSlabs(); bloomOf(header.logsBloom) // → <Buffer …> (256 bytes)
 */
export function createBloomSlabs(perSlab = 256): (logsBloom: string) => Uint8Array {
  let slab = Buffer.allocUnsafeSlow(0);
  let used = perSlab;
  return (logsBloom) => {
    if (used === perSlab) {
      slab = Buffer.allocUnsafeSlow(256 * perSlab);
      used = 0;
    }
    const bytes = slab.subarray(used * 256, used * 256 + 256);
    // not 512 hex digits: a buffer of its own, as bloomBytes makes it (this place is written over by the next)
    if (logsBloom.length !== 514 || bytes.write(logsBloom.slice(2), 'hex') !== 256) return bloomBytes(logsBloom);
    used++;
    return bytes;
  };
}

/** Whether a bloom (256 bytes) has all three bits of an item set: "may contain", never a false "does not". */
export function bloomHasBits(bloom: Uint8Array, bits: readonly number[]): boolean {
  for (const b of bits) {
    if ((bloom[255 - (b >> 3)]! & (1 << (b & 7))) === 0) return false;
  }
  return true;
}

/** An address as its 32-byte topic: 12 zero bytes, then the 20 address bytes. */
function addressTopic(address: string): Uint8Array {
  const topic = new Uint8Array(32);
  topic.set(hexToBytes(address.slice(2)), 12);
  return topic;
}

/**
 * The bloom bits of an address (a contract: the address itself) or of an address topic (from, to), remembered,
 * as one number (`packBloomBits`).
 */
export type BloomBitsCache = (kind: 'address' | 'topic', hex: string) => number;

/** An item's three bloom bits (each below 2048) as one number: the first, plus the second × 2^11, plus the third × 2^22. */
export function packBloomBits(bits: readonly [number, number, number]): number {
  return bits[0] + bits[1] * 2048 + bits[2] * 4_194_304;
}

/** The three bits of `packBloomBits`. */
export function unpackBloomBits(packed: number): [number, number, number] {
  return [packed % 2048, Math.floor(packed / 2048) % 2048, Math.floor(packed / 4_194_304)];
}

/** `bloomHasBits` for bits packed by `packBloomBits`. */
export function bloomHasPackedBits(bloom: Uint8Array, packed: number): boolean {
  const a = packed % 2048;
  const b = Math.floor(packed / 2048) % 2048;
  const c = Math.floor(packed / 4_194_304);
  return (bloom[255 - (a >> 3)]! & (1 << (a & 7))) !== 0 && (bloom[255 - (b >> 3)]! & (1 << (b & 7))) !== 0 && (bloom[255 - (c >> 3)]! & (1 << (c & 7))) !== 0;
}

/**
 * Remembers the bloom bits of items: the contract and the Transfer topic are the same for every row of a job, and
 * busy addresses recur, so each distinct item is hashed once while it is remembered. Addresses and topics are kept
 * apart, each in a table of up to `size` items held in typed arrays: an item's 20 bytes and its packed bits, in sets
 * of two places (the one used least lately is replaced). Nothing is allocated per look-up or per item remembered,
 * and the table is no work for the garbage collector: kept as objects (a key string, an array of bits, a map entry,
 * reckoned at about 200 bytes of heap an item), whole-chain node loads peaked at 208.5 MB against 196 MB (medians;
 * bench/NOTES.md, "Node-source figures", "The bloom cache in typed arrays"). Text that is not `0x` and 40 hex digits is
 * hashed each time.
 */
export function createBloomBitsCache(size = 65_536): BloomBitsCache {
  // an item is written into this cache's own scratch bytes and hashed at once: 12 zero bytes never written, then the
  // address; the address alone is the last 20. Measured on 400,000 distinct addresses, a topic's bits took 1.4–1.5 µs
  // this way and 2.7–3.3 µs with two fresh arrays per item (hexToBytes, then the 32-byte topic).
  const item = Buffer.alloc(32);
  const address = item.subarray(12);
  const addresses = addressTable(
    size,
    item,
    () => packBloomBits(bloomBits(address)),
    (hex) => packBloomBits(bloomBits(hexToBytes(hex.slice(2)))),
  );
  const topics = addressTable(
    size,
    item,
    () => packBloomBits(bloomBits(item)),
    (hex) => packBloomBits(bloomBits(addressTopic(hex))),
  );
  return (kind, hex) => (kind === 'address' ? addresses(hex) : topics(hex));
}

/** 32-bit words of an address's 20 bytes. */
const WORDS = 5;

/**
 * A table of `size` addresses (rounded up to an even number, at least 2) and a number each: `fromItem()` computes it
 * from the address written into `item`'s last 20 bytes; text that is not `0x` and 40 hex digits goes to `other`
 * (which refuses what is not hex) and is not remembered.
 */
function addressTable(size: number, item: Buffer, fromItem: () => number, other: (hex: string) => number): (hex: string) => number {
  const sets = Math.max(1, Math.ceil(size / 2));
  const keys = new Int32Array(sets * 2 * WORDS);
  // the packed bits + 1: 0 is an empty place
  const values = new Float64Array(sets * 2);
  // per set, the place used last
  const last = new Uint8Array(sets);
  const words = new Int32Array(WORDS);
  return (hex) => {
    if (!readAddress(hex, words)) return other(hex);
    const set = ((words[0]! ^ words[4]!) >>> 0) % sets;
    for (let way = 0; way < 2; way++) {
      const place = set * 2 + way;
      if (values[place] !== 0 && sameKey(keys, place * WORDS, words)) {
        last[set] = way;
        return values[place]! - 1;
      }
    }
    for (let w = 0; w < WORDS; w++) item.writeInt32BE(words[w]!, 12 + w * 4);
    const value = fromItem();
    const way = last[set] === 0 && values[set * 2] !== 0 ? 1 : 0;
    const place = set * 2 + way;
    keys.set(words, place * WORDS);
    values[place] = value + 1;
    last[set] = way;
    return value;
  };
}

/** Each UTF-16 code unit's value as a hex digit (either case), else -1. */
const HEX_DIGIT = (() => {
  const digits = new Int8Array(65_536).fill(-1);
  for (let i = 0; i < 16; i++) {
    digits['0123456789abcdef'.charCodeAt(i)] = i;
    digits['0123456789ABCDEF'.charCodeAt(i)] = i;
  }
  return digits;
})();

/**
 * Reads `0x` and 40 hex digits (either case) into five 32-bit words; false for any other text. A digit is read from
 * a table: 110–115 ns an address, against 220–230 ns with comparisons (400,000 addresses, 5 rounds).
 */
function readAddress(hex: string, words: Int32Array): boolean {
  if (hex.length !== 42 || hex.charCodeAt(0) !== 48 || (hex.charCodeAt(1) | 32) !== 120) return false;
  // any character not a digit makes it negative
  let bad = 0;
  for (let w = 0; w < WORDS; w++) {
    let word = 0;
    for (let i = 2 + w * 8, end = i + 8; i < end; i++) {
      const digit = HEX_DIGIT[hex.charCodeAt(i)]!;
      bad |= digit;
      word = (word << 4) | (digit & 15);
    }
    words[w] = word;
  }
  return bad >= 0;
}

function sameKey(keys: Int32Array, at: number, words: Int32Array): boolean {
  for (let w = 0; w < WORDS; w++) if (keys[at + w] !== words[w]) return false;
  return true;
}

/**
 * Which part of a transfer a block's bloom rules out, or undefined when the bloom may hold it all. With
 * `contractHeld`, the contract address and the Transfer topic are known to be in this bloom (an earlier row of
 * the same contract and block passed): only the from and to topics are tested.
 */
export function missingFromBloom(
  bloom: Uint8Array,
  transfer: BloomTransfer,
  bits: BloomBitsCache,
  contractHeld = false,
): 'contract address' | 'Transfer topic' | 'from topic' | 'to topic' | undefined {
  if (!contractHeld) {
    if (!bloomHasPackedBits(bloom, bits('address', transfer.contractAddress))) return 'contract address';
    if (!bloomHasBits(bloom, TRANSFER_BITS)) return 'Transfer topic';
  }
  if (!bloomHasPackedBits(bloom, bits('topic', transfer.fromAddress))) return 'from topic';
  if (!bloomHasPackedBits(bloom, bits('topic', transfer.toAddress))) return 'to topic';
  return undefined;
}

const TRANSFER_BITS = bloomBits(hexToBytes(TRANSFER_TOPIC.slice(2)));
