/**
 * Logs of the synthetic chain that carry the ERC-20 `Transfer` topic but are not ERC-20 transfers
 * (node-source.md, "From a log to a row"): ERC-721 transfers (token id indexed: 4 topics, no data) and two
 * older shapes, each from contracts of their own. They reach `eth_getLogs` only, never the builder API, and
 * never the dataset's transfers: they are drawn from a random stream of their own, so the transfers stay what
 * they were. Their blocks' headers hold them in their blooms: the synthetic generator draws them too, and sets
 * their bits before it hashes a block (synthetic.ts).
 */
import { addressTopic, type LogBody, TRANSFER_TOPIC, uint256Word } from './chain-log.ts';
import { createRng, deriveSeed, type Rng } from './rng.ts';
import type { SyntheticOptions } from './synthetic.ts';

/** A log of the chain that is not a transfer row; the chain store gives it its place (log and transaction index) in its block. */
export interface ForeignLog extends LogBody {
  blockNumber: number;
  transactionHash: string;
}

/**
 * - `erc721`: topics [TRANSFER, from, to, tokenId], data `0x`;
 * - `wide-data`: topics [TRANSFER, from, to], 64 bytes of data (the value, then another word);
 * - `unindexed`: topics [TRANSFER], data = from, to and value, 32 bytes each (contracts older than indexed events).
 */
export type ForeignShape = 'erc721' | 'wide-data' | 'unindexed';

/** One foreign log per this many transfers (at least one of each shape). */
const TRANSFERS_PER_FOREIGN_LOG = 50;
/** Shares of the shapes after the first three logs (one of each). */
const ERC721_SHARE = 0.8;
const WIDE_DATA_SHARE = 0.1;
const MINT_SHARE = 0.25;
const HOLDERS = 24;
const ZERO_ADDRESS = `0x${'00'.repeat(20)}`;

/**
 * The foreign logs of the synthetic chain of `options`, by block number (generation order within a block).
 * The same options give the same logs; they depend on the options only, not on the dataset (whose blooms
 * `generateSyntheticDataset(options)` makes from them).
 *
 * @example
 * const logs = syntheticForeignLogs({ ...SYNTHETIC_DEFAULTS, transfers: 1000 });
 * logs.length; // 20
 * logs.filter((l) => l.topics.length === 4).length; // most of them: ERC-721 transfers
 */
export function syntheticForeignLogs(options: SyntheticOptions): ForeignLog[] {
  const rng = createRng(deriveSeed(options.seed, 'foreign-logs'));
  const contracts: Record<ForeignShape, readonly string[]> = {
    erc721: [rng.hex(20), rng.hex(20)],
    'wide-data': [rng.hex(20)],
    unindexed: [rng.hex(20)],
  };
  const holders = Array.from({ length: HOLDERS }, () => rng.hex(20));
  const count = Math.max(3, Math.round(options.transfers / TRANSFERS_PER_FOREIGN_LOG));
  const logs: ForeignLog[] = [];
  for (let i = 0; i < count; i++) {
    const shape = i < 3 ? (['erc721', 'wide-data', 'unindexed'] as const)[i]! : drawShape(rng);
    const from = rng.chance(MINT_SHARE) ? ZERO_ADDRESS : rng.pick(holders);
    const to = rng.pick(holders);
    logs.push({
      ...foreignLogBody(shape, rng.pick(contracts[shape]), from, to, drawAmount(rng, shape)),
      blockNumber: options.startBlock + rng.int(0, options.blocks - 1),
      transactionHash: rng.hex(32),
    });
  }
  // stable: logs of one block keep their generation order
  return logs.sort((a, b) => a.blockNumber - b.blockNumber);
}

/**
 * The topics and data of a foreign log of `shape`; `amount` is the token id of an ERC-721 transfer.
 *
 * @example foreignLogBody('erc721', nft, from, to, 7n).topics.length // → 4
 */
export function foreignLogBody(shape: ForeignShape, address: string, from: string, to: string, amount: bigint): LogBody {
  switch (shape) {
    case 'erc721':
      return { address, topics: [TRANSFER_TOPIC, addressTopic(from), addressTopic(to), `0x${uint256Word(amount)}`], data: '0x' };
    case 'wide-data':
      return { address, topics: [TRANSFER_TOPIC, addressTopic(from), addressTopic(to)], data: `0x${uint256Word(amount)}${uint256Word(1)}` };
    case 'unindexed':
      return { address, topics: [TRANSFER_TOPIC], data: `0x${addressTopic(from).slice(2)}${addressTopic(to).slice(2)}${uint256Word(amount)}` };
  }
}

function drawShape(rng: Rng): ForeignShape {
  const r = rng.next();
  return r < ERC721_SHARE ? 'erc721' : r < ERC721_SHARE + WIDE_DATA_SHARE ? 'wide-data' : 'unindexed';
}

/** Token ids are mostly small, sometimes a full 256-bit number (as hashed ids are); values look like token amounts. */
function drawAmount(rng: Rng, shape: ForeignShape): bigint {
  if (shape === 'erc721') return rng.chance(0.9) ? BigInt(rng.int(0, 9999)) : rng.bigintBelow(1n << 256n);
  return BigInt(rng.int(1, 999_999)) * 10n ** BigInt(rng.int(0, 18));
}
