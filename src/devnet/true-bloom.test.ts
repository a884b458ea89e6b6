import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { hexToBytes } from '@noble/hashes/utils.js';
import { describe, expect, it } from 'vitest';
import { FIXTURE_DIR } from '../../test/helpers/fixtures.ts';
import type { Dataset, TransferRecord } from '../dataset/types.ts';
import type { HeaderJson } from '../eth/header-fields.ts';
import { verifyHeaderHash } from '../eth/header-hash.ts';
import { bloomBits, bloomHasBits, createBloomBitsCache, missingFromBloom } from '../eth/logs-bloom.ts';
import { addressTopic, type ChainLog, TRANSFER_TOPIC } from './chain-log.ts';
import { type ChainStore, createChainStore } from './chain-store.ts';
import { syntheticForeignLogs } from './foreign-logs.ts';
import { reorgDataset } from './reorg.ts';
import { generateSyntheticDataset, SYNTHETIC_DEFAULTS, type SyntheticOptions } from './synthetic.ts';
import { bloomHex, createBloomWriter, emptyBloom, parseBloom } from './true-bloom.ts';

const readJsonl = <T>(name: string): T[] =>
  readFileSync(join(FIXTURE_DIR, name), 'utf8')
    .split('\n')
    .filter(Boolean)
    .map((line) => JSON.parse(line) as T);

const itemBits = (hex: string) => bloomBits(hexToBytes(hex.slice(2)));
const setBitCount = (bloom: Uint8Array) => bloom.reduce((sum, byte) => sum + byte.toString(2).replaceAll('0', '').length, 0);
const a = `0x${'a1'.repeat(20)}`;
const b = `0x${'b2'.repeat(20)}`;
const c = `0x${'c3'.repeat(20)}`;

describe('bloom writer', () => {
  it('sets the bits of a log’s address and of each topic, as the exporter reads them, and no other', () => {
    const bloom = emptyBloom();
    const tokenId = `0x${'00'.repeat(31)}07`;
    createBloomWriter().addLog(bloom, { address: a, topics: [TRANSFER_TOPIC, addressTopic(b), addressTopic(c), tokenId] });
    const items = [a, TRANSFER_TOPIC, addressTopic(b), addressTopic(c), tokenId].map(itemBits);
    for (const bits of items) expect(bloomHasBits(bloom, bits)).toBe(true);
    expect(setBitCount(bloom)).toBe(new Set(items.flat()).size);
    expect(bloomHasBits(bloom, itemBits(`0x${'d4'.repeat(20)}`))).toBe(false);
  });

  it('sets for a transfer what its log sets: contract, Transfer topic, from and to as 32-byte topics', () => {
    const writer = createBloomWriter();
    const asTransfer = emptyBloom();
    writer.addTransfer(asTransfer, { contractAddress: a, fromAddress: b, toAddress: c });
    const asLog = emptyBloom();
    writer.addLog(asLog, { address: a, topics: [TRANSFER_TOPIC, addressTopic(b), addressTopic(c)] });
    expect(asTransfer).toEqual(asLog);
    expect(missingFromBloom(asTransfer, { contractAddress: a, fromAddress: b, toAddress: c }, createBloomBitsCache())).toBeUndefined();
    expect(missingFromBloom(asTransfer, { contractAddress: a, fromAddress: b, toAddress: `0x${'d4'.repeat(20)}` }, createBloomBitsCache())).toBe('to topic');
  });

  it('ORs into the bloom it is given, keeping the bits already there', () => {
    const bloom = emptyBloom();
    bloom[7] = 0b1000_0001;
    createBloomWriter().addTransfer(bloom, { contractAddress: a, fromAddress: b, toAddress: c });
    expect(bloom[7]! & 0b1000_0001).toBe(0b1000_0001);
  });

  it('builds from real mainnet transfers only bits that the real blocks’ blooms hold', () => {
    const headers = readJsonl<HeaderJson>('headers.jsonl');
    const transfers = readJsonl<TransferRecord>('transfers.jsonl');
    const writer = createBloomWriter();
    let blocks = 0;
    for (const h of headers) {
      const own = transfers.filter((t) => t.blockHash === h.hash);
      if (own.length === 0) continue;
      const bloom = emptyBloom();
      for (const t of own) writer.addTransfer(bloom, t);
      const real = parseBloom(h.logsBloom)!;
      expect(
        bloom.every((byte, i) => (byte & ~real[i]!) === 0),
        `block ${h.number}`,
      ).toBe(true);
      blocks++;
    }
    expect(blocks).toBeGreaterThan(5);
  });

  it('reads and writes a header’s bloom field, refusing anything but 256 bytes of hex', () => {
    const hex = `0x${'0f'.repeat(255)}A0`;
    expect(bloomHex(parseBloom(hex)!)).toBe(hex.toLowerCase());
    for (const bad of [null, undefined, '0x', `0x${'00'.repeat(255)}`, `0x${'00'.repeat(257)}`, `0x${'zz'.repeat(256)}`]) expect(parseBloom(bad)).toBeUndefined();
    const source = `0x${'11'.repeat(256)}`;
    const parsed = parseBloom(source)!;
    parsed[0] = 0;
    expect(parseBloom(source)![0]).toBe(0x11);
  });
});

/**
 * Every log the chain store serves in `first`…`last` that is not in its block's bloom, and every header that
 * does not hash (but those of `hashed`, checked before) or link.
 */
function bloomProblems(chain: ChainStore, first: number, last: number, hashed = new Set<string>()): { problems: string[]; transfers: number; foreign: number } {
  const problems: string[] = [];
  const bits = createBloomBitsCache();
  const blooms = new Map<string, Uint8Array>();
  const bloomOf = (h: HeaderJson) => {
    let bloom = blooms.get(h.hash);
    if (!bloom) {
      bloom = hexToBytes(h.logsBloom!.slice(2));
      blooms.set(h.hash, bloom);
    }
    return bloom;
  };
  let transfers = 0;
  let foreign = 0;
  for (const log of chain.logs(first, last)) {
    const header = chain.headerByNumber(log.blockNumber)!;
    const where = `block ${log.blockNumber} log ${log.logIndex}`;
    if (log.blockHash !== header.hash) problems.push(`${where}: block hash is not the canonical one`);
    const bloom = bloomOf(header);
    if (isTransfer(log)) {
      const missing = missingFromBloom(bloom, { contractAddress: log.address, fromAddress: topicAddress(log.topics[1]!), toAddress: topicAddress(log.topics[2]!) }, bits);
      if (missing) problems.push(`${where}: ${missing} not in the bloom`);
      transfers++;
    } else {
      for (const item of [log.address, ...log.topics]) if (!bloomHasBits(bloom, itemBits(item))) problems.push(`${where}: ${item} not in the bloom`);
      foreign++;
    }
  }
  const headers = chain.truth().headers;
  headers.forEach((h, i) => {
    if (!hashed.has(h.hash) && !verifyHeaderHash(h).ok) problems.push(`header ${h.number} does not hash to its hash`);
    hashed.add(h.hash);
    if (i > 0 && h.parentHash !== headers[i - 1]!.hash) problems.push(`header ${h.number} does not link to its parent`);
  });
  return { problems, transfers, foreign };
}

/** An ERC-20 transfer's log as the store serves it: three topics and one word of data (foreign logs have other shapes). */
const isTransfer = (log: ChainLog) => log.topics.length === 3 && log.data.length === 2 + 64;
const topicAddress = (topic: string) => `0x${topic.slice(26)}`;

describe('the synthetic chain’s blooms hold every log the reference server serves', () => {
  const range = (o: SyntheticOptions) => [o.startBlock, o.startBlock + o.blocks - 1] as const;
  const serve = (o: SyntheticOptions) => createChainStore(generateSyntheticDataset(o), syntheticForeignLogs(o));

  it('in the default chain: every transfer and every foreign log, and the headers hash and link', () => {
    const chain = serve(SYNTHETIC_DEFAULTS);
    const { problems, transfers, foreign } = bloomProblems(chain, ...range(SYNTHETIC_DEFAULTS));
    expect(problems).toEqual([]);
    expect(transfers).toBe(SYNTHETIC_DEFAULTS.transfers);
    expect(foreign).toBe(syntheticForeignLogs(SYNTHETIC_DEFAULTS).length);
  });

  it('in the realistic amounts profile, on another seed and from block 0', () => {
    const options = { ...SYNTHETIC_DEFAULTS, seed: 5, blocks: 400, transfers: 3000, startBlock: 0 };
    const realistic = createChainStore(generateSyntheticDataset(options, { amounts: 'realistic' }), syntheticForeignLogs(options));
    expect(bloomProblems(realistic, ...range(options)).problems).toEqual([]);
  });

  it('after reorgs of the default chain: shallow, deep, of the whole chain, and one on top of another', () => {
    const chain = serve(SYNTHETIC_DEFAULTS);
    const hashed = new Set<string>();
    expect(bloomProblems(chain, ...range(SYNTHETIC_DEFAULTS), hashed).problems).toEqual([]);
    for (const [depth, seed] of [
      [12, 1],
      [600, 2],
      [SYNTHETIC_DEFAULTS.blocks, 3],
      [5, 4],
    ] as const) {
      const { dataset, orphaned } = reorgDataset(chain.truth(), depth, seed);
      chain.replace(dataset, orphaned);
      const { problems, foreign } = bloomProblems(chain, ...range(SYNTHETIC_DEFAULTS), hashed);
      expect(problems, `after a reorg of depth ${depth}`).toEqual([]);
      expect(foreign).toBe(syntheticForeignLogs(SYNTHETIC_DEFAULTS).length);
    }
  });

  it('sets few bits beyond the logs: a quiet block’s bloom is mostly empty', () => {
    const options = { ...SYNTHETIC_DEFAULTS, blocks: 300, transfers: 1000 };
    const dataset: Dataset = generateSyntheticDataset(options);
    const counts = dataset.headers.map((h) => setBitCount(parseBloom(h.logsBloom)!));
    expect(Math.max(...counts)).toBeLessThan(2048);
    expect(counts.filter((n) => n < 200).length).toBeGreaterThan(options.blocks / 2);
  });
});
