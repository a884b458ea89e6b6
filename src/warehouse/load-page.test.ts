import { describe, expect, it } from 'vitest';
import type { TransferRecord } from '../dataset/types.ts';
import { chunkMoves } from './load-page.ts';

const rows = (n: number) => Array.from({ length: n }, () => ({}) as TransferRecord);
const at = (pageKey: string | null, resumeToBlock: number | null, done = false, openKeys = [{ transactionHash: '0xaa', logIndex: 3 }]) => ({
  pageKey,
  resumeToBlock,
  done,
  openKeys,
});

describe('chunkMoves', () => {
  it('moves each chunk of a transaction from the position before its first page there to the one after its last, counting its pages and rows', () => {
    const moves = chunkMoves([
      { chunkId: '7', rows: rows(1000), start: at('k0', 130), checkpoint: at('k1', 120) },
      { chunkId: '8', rows: rows(400), start: at(null, null, false, []), checkpoint: at('x1', 90) },
      { chunkId: '7', rows: rows(1000), start: at('k1', 120), checkpoint: at('k2', 110) },
      { chunkId: '7', rows: rows(250), start: at('k2', 110), checkpoint: at(null, 100, true, []) },
    ]);
    expect(moves).toEqual([
      {
        id: '7',
        from_done: false,
        from_page_key: 'k0',
        from_resume_to_block: 130,
        from_open_hashes: ['0xaa'],
        from_open_log_indexes: [3],
        page_key: null,
        resume_to_block: 100,
        done: true,
        pages: 3,
        rows: 2250,
        open_hashes: [],
        open_log_indexes: [],
      },
      {
        id: '8',
        from_done: false,
        from_page_key: null,
        from_resume_to_block: null,
        from_open_hashes: [],
        from_open_log_indexes: [],
        page_key: 'x1',
        resume_to_block: 90,
        done: false,
        pages: 1,
        rows: 400,
        open_hashes: ['0xaa'],
        open_log_indexes: [3],
      },
    ]);
  });

  it('has nothing to move for no pages', () => {
    expect(chunkMoves([])).toEqual([]);
  });
});
