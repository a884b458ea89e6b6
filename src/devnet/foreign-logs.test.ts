import { describe, expect, it } from 'vitest';
import { TRANSFER_TOPIC } from './chain-log.ts';
import { createChainStore } from './chain-store.ts';
import { foreignLogBody, syntheticForeignLogs } from './foreign-logs.ts';
import { reorgDataset } from './reorg.ts';
import { generateSyntheticDataset, SYNTHETIC_DEFAULTS } from './synthetic.ts';

const options = { ...SYNTHETIC_DEFAULTS, blocks: 300, transfers: 3000 };
const shapeOf = (l: { topics: readonly string[]; data: string }) =>
  l.topics.length === 4 ? 'erc721' : l.topics.length === 3 ? (l.data.length === 2 + 128 ? 'wide-data' : 'erc20') : l.topics.length === 1 ? 'unindexed' : 'other';

describe('foreign logs of the synthetic chain', () => {
  it('are the same for the same options, and others for another seed', () => {
    expect(syntheticForeignLogs(options)).toEqual(syntheticForeignLogs({ ...options }));
    expect(syntheticForeignLogs({ ...options, seed: 2 })).not.toEqual(syntheticForeignLogs(options));
  });

  it('are one per 50 transfers, mostly ERC-721, with every shape present, none of them an ERC-20 transfer', () => {
    const logs = syntheticForeignLogs(options);
    expect(logs).toHaveLength(60);
    const shapes = logs.map(shapeOf);
    expect(new Set(shapes)).toEqual(new Set(['erc721', 'wide-data', 'unindexed']));
    expect(shapes.filter((s) => s === 'erc721').length).toBeGreaterThan(30);
    expect(logs.every((l) => l.topics[0] === TRANSFER_TOPIC)).toBe(true);
  });

  it('keep to the chain’s blocks, by block number, even on the smallest chain', () => {
    const logs = syntheticForeignLogs(options);
    expect(logs.map((l) => l.blockNumber)).toEqual(logs.map((l) => l.blockNumber).sort((a, b) => a - b));
    expect(logs.every((l) => l.blockNumber >= options.startBlock && l.blockNumber < options.startBlock + options.blocks)).toBe(true);
    const tiny = syntheticForeignLogs({ seed: 0, blocks: 1, tokens: 1, transfers: 0, startBlock: 0 });
    expect(tiny.map(shapeOf)).toEqual(['erc721', 'wide-data', 'unindexed']);
  });

  it('come from contracts of their own, never an ERC-20 contract of the dataset', () => {
    const dataset = generateSyntheticDataset(options);
    const erc20 = new Set(dataset.transfers.map((t) => t.contractAddress));
    const foreign = new Set(syntheticForeignLogs(options).map((l) => l.address));
    expect(foreign.size).toBe(4);
    expect([...foreign].filter((a) => erc20.has(a))).toEqual([]);
  });

  it('have the shapes node-source.md names: ERC-721 with the token id indexed, and two older ones', () => {
    const from = `0x${'aa'.repeat(20)}`;
    const to = `0x${'bb'.repeat(20)}`;
    const pad = (a: string) => `0x${a.slice(2).padStart(64, '0')}`;
    expect(foreignLogBody('erc721', from, from, to, 7n)).toEqual({ address: from, topics: [TRANSFER_TOPIC, pad(from), pad(to), pad('0x7')], data: '0x' });
    expect(foreignLogBody('wide-data', from, from, to, 7n).data).toHaveLength(2 + 128);
    expect(foreignLogBody('unindexed', from, from, to, 7n)).toEqual({ address: from, topics: [TRANSFER_TOPIC], data: `${pad(from)}${pad(to).slice(2)}${pad('0x7').slice(2)}` });
  });
});

describe('the chain store places foreign logs in their blocks', () => {
  const dataset = generateSyntheticDataset(options);
  const chain = createChainStore(dataset, syntheticForeignLogs(options));
  const all = chain.logs(options.startBlock, options.startBlock + options.blocks - 1);

  it('serves every transfer and every foreign log once, in chain order: block, then log index', () => {
    expect(all).toHaveLength(dataset.transfers.length + 60);
    const keys = all.map((l) => [l.blockNumber, l.logIndex] as const);
    const sorted = [...keys].sort((a, b) => a[0] - b[0] || a[1] - b[1]);
    expect(keys).toEqual(sorted);
    expect(new Set(keys.map(([b, i]) => `${b}/${i}`)).size).toBe(all.length);
  });

  it('gives a foreign log log and transaction indexes above every transfer of its block, and the block’s hash and time', () => {
    let checked = 0;
    for (const log of all.filter((l) => shapeOf(l) !== 'erc20')) {
      const header = chain.headerByNumber(log.blockNumber)!;
      expect(log.blockHash).toBe(header.hash);
      expect(log.blockTimestamp).toBe(Number(BigInt(header.timestamp!)));
      const rows = dataset.transfers.filter((t) => t.blockNumber === log.blockNumber);
      for (const t of rows) {
        expect(log.logIndex).toBeGreaterThan(t.logIndex);
        expect(log.transactionIndex).toBeGreaterThan(t.transactionIndex);
      }
      checked += rows.length;
    }
    expect(checked, 'some foreign logs share a block with transfers').toBeGreaterThan(0);
  });

  it('keeps foreign logs out of the builder API’s index', () => {
    const foreign = new Set(syntheticForeignLogs(options).map((l) => l.address));
    for (const address of foreign) expect(chain.transfersOf(address)).toEqual([]);
    expect(chain.contracts().some((c) => foreign.has(c.contractAddress))).toBe(false);
  });

  it('filters by emitter', () => {
    const nft = syntheticForeignLogs(options).find((l) => l.topics.length === 4)!.address;
    const only = chain.logs(options.startBlock, options.startBlock + options.blocks - 1, new Set([nft]));
    expect(only.length).toBeGreaterThan(0);
    expect(only.every((l) => l.address === nft)).toBe(true);
  });

  it('follows the chain through a reorg: the same blocks, their new hashes, indexes still above the transfers', () => {
    const reorged = createChainStore(dataset, syntheticForeignLogs(options));
    const { dataset: after, orphaned } = reorgDataset(reorged.truth(), 150, 3);
    reorged.replace(after, orphaned);
    const orphanedHashes = new Set(orphaned.map((h) => h.hash));
    const logs = reorged.logs(options.startBlock, options.startBlock + options.blocks - 1);
    const foreign = logs.filter((l) => shapeOf(l) !== 'erc20');
    expect(foreign).toHaveLength(60);
    expect(foreign.filter((l) => orphanedHashes.has(l.blockHash))).toEqual([]);
    for (const log of foreign) {
      expect(log.blockHash).toBe(reorged.headerByNumber(log.blockNumber)!.hash);
      for (const t of after.transfers.filter((r) => r.blockNumber === log.blockNumber)) expect(log.logIndex).toBeGreaterThan(t.logIndex);
    }
  });
});
