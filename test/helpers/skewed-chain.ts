import type { Dataset } from '../../src/dataset/types.ts';
import { generateSyntheticDataset } from '../../src/devnet/synthetic.ts';

// one contract whose lowest 500 blocks hold most of its transfers: planned in 2 × 2 chunks of 500 blocks,
// the last chunk (the lowest blocks) is left to read alone, 40 pages of 50, while three of its four connections idle
export const START = 5_000_000;
export const BLOCKS = 2000;
export const PAGE_SIZE = 50;
export const CONCURRENCY = 2;

/** A chain whose one contract's lowest 500 blocks hold nine tenths of its transfers: a run of it splits a chunk. */
export function skewedChain(): Dataset {
  const chain = generateSyntheticDataset({ seed: 23, blocks: BLOCKS, tokens: 1, transfers: 8000, startBlock: START });
  let upper = 0;
  const transfers = chain.transfers.filter((t) => t.blockNumber < START + 500 || upper++ % 10 === 0);
  return { ...chain, transfers };
}
