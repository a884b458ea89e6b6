import { describe, expect, it } from 'vitest';
import type { TransferRecord } from '../dataset/types.ts';
import { createRng } from '../devnet/rng.ts';
import { copyLine, copyLines } from './copy.ts';

const hex = (rng: ReturnType<typeof createRng>, digits: number) => `0x${Array.from({ length: digits }, () => '0123456789abcdef'[rng.int(0, 15)]).join('')}`;

function rows(n: number): TransferRecord[] {
  const rng = createRng(3);
  return Array.from({ length: n }, (_, i) => ({
    contractAddress: hex(rng, 40),
    fromAddress: hex(rng, 40),
    toAddress: hex(rng, 40),
    value: i % 5 === 0 ? '0' : (2n ** BigInt(rng.int(0, 256)) - 1n).toString(),
    blockHash: hex(rng, 64),
    blockNumber: [0, 9, 10, 17_999_999, 2 ** 53 - 1][i % 5]!,
    blockTimestamp: '2023-08-28T16:26:28.000Z',
    transactionHash: hex(rng, 64),
    transactionIndex: rng.int(0, 999),
    logIndex: [0, 1, 99, 100, 1000][(i * 3) % 5]!,
  }));
}

describe('copyLines', () => {
  const suffix = '\t1\t42\t42\n';

  it('writes the same bytes as each row’s copyLine, first to last and last to first', () => {
    const all = rows(300);
    const forward = all.map((r) => copyLine(r, suffix)).join('');
    expect(copyLines(all, 0, 299, Buffer.from(suffix)).toString('latin1')).toBe(forward);
    const backward = [...all]
      .reverse()
      .map((r) => copyLine(r, suffix))
      .join('');
    expect(copyLines(all, 299, 0, Buffer.from(suffix)).toString('latin1')).toBe(backward);
    expect(copyLines(all, 7, 7, Buffer.from('\n')).toString('latin1')).toBe(copyLine(all[7]!));
  });
});
