import { describe, expect, it } from 'vitest';
import { createBloomBitsCache, missingFromBloom } from '../eth/logs-bloom.ts';
import { parseTransfersPage } from '../source/transfers-page.ts';
import { createChainStore } from './chain-store.ts';
import { transferJson, type PageJson } from './corruption.ts';
import { createCorruptor } from './corruptor.ts';
import { generateSyntheticDataset } from './synthetic.ts';
import { moveToOtherBlock } from './wrong-block.ts';

const dataset = generateSyntheticDataset({ seed: 3, blocks: 60, tokens: 2, transfers: 400, startBlock: 500 });
const chain = createChainStore(dataset);
const contract = dataset.transfers[0]!.contractAddress;
const newestFirst = chain.transfersOf(contract);

function pageOf(from: number, size: number): PageJson {
  const rows = newestFirst.slice(from, from + size).map(transferJson);
  return { contractAddress: contract, count: rows.length, tokenTransfers: rows };
}

describe('wrong-block: a transfer moved into another block of its page', () => {
  const page = pageOf(10, 40);

  it('moves one middle row into a neighbour’s block, whose logsBloom rules it out; the page stays valid in every other way', () => {
    const before = JSON.stringify(page);
    const result = moveToOtherBlock(page, contract, chain)!;
    expect(result).toBeDefined();
    expect(JSON.stringify(page)).toBe(before);
    const at = Number(/^tokenTransfers\[(\d+)\]\.blockHash$/.exec(result.field)![1]);
    expect(at).toBeGreaterThan(0);
    expect(at).toBeLessThan(page.tokenTransfers.length - 1);
    const moved = result.page.tokenTransfers[at]!;
    const original = page.tokenTransfers[at]!;
    // the same transfer, in a block of its neighbours: that block's hash, number and time
    expect(moved.blockNumber).toBe(result.block);
    expect(moved.blockNumber).not.toBe(original.blockNumber);
    const neighbour = [result.page.tokenTransfers[at - 1]!, result.page.tokenTransfers[at + 1]!].find((r) => r.blockNumber === moved.blockNumber)!;
    expect({ blockHash: moved.blockHash, blockTimestamp: moved.blockTimestamp }).toEqual({ blockHash: neighbour.blockHash, blockTimestamp: neighbour.blockTimestamp });
    const { blockHash: _h, blockNumber: _n, blockTimestamp: _t, ...rest } = moved;
    const { blockHash: _oh, blockNumber: _on, blockTimestamp: _ot, ...originalRest } = original;
    expect(rest).toEqual(originalRest);
    // every other row as served
    for (const [i, row] of result.page.tokenTransfers.entries()) if (i !== at) expect(row).toEqual(page.tokenTransfers[i]);
    // the bloom of the block it was put in rules it out
    const bloom = Buffer.from(chain.headerByHash(moved.blockHash as string)!.logsBloom!.slice(2), 'hex');
    const transfer = { contractAddress: contract, fromAddress: moved.fromAddress as string, toAddress: moved.toAddress as string };
    expect(missingFromBloom(bloom, transfer, createBloomBitsCache())).toMatch(/^(from|to) topic$/);
    // and the builder source's page checks pass it: order, block agreement, range, count
    const rows = newestFirst.slice(10, 50);
    const parsed = parseTransfersPage(result.page, { contract, fromBlock: rows.at(-1)!.blockNumber, toBlock: rows[0]!.blockNumber });
    expect(parsed.transfers).toHaveLength(40);
    expect(parsed.transfers[at]).toMatchObject({ blockNumber: result.block, transactionHash: original.transactionHash, logIndex: original.logIndex });
  });

  it('leaves a page alone when no row can move so: one block, or too few rows', () => {
    const block = newestFirst[0]!.blockNumber;
    const oneBlock = newestFirst.filter((t) => t.blockNumber === block).map(transferJson);
    expect(moveToOtherBlock({ count: oneBlock.length, tokenTransfers: oneBlock }, contract, chain)).toBeUndefined();
    expect(moveToOtherBlock(pageOf(0, 2), contract, chain)).toBeUndefined();
    expect(moveToOtherBlock({ count: 0, tokenTransfers: [] }, contract, chain)).toBeUndefined();
  });

  it('is served once by the corruptor when armed for the page’s contract, counted, and listed', () => {
    const counted: string[] = [];
    const corruptor = createCorruptor({ chain, stats: { countError: (k) => counted.push(k) }, pageKeySecret: 'secret' });
    const params = new URLSearchParams({ contractAddress: contract });
    const body = JSON.stringify(page);
    corruptor.arm({ kind: 'wrong-block', contract: `0x${'1'.repeat(40)}`, times: 1 });
    expect(corruptor.transfers(params, body)).toBeUndefined();
    corruptor.arm({ kind: 'wrong-block', contract, times: 1 });
    const answer = corruptor.transfers(params, body);
    expect(answer?.type).toBe('json');
    const expected = moveToOtherBlock(page, contract, chain)!;
    expect(JSON.parse((answer as { text: string }).text)).toEqual(expected.page);
    expect(corruptor.transfers(params, body)).toBeUndefined();
    expect(counted).toEqual(['corrupt:wrong-block']);
    expect(corruptor.snapshot()).toEqual({ armed: null, served: [{ kind: 'wrong-block', contract, block: expected.block, field: expected.field }] });
  });
});
