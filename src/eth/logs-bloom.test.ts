import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { keccak_256 } from '@noble/hashes/sha3.js';
import { bytesToHex, hexToBytes, utf8ToBytes } from '@noble/hashes/utils.js';
import { describe, expect, it } from 'vitest';
import { FIXTURE_DIR } from '../../test/helpers/fixtures.ts';
import {
  bloomBits,
  bloomBytes,
  bloomHasBits,
  bloomHasPackedBits,
  createBloomBitsCache,
  createBloomSlabs,
  missingFromBloom,
  packBloomBits,
  TRANSFER_TOPIC,
  unpackBloomBits,
} from './logs-bloom.ts';

const lines = (file: string) =>
  readFileSync(join(FIXTURE_DIR, file), 'utf8')
    .split('\n')
    .filter(Boolean)
    .map((l) => JSON.parse(l) as Record<string, unknown>);

describe('logs bloom', () => {
  it('knows the Transfer topic as keccak256 of the event signature', () => {
    expect(`0x${bytesToHex(keccak_256(utf8ToBytes('Transfer(address,address,uint256)')))}`).toBe(TRANSFER_TOPIC);
  });

  it('sets three bits per item, each below 2048', () => {
    const bits = bloomBits(utf8ToBytes('any item'));
    expect(bits).toHaveLength(3);
    for (const bit of bits) expect(bit >= 0 && bit < 2048).toBe(true);
  });

  it('finds every transfer of the real mainnet fixture in its block’s bloom', () => {
    const blooms = new Map(lines('headers.jsonl').map((h) => [h.hash as string, hexToBytes((h.logsBloom as string).slice(2))]));
    const transfers = lines('transfers.jsonl');
    const bits = createBloomBitsCache();
    let checked = 0;
    for (const t of transfers) {
      const bloom = blooms.get(t.blockHash as string);
      if (!bloom) continue;
      expect(missingFromBloom(bloom, t as never, bits), `${t.transactionHash as string} log ${t.logIndex as number}`).toBeUndefined();
      checked++;
    }
    expect(checked).toBe(transfers.length);
  });

  it('remembers bits past its size as hashing gives them, for addresses and topics apart, and for addresses that share a slot', () => {
    const bits = createBloomBitsCache(4);
    const addresses = Array.from({ length: 50 }, (_, i) => `0x${i.toString(16).padStart(40, '0')}`);
    const topic = (a: string) => {
      const t = new Uint8Array(32);
      t.set(hexToBytes(a.slice(2)), 12);
      return t;
    };
    // all fifty share their first seven hex digits; three passes over ten times the size, then the same few again
    // and again (kept): every answer is the hash's
    for (const order of [addresses, addresses, [...addresses].reverse(), Array.from({ length: 40 }, (_, i) => addresses[i % 2]!)]) {
      for (const a of order) {
        expect(unpackBloomBits(bits('address', a))).toEqual(bloomBits(hexToBytes(a.slice(2))));
        expect(unpackBloomBits(bits('topic', a))).toEqual(bloomBits(topic(a)));
      }
    }
  });

  it('packs three bits into one number and tests a bloom by it as by the bits', () => {
    for (const bits of [
      [0, 0, 0],
      [2047, 2047, 2047],
      [1, 2046, 1024],
      [2047, 0, 1],
    ] as [number, number, number][]) {
      expect(unpackBloomBits(packBloomBits(bits))).toEqual(bits);
      const bloom = new Uint8Array(256);
      for (const b of bits.slice(0, 2)) bloom[255 - (b >> 3)]! |= 1 << (b & 7);
      // two of the three bits set: both tests say no, unless the third is one of the two
      expect(bloomHasPackedBits(bloom, packBloomBits(bits))).toBe(bloomHasBits(bloom, bits));
      bloom[255 - (bits[2] >> 3)]! |= 1 << (bits[2] & 7);
      expect(bloomHasPackedBits(bloom, packBloomBits(bits))).toBe(true);
    }
  });

  it('cuts blooms from slabs, each kept intact while later ones are made, and a damaged one as bloomBytes reads it', () => {
    const bloomOf = createBloomSlabs(3);
    const hexes = Array.from({ length: 10 }, (_, i) => `0x${bytesToHex(keccak_256(utf8ToBytes(String(i)))).repeat(8)}`);
    const blooms = hexes.map((h, i) => (i === 4 ? bloomOf(`${h.slice(0, 100)}zz`) : bloomOf(h)));
    for (const [i, bloom] of blooms.entries()) {
      expect(Buffer.from(bloom).equals(Buffer.from(bloomBytes(i === 4 ? `${hexes[i]!.slice(0, 100)}zz` : hexes[i]!))), String(i)).toBe(true);
    }
    expect(blooms[4]).toHaveLength(49);
    expect(blooms[0]!.buffer).toBe(blooms[2]!.buffer);
    expect(blooms[3]!.buffer).not.toBe(blooms[2]!.buffer);
  });

  it('keeps the two items of a set apart and replaces the one used least lately', () => {
    const bits = createBloomBitsCache(2);
    const [a, b, c] = ['0a', '0b', '0c'].map((d) => `0x${d.repeat(20)}`) as [string, string, string];
    const hashed = (x: string) => bloomBits(hexToBytes(x.slice(2)));
    for (const x of [a, b, a, b, c, a, c, c, b, a]) expect(unpackBloomBits(bits('address', x)), x).toEqual(hashed(x));
  });

  it('gives an address written in capitals the bits of its lower-case bytes, and refuses text that is not 40 hex digits rather than hash part of it', () => {
    const bits = createBloomBitsCache();
    const lower = '0xa0b86991c6218b36c1d19d4a2e9eb0ce3606eb48';
    const upper = `0x${lower.slice(2).toUpperCase()}`;
    expect(unpackBloomBits(bits('address', upper))).toEqual(bloomBits(hexToBytes(lower.slice(2))));
    expect(bits('topic', upper)).toBe(bits('topic', lower));
    // a bad digit at the end: Buffer.write alone would stop there and hash 19 bytes and a stale one
    expect(() => bits('topic', `${lower.slice(0, 40)}zz`)).toThrow();
    expect(() => bits('address', `${lower.slice(0, 40)}zz`)).toThrow();
    // a whole hash as an address: its 32 bytes are the item, as before
    const hash = `0x${'ab'.repeat(32)}`;
    expect(unpackBloomBits(bits('address', hash))).toEqual(bloomBits(hexToBytes(hash.slice(2))));
  });

  it('rules out a transfer moved to a block whose bloom lacks it, naming what is missing', () => {
    const empty = new Uint8Array(256);
    const t = { contractAddress: `0x${'a'.repeat(40)}`, fromAddress: `0x${'b'.repeat(40)}`, toAddress: `0x${'c'.repeat(40)}` };
    const bits = createBloomBitsCache();
    expect(missingFromBloom(empty, t, bits)).toBe('contract address');
    const full = new Uint8Array(256).fill(255);
    expect(missingFromBloom(full, t, bits)).toBeUndefined();
    // a bloom with the contract and the Transfer topic but not the from address
    const partial = new Uint8Array(256);
    for (const item of [hexToBytes(t.contractAddress.slice(2)), hexToBytes(TRANSFER_TOPIC.slice(2))]) {
      for (const b of bloomBits(item)) partial[255 - (b >> 3)] = (partial[255 - (b >> 3)] ?? 0) | (1 << (b & 7));
    }
    expect(bloomHasBits(partial, bloomBits(hexToBytes(t.contractAddress.slice(2))))).toBe(true);
    expect(missingFromBloom(partial, t, bits)).toBe('from topic');
  });
});
