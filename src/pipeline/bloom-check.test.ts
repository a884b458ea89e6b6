import { beforeAll, describe, expect, it } from 'vitest';
import { FIXTURE_DIR } from '../../test/helpers/fixtures.ts';
import { readDataset } from '../dataset/read.ts';
import type { Dataset, TransferRecord } from '../dataset/types.ts';
import { bloomBytes, createBloomBitsCache, missingFromBloom } from '../eth/logs-bloom.ts';
import { createBloomCheck } from './bloom-check.ts';
import { ChainDataError } from './errors.ts';

describe('the bloom check of stored transfers', () => {
  let dataset: Dataset;
  let blooms: Map<string, Uint8Array>;
  beforeAll(async () => {
    dataset = await readDataset(FIXTURE_DIR);
    blooms = new Map(dataset.headers.map((h) => [h.hash!, bloomBytes(h.logsBloom!)]));
  });

  /** The transfer in another block of the fixture, the first (by number) whose bloom rules it out. */
  const movedOut = (t: TransferRecord): TransferRecord | undefined => {
    const bits = createBloomBitsCache();
    const headers = [...dataset.headers].sort((a, b) => Number(BigInt(a.number!) - BigInt(b.number!)));
    const other = headers.find((h) => h.hash !== t.blockHash && missingFromBloom(blooms.get(h.hash!)!, t, bits) !== undefined);
    return other && { ...t, blockHash: other.hash!, blockNumber: Number(BigInt(other.number!)) };
  };

  it('passes every transfer of the real mainnet fixture, counting each once', () => {
    let told = 0;
    const check = createBloomCheck((n) => (told += n));
    const byBlock = new Map<string, TransferRecord[]>();
    for (const t of dataset.transfers) byBlock.set(t.blockHash, [...(byBlock.get(t.blockHash) ?? []), t]);
    for (const [hash, rows] of byBlock) check.check(blooms.get(hash)!, rows);
    expect(check.checked).toBe(dataset.transfers.length);
    expect(told).toBe(910);
  });

  it('fails a transfer moved to a block whose bloom rules it out, naming it, the block, what is ruled out and what to do', () => {
    const t = dataset.transfers[0]!;
    const moved = movedOut(t)!;
    const item = missingFromBloom(blooms.get(moved.blockHash)!, moved, createBloomBitsCache());
    const check = createBloomCheck();
    let error: unknown;
    try {
      check.check(blooms.get(moved.blockHash)!, [moved]);
    } catch (err) {
      error = err;
    }
    expect(error).toBeInstanceOf(ChainDataError);
    const e = error as ChainDataError;
    expect(e.retryable).toBe(false);
    expect(e.message).toContain(
      `transaction ${t.transactionHash}, log ${t.logIndex}, contract ${t.contractAddress}, block ${moved.blockNumber} (${moved.blockHash}): ` +
        `the block header's logsBloom rules out its ${item}`,
    );
    expect(e.message).toMatch(/attributed to the wrong block; the row is stored as the source served it/);
    expect(e.message).toContain(`\`erc20-etl backfill --contract ${t.contractAddress} --from LOW --to HIGH\``);
    expect(e.details).toMatchObject({ transactionHash: t.transactionHash, logIndex: t.logIndex, blockNumber: moved.blockNumber, blockHash: moved.blockHash, ruledOut: item });
    // checked all the same
    expect(check.checked).toBe(1);
  });

  it('names the item the bloom rules out: the contract address, or the from or to topic with its address', () => {
    const t = dataset.transfers[0]!;
    expect(() => createBloomCheck().check(new Uint8Array(256), [t])).toThrow(`rules out its contract address ${t.contractAddress}`);
    // transfers of the fixture moved into blocks that hold their contract and the Transfer topic, but not one of their addresses
    const bits = createBloomBitsCache();
    for (const [item, address] of [
      ['from topic', 'fromAddress'],
      ['to topic', 'toAddress'],
    ] as const) {
      const moved = dataset.transfers
        .flatMap((row) => dataset.headers.map((h) => ({ ...row, blockHash: h.hash!, blockNumber: Number(BigInt(h.number!)) })))
        .find((row) => missingFromBloom(blooms.get(row.blockHash)!, row, bits) === item)!;
      expect(moved, item).toBeDefined();
      expect(() => createBloomCheck().check(blooms.get(moved.blockHash)!, [moved])).toThrow(
        `contract ${moved.contractAddress}, block ${moved.blockNumber} (${moved.blockHash}): the block header's logsBloom rules out its ${item} (address ${moved[address]})`,
      );
    }
  });

  it("after a row's contract passed a block's bloom, still tests the next rows' topics, and another contract's address", () => {
    // a row of the fixture, and a transfer of the same contract moved into its block whose from or to topic the block's bloom rules out
    const bits = createBloomBitsCache();
    const pair = dataset.transfers
      .flatMap((held) =>
        dataset.transfers
          .filter((t) => t.contractAddress === held.contractAddress && t.blockHash !== held.blockHash)
          .map((t) => ({ held, moved: { ...t, blockHash: held.blockHash, blockNumber: held.blockNumber } })),
      )
      .find(({ moved }) => missingFromBloom(blooms.get(moved.blockHash)!, moved, bits)?.endsWith('topic'))!;
    expect(pair, 'a row and a moved transfer of the same contract').toBeDefined();
    const { held, moved } = pair;
    const item = missingFromBloom(blooms.get(moved.blockHash)!, moved, bits)!;
    const bloom = blooms.get(moved.blockHash)!;
    expect(() => createBloomCheck().check(bloom, [held, moved])).toThrow(`rules out its ${item} (address ${item === 'from topic' ? moved.fromAddress : moved.toAddress})`);
    // a row of a contract the bloom does not hold, after one it does
    const stranger = { ...held, contractAddress: `0x${'00'.repeat(19)}01` };
    expect(missingFromBloom(bloom, stranger, bits)).toBe('contract address');
    expect(() => createBloomCheck().check(bloom, [held, stranger])).toThrow(`rules out its contract address ${stranger.contractAddress}`);
  });

  it('checks every row of a call before failing, naming the first three and counting the rest', () => {
    const rows = dataset.transfers.slice(0, 6).map((t) => ({ ...t, blockNumber: 1, blockHash: `0x${'ab'.repeat(32)}` }));
    const check = createBloomCheck();
    expect(() => check.check(new Uint8Array(256), rows, 1, 6)).toThrow(
      /^The source put 5 transfers in a block that does not hold them [\s\S]*\n {2}… and 2 more transfer\(s\) of these blocks\n/,
    );
    expect(check.checked).toBe(5);
  });

  it('counts rows a source proved in their blooms without checking them again', () => {
    let told = 0;
    const check = createBloomCheck((n) => (told += n));
    check.proven(7);
    const t = dataset.transfers[0]!;
    check.check(blooms.get(t.blockHash)!, [t]);
    expect(check.checked).toBe(8);
    expect(told).toBe(8);
  });
});
