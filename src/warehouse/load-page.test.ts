import { describe, expect, it } from 'vitest';
import { chunkCheckpoints } from './load-page.ts';
import type { TransferRecord } from '../dataset/types.ts';

const rows = (n: number) => Array.from({ length: n }, () => ({}) as TransferRecord);
const at = (pageKey: string | null, resumeToBlock: number, done = false, openKeys = [{ transactionHash: '0xaa', logIndex: 3 }]) => ({ pageKey, resumeToBlock, done, openKeys });

describe('chunkCheckpoints', () => {
  it('moves each chunk of a transaction to the position after its last page there, counting its pages and rows', () => {
    const statements = chunkCheckpoints([
      { chunkId: '7', rows: rows(1000), checkpoint: at('k1', 120) },
      { chunkId: '8', rows: rows(400), checkpoint: at('x1', 90) },
      { chunkId: '7', rows: rows(1000), checkpoint: at('k2', 110) },
      { chunkId: '7', rows: rows(250), checkpoint: at(null, 100, true, []) },
    ]);
    expect(statements).toEqual([
      ['7', null, 100, true, 2250, [], [], 3],
      ['8', 'x1', 90, false, 400, ['0xaa'], [3], 1],
    ]);
  });

  it('has nothing to write for no pages', () => {
    expect(chunkCheckpoints([])).toEqual([]);
  });
});
