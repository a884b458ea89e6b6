/**
 * What a job of a known chain gets when it leaves a field out: for now `finality`, the blocks a follow-the-head
 * run reads again below where the job's last run ended, to pick up reorgs.
 *
 * The rule: a chain's default is the depth at which its own documentation calls a block final, under its fallback
 * when the fast path stalls, rounded up; never less than Ethereum's 64. Chains that finalise sooner (Gnosis in
 * two 16-slot epochs, 32 blocks; Avalanche's C-Chain at acceptance; BNB Smart Chain's fast finality in 2 blocks)
 * are not lowered: re-reading 64 blocks costs a request or two a run, and a missed reorg costs rows. A job's
 * own `finality` always wins.
 */

/**
 * Blocks re-read when a job states no `finality` and its chain is not in `CHAIN_FINALITY`: Ethereum's (chain 1,
 * and its testnets) two epochs of 32 slots, after which its blocks are finalized.
 */
export const DEFAULT_FINALITY = 64;

/** A chain whose default `finality` differs from Ethereum's, and why. */
export interface ChainFinality {
  /** The chain's name, for documentation. */
  name: string;
  /** Blocks a follow-the-head run re-reads, when the job states none. */
  finality: number;
  /** Why this depth, in one line. */
  reason: string;
  /** Where the figures behind it come from. */
  source: string;
}

/** Known chains whose blocks can change deeper than Ethereum's 64, by chain id (EIP-155). */
export const CHAIN_FINALITY: Readonly<Record<number, ChainFinality>> = Object.freeze({
  10: {
    name: 'OP Mainnet',
    finality: 900,
    reason: 'OP Stack: a block is final once its batch is in a finalized L1 block, typically 20–30 min after it is made; 30 min of 2 s blocks',
    source: 'https://docs.optimism.io/stack/transactions/transaction-finality',
  },
  8453: {
    name: 'Base',
    finality: 900,
    reason: 'OP Stack, as OP Mainnet: final once its batch is in a finalized L1 block, typically 20–30 min; 30 min of 2 s blocks',
    source: 'https://docs.optimism.io/stack/transactions/transaction-finality',
  },
  42161: {
    name: 'Arbitrum One',
    finality: 7200,
    reason: 'Nitro: hard finality once the L1 block holding its batch is finalized (~15 min after the batch is posted, batches every few minutes); 30 min of 250 ms blocks',
    source: 'https://docs.arbitrum.io/how-arbitrum-works/deep-dives/finality',
  },
  137: {
    name: 'Polygon PoS',
    finality: 512,
    reason:
      'Heimdall milestones finalise Bor blocks in seconds, but without them the fork choice is probabilistic: a reorg of 150+ blocks (Feb 2023), milestones stalled 10–15 min (Sep 2025); 512 blocks ≈ 17 min of 2 s blocks',
    source: 'https://docs.polygon.technology/pos/concepts/finality/finality/',
  },
  56: {
    name: 'BNB Smart Chain',
    finality: 240,
    reason: 'fast finality (BEP-126) finalises a block in 2 when validators vote; without the votes, probabilistic finality takes 15 validators × 16 blocks a turn = 240 blocks',
    source: 'https://github.com/bnb-chain/BEPs/blob/master/BEPs/BEP-619.md',
  },
});

/**
 * The `finality` a job of `chain` gets when it states none: its chain's entry in `CHAIN_FINALITY`, else 64.
 *
 * @example defaultFinality(8453) // → 900
 * defaultFinality(1) // → 64
 * defaultFinality(999999) // → 64
 */
export function defaultFinality(chain: number): number {
  return CHAIN_FINALITY[chain]?.finality ?? DEFAULT_FINALITY;
}

/**
 * The defaults in one line, for the job schema's description.
 *
 * @example finalityDefaults() // → '64 for Ethereum (1), its testnets and any chain not named here; 900 for OP Mainnet (10), …'
 */
export function finalityDefaults(): string {
  const known = Object.entries(CHAIN_FINALITY).map(([id, c]) => `${c.finality} for ${c.name} (${id})`);
  return [`${DEFAULT_FINALITY} for Ethereum (1), its testnets and any chain not named here`, ...known].join('; ');
}
