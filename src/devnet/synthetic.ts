/**
 * A deterministic synthetic dataset (chain-api.md §3) for the reference server: a dense chain of headers
 * that crosses London, the merge, Shanghai, Cancun and Prague, a few tokens with awkward metadata, and
 * transfers with a skewed, realistic shape (empty blocks, hot blocks, popular tokens, shared transactions).
 * Values are extreme by default (0, 2^256−1, random 256-bit numbers among plausible amounts), for tests; the
 * `realistic` amounts profile gives token amounts a person would see, for the demo.
 */
import type { Dataset, TokenRecord, TransferRecord } from '../dataset/types.ts';
import type { HeaderJson } from '../eth/header-fields.ts';
import { chainHeaderHash } from '../eth/chain-rules.ts';
import { toQuantity } from '../eth/hex.ts';
import { blockTransfer, type BlockRef } from './block-transfer.ts';
import { type ForeignLog, syntheticForeignLogs } from './foreign-logs.ts';
import { createRng, deriveSeed, type Rng } from './rng.ts';
import { MAX_UINT256 } from '../dataset/validate.ts';
import { realisticValue } from './realistic-amounts.ts';
import { addressTopicBits, bloomHex, createBloomWriter, hexItemBits, setBloomBits, TRANSFER_TOPIC_BITS } from './true-bloom.ts';

export interface SyntheticOptions {
  /** Any safe integer; the whole dataset is a function of the options. */
  seed: number;
  /** Number of blocks (headers), ≥ 1. */
  blocks: number;
  /** Number of token contracts, ≥ 1. */
  tokens: number;
  /** Exact number of transfers, ≥ 0. */
  transfers: number;
  /** Number of the first block, ≥ 0. */
  startBlock: number;
}

/**
 * How transfer values look. `edge-cases` (the default): plausible amounts with 0, 2^256−1 and random 256-bit
 * values among them, and one of each 0 and 2^256−1 forced. `realistic`: token amounts from about 0.01 to
 * 1,000,000 whole tokens with a few significant digits, in the token's decimals (one forced 0 stays).
 */
export type AmountsProfile = 'edge-cases' | 'realistic';

export const AMOUNTS_PROFILES: readonly AmountsProfile[] = ['edge-cases', 'realistic'];

/** What varies the look of the data without changing its shape: only the values, for the same options. */
export interface SyntheticProfile {
  amounts?: AmountsProfile;
  /**
   * The chain the headers are made for (`--chain-id`): Avalanche's (43114) have coreth's fields (`extDataHash` after
   * `nonce`, `extDataGasUsed` and `blockGasCost` from its fee fork, no withdrawals or requests), every other chain's are
   * Ethereum's, as the rules of `chains.md` hash them; each header is hashed by its chain's rule. The same draws either way.
   */
  chainId?: number;
}

/** Avalanche C-Chain: the one chain of `chains.md` whose header list is not Ethereum's, nor a part of it. */
const AVALANCHE = 43114;
/** coreth's `extDataHash` of a block without atomic transactions: keccak256 of RLP of empty bytes. */
const EMPTY_EXT_DATA_HASH = '0x56e81f171bcc55a6ff8345e692c0f86e5b48e01b996cadc001622fb5e363b421';

/**
 * What a header's `logsBloom` holds. `logs` (the default): the true bloom of the logs the reference server
 * serves in the block (its transfers, and its foreign logs: foreign-logs.ts), over a few random bits that
 * stand for the block's other logs. `random-only`: those random bits alone, as the generator made every
 * bloom before blooms were true; only for tests that check that nothing else changed.
 */
export type BloomMode = 'logs' | 'random-only';

export const SYNTHETIC_DEFAULTS: SyntheticOptions = Object.freeze({
  seed: 1,
  blocks: 5000,
  tokens: 7,
  transfers: 20000,
  startBlock: 18_000_000,
});

/** Timestamp of block `startBlock`, in Unix seconds; block n is `TIMESTAMP_BASE + 12 · (n − startBlock)`. */
export const TIMESTAMP_BASE = 1_693_000_000;
export const BLOCK_TIME_SECONDS = 12;

export const ZERO_HASH = `0x${'00'.repeat(32)}`;
const ZERO_ADDRESS = `0x${'00'.repeat(20)}`;
/** keccak256(rlp([])): the uncles hash of every block without uncles. */
export const EMPTY_UNCLES_HASH = '0x1dcc4de8dec75d7aab85b567b6ccd41ad312451b948a7413f0a142fd40d49347';
/** sha256 of nothing: the `requestsHash` of a Prague block without execution-layer requests. */
const EMPTY_REQUESTS_HASH = '0xe3b0c44298fc1c149afbf4c8996fb92427ae41e4649b934ca495991b7852b855';

/** First block of each fork; a field a fork introduced is null in every block before it. */
export interface ForkBoundaries {
  london: number;
  paris: number;
  shanghai: number;
  cancun: number;
  prague: number;
}

/** Where each fork starts, as a fraction of the block range. */
const FORK_FRACTIONS: Readonly<ForkBoundaries> = { london: 0.2, paris: 0.35, shanghai: 0.5, cancun: 0.7, prague: 0.85 };

const FLAGS: Readonly<Record<keyof SyntheticOptions, string>> = {
  seed: '--seed',
  blocks: '--blocks',
  tokens: '--tokens',
  transfers: '--transfers',
  startBlock: '--start-block',
};

const MINIMUM: Readonly<Record<keyof SyntheticOptions, number | null>> = {
  seed: null,
  blocks: 1,
  tokens: 1,
  transfers: 0,
  startBlock: 0,
};

/**
 * Throws a RangeError naming the command-line flag of the first bad option.
 *
 * @example validateSyntheticOptions({ ...SYNTHETIC_DEFAULTS, blocks: -3 })
 * // RangeError: --blocks must be an integer ≥ 1, got -3
 */
function validateSyntheticOptions(options: SyntheticOptions): void {
  for (const key of Object.keys(FLAGS) as (keyof SyntheticOptions)[]) {
    const value: unknown = options[key];
    const min = MINIMUM[key];
    if (typeof value !== 'number' || !Number.isSafeInteger(value) || (min !== null && value < min)) {
      const shown = typeof value === 'number' ? String(value) : (JSON.stringify(value) ?? String(value));
      throw new RangeError(`${FLAGS[key]} must be an integer${min === null ? '' : ` ≥ ${min}`}, got ${shown}`);
    }
  }
  if (!Number.isSafeInteger(options.startBlock + options.blocks)) {
    throw new RangeError(`--start-block + --blocks must stay below 2^53, got ${options.startBlock + options.blocks}`);
  }
}

/**
 * The first block of each fork: at fixed fractions of the range, so every fork starts inside it.
 *
 * @example forkBoundaries({ startBlock: 100, blocks: 1000 })
 * // → { london: 300, paris: 450, shanghai: 600, cancun: 800, prague: 950 }
 */
export function forkBoundaries(options: Pick<SyntheticOptions, 'startBlock' | 'blocks'>): ForkBoundaries {
  const at = (fraction: number): number => options.startBlock + Math.floor(options.blocks * fraction);
  return {
    london: at(FORK_FRACTIONS.london),
    paris: at(FORK_FRACTIONS.paris),
    shanghai: at(FORK_FRACTIONS.shanghai),
    cancun: at(FORK_FRACTIONS.cancun),
    prague: at(FORK_FRACTIONS.prague),
  };
}

/**
 * A whole synthetic dataset: headers for every block of the range, `tokens` contracts, exactly
 * `transfers` transfers sorted by (blockNumber, logIndex). The same options give the same dataset.
 *
 * @example
 * const ds = generateSyntheticDataset({ ...SYNTHETIC_DEFAULTS, blocks: 100, transfers: 500 });
 * ds.headers.length; // 100
 * ds.transfers.length; // 500
 *
 * With `{ amounts: 'realistic' }` only the transfer values differ: headers, tokens, addresses, blocks and
 * counts are those of the default profile for the same options.
 *
 * Block by block, the logs come first, then the bloom, then the hash: a block's transfers are drawn, its
 * bloom is made of them and of its foreign logs (`syntheticForeignLogs(options)`, which the server serves
 * through eth_getLogs; they stay out of the dataset), then its header is hashed with its parent's hash, and
 * the transfers get that hash.
 */
export function generateSyntheticDataset(options: SyntheticOptions, profile: SyntheticProfile = {}, blooms: BloomMode = 'logs'): Dataset {
  validateSyntheticOptions(options);
  const amounts = profile.amounts ?? 'edge-cases';
  if (!AMOUNTS_PROFILES.includes(amounts)) {
    throw new RangeError(`--amounts must be ${AMOUNTS_PROFILES.join(' or ')}, got ${JSON.stringify(amounts)}`);
  }
  const { seed, blocks, startBlock } = options;
  const stream = (label: string): Rng => createRng(deriveSeed(seed, label));

  const tokenRng = stream('tokens');
  const contracts = Array.from({ length: options.tokens }, () => tokenRng.hex(20));
  const profiles = contracts.map((_, i) => tokenProfile(i));
  const tokens = tokenRecords(contracts, profiles);
  const popularity = zipfCumulative(tokenRng, options.tokens);

  const layout = planLayout(stream('layout'), options);
  const addresses = addressPool(stream('addresses'), options.transfers);
  const chain = new HeaderChain(stream('headers'), options, profile.chainId ?? 1);
  const ctx: TransferContext = {
    rng: stream('transfers'),
    // a stream of its own, so that the transfers stream (and all it decides) is the same in both profiles
    realisticValues: amounts === 'realistic' ? stream('realistic-values') : undefined,
    contracts,
    decimals: profiles.map((p) => p.decimals),
    popularity,
    addresses,
    zeroAt: layout.zeroAt,
    maxAt: layout.maxAt,
    emitted: 0,
    bloomBits: blooms === 'logs' ? new TransferBloomBits(contracts, addresses) : undefined,
  };

  const foreign = blooms === 'logs' ? new ForeignBlooms(syntheticForeignLogs(options)) : undefined;
  const headers: HeaderJson[] = [];
  const transfers: TransferRecord[] = [];
  for (let offset = 0; offset < blocks; offset++) {
    const regular = layout.regular[offset]!;
    const hot = layout.hot[offset]!;
    const number = startBlock + offset;
    const { header, bloom } = chain.next(offset, regular + hot);
    // 1. the block's logs, whose bits go into its bloom: its transfers (as they are drawn; they get the
    // block's hash once it is known), then its foreign logs
    const first = transfers.length;
    if (regular + hot > 0) {
      const block: BlockRef = { number, hash: '', timestamp: new Date((TIMESTAMP_BASE + BLOCK_TIME_SECONDS * offset) * 1000).toISOString() };
      appendBlockTransfers(transfers, ctx, block, regular, hot, layout.hotToken[offset]!, bloom);
    }
    foreign?.addToBloom(bloom, number);
    // 2. the complete bloom, 3. the hash, which the transfers carry
    header.logsBloom = bloom.some((byte) => byte !== 0) ? bloomHex(bloom) : EMPTY_BLOOM;
    chain.seal(header);
    for (let i = first; i < transfers.length; i++) transfers[i]!.blockHash = header.hash;
    headers.push(header);
  }
  return { headers, transfers, tokens };
}

/** The foreign logs of the chain, block after block, as bloom bits. */
class ForeignBlooms {
  private readonly writer = createBloomWriter();
  /** Index of the first log not yet in a bloom (the logs are sorted by block number). */
  private next = 0;

  constructor(private readonly logs: readonly ForeignLog[]) {}

  /** ORs the foreign logs of block `number` into `bloom`; blocks come in ascending order. */
  addToBloom(bloom: Uint8Array, number: number): void {
    const { logs } = this;
    while (this.next < logs.length && logs[this.next]!.blockNumber < number) this.next++;
    for (; this.next < logs.length && logs[this.next]!.blockNumber === number; this.next++) this.writer.addLog(bloom, logs[this.next]!);
  }
}

/**
 * The bloom bits of the transfers being drawn, by the indexes they are drawn with (token, pool address, −1
 * for the zero address): each item is hashed once, and nothing is looked up by its text in the hot loop.
 */
class TransferBloomBits {
  private readonly contractBits: readonly (readonly number[])[];
  private readonly topicBits: (readonly number[] | undefined)[];
  private readonly zeroTopicBits = addressTopicBits(ZERO_ADDRESS);

  constructor(
    contracts: readonly string[],
    private readonly addresses: readonly string[],
  ) {
    this.contractBits = contracts.map(hexItemBits);
    this.topicBits = new Array(addresses.length);
  }

  /** Sets into `bloom` the bits of a transfer of token `token` from pool address `from` to `to` (−1: the zero address). */
  add(bloom: Uint8Array, token: number, from: number, to: number): void {
    setBloomBits(bloom, this.contractBits[token]!);
    setBloomBits(bloom, TRANSFER_TOPIC_BITS);
    setBloomBits(bloom, this.topic(from));
    setBloomBits(bloom, this.topic(to));
  }

  private topic(index: number): readonly number[] {
    if (index < 0) return this.zeroTopicBits;
    let bits = this.topicBits[index];
    if (bits === undefined) {
      bits = addressTopicBits(this.addresses[index]!);
      this.topicBits[index] = bits;
    }
    return bits;
  }
}

// ---------------------------------------------------------------------------------------------- tokens

interface TokenProfile {
  name: string;
  symbol: string;
  /** Decimals used to scale values (unlisted tokens still move plausible amounts). */
  decimals: number;
  symbolKey: 'contractSymbol' | 'contractSymbols';
  /** `false`: the token has no line in tokens.jsonl (unknown metadata). */
  listed: boolean;
}

const CYCLED_DECIMALS = [18, 6, 8, 0] as const;

/** Metadata by token index, so that even three tokens cover the awkward cases. */
function tokenProfile(index: number): TokenProfile {
  const plain = { symbolKey: 'contractSymbol', listed: true } as const;
  switch (index) {
    case 0:
      return { ...plain, name: 'Éther Synthétique ✓', symbol: 'ÉSYN', decimals: 18 };
    case 1:
      return { ...plain, name: 'Synthetic Dollar', symbol: 'SUSD', decimals: 6, symbolKey: 'contractSymbols' };
    case 2:
      return { ...plain, name: '', symbol: '', decimals: 18, listed: false };
    case 3:
      return { ...plain, name: 'Synthetic Bitcoin', symbol: 'SBTC', decimals: 8 };
    case 4:
      return { ...plain, name: 'Synthetic Ticket', symbol: 'STIX', decimals: 0 };
    default:
      return {
        ...plain,
        name: `Synthetic Token ${index}`,
        symbol: `SYN${index}`,
        decimals: CYCLED_DECIMALS[(index - 5) % CYCLED_DECIMALS.length]!,
      };
  }
}

function tokenRecords(contracts: readonly string[], profiles: readonly TokenProfile[]): TokenRecord[] {
  const records: TokenRecord[] = [];
  contracts.forEach((contractAddress, i) => {
    const p = profiles[i]!;
    if (!p.listed) return;
    records.push({
      contractAddress,
      contractName: p.name,
      [p.symbolKey]: p.symbol,
      contractDecimals: String(p.decimals),
    } as TokenRecord);
  });
  return records;
}

/**
 * Cumulative Zipf weights (1/rank) over the tokens, in a seed-dependent popularity order:
 * `cumulative[i]` is the total weight of token indexes 0…i.
 */
function zipfCumulative(rng: Rng, count: number): Float64Array {
  const order = Array.from({ length: count }, (_, i) => i);
  for (let i = count - 1; i > 0; i--) {
    const j = rng.int(0, i);
    [order[i], order[j]] = [order[j]!, order[i]!];
  }
  const weight = new Float64Array(count);
  order.forEach((token, rank) => {
    weight[token] = 1 / (rank + 1);
  });
  const cumulative = new Float64Array(count);
  let sum = 0;
  for (let i = 0; i < count; i++) cumulative[i] = sum += weight[i]!;
  return cumulative;
}

/** A token index drawn by popularity (binary search over the cumulative weights). */
function pickToken(rng: Rng, cumulative: Float64Array): number {
  const target = rng.next() * cumulative[cumulative.length - 1]!;
  let lo = 0;
  let hi = cumulative.length - 1;
  while (lo < hi) {
    const mid = (lo + hi) >>> 1;
    if (cumulative[mid]! > target) hi = mid;
    else lo = mid + 1;
  }
  return lo;
}

// ---------------------------------------------------------------------------------------------- layout

/** Below this many transfers there are no hot blocks. */
const HOT_MIN_TRANSFERS = 500;
/** Share of the transfers that go to hot blocks. */
const HOT_SHARE = 0.2;
const HOT_MIN_SIZE = 100;
const HOT_MAX_SIZE = 400;
/** Share of the blocks that have ordinary transfers (so most blocks are empty). */
const ACTIVE_SHARE = 0.3;

interface Layout {
  /** Ordinary transfers per block offset. */
  regular: Uint32Array;
  /** Transfers of the block's one hot token, per block offset (0: not a hot block). */
  hot: Uint32Array;
  hotToken: Int32Array;
  /** Ordinals of the transfers forced to value 0 and 2^256−1 (−1: none). */
  zeroAt: number;
  maxAt: number;
}

/** How many transfers each block gets: a few hot blocks, ~30% active blocks with skewed counts, the rest empty. */
function planLayout(rng: Rng, options: SyntheticOptions): Layout {
  const { blocks, transfers, tokens } = options;
  const regular = new Uint32Array(blocks);
  const hot = new Uint32Array(blocks);
  const hotToken = new Int32Array(blocks).fill(-1);

  let hotTotal = 0;
  if (transfers >= HOT_MIN_TRANSFERS) {
    let budget = Math.floor(transfers * HOT_SHARE);
    const maxHot = Math.max(1, Math.floor(blocks / 10));
    for (let made = 0; budget >= HOT_MIN_SIZE && made < maxHot; made++) {
      const size = Math.min(budget, rng.int(HOT_MIN_SIZE, HOT_MAX_SIZE));
      let b = rng.int(0, blocks - 1);
      while (hot[b] !== 0) b = (b + 1) % blocks;
      hot[b] = size;
      hotToken[b] = rng.int(0, tokens - 1);
      budget -= size;
      hotTotal += size;
    }
  }

  const rest = transfers - hotTotal;
  if (rest > 0) {
    const activeCount = Math.min(rest, Math.max(1, Math.round(blocks * ACTIVE_SHARE)));
    const active = new Uint32Array(activeCount);
    const weight = new Float64Array(activeCount);
    let total = 0;
    // Selection sampling: exactly activeCount distinct blocks, in ascending order, in one pass.
    for (let b = 0, chosen = 0; chosen < activeCount; b++) {
      if (rng.next() * (blocks - b) < activeCount - chosen) {
        active[chosen] = b;
        const w = (1 / (0.05 + rng.next())) * (rng.chance(0.1) ? 5 : 1);
        weight[chosen] = w;
        total += w;
        chosen++;
      }
    }
    let assigned = 0;
    for (let i = 0; i < activeCount; i++) {
      const n = Math.floor((rest * weight[i]!) / total);
      regular[active[i]!] = n;
      assigned += n;
    }
    for (; assigned < rest; assigned++) regular[active[rng.int(0, activeCount - 1)]!]! += 1;
  }

  let zeroAt = -1;
  let maxAt = -1;
  if (transfers >= 2) {
    zeroAt = rng.int(0, transfers - 1);
    maxAt = rng.int(0, transfers - 2);
    if (maxAt >= zeroAt) maxAt++;
  }
  return { regular, hot, hotToken, zeroAt, maxAt };
}

/** Senders and receivers: a pool small enough that many addresses repeat. */
function addressPool(rng: Rng, transfers: number): string[] {
  const size = Math.min(20_000, Math.max(32, Math.ceil(transfers / 8)));
  return Array.from({ length: size }, () => rng.hex(20));
}

// --------------------------------------------------------------------------------------------- headers

const GAS_LIMIT = 30_000_000;
const INITIAL_BASE_FEE = 1_000_000_000;
const TYPICAL_BASE_FEE = 15_000_000_000;
const GAS_PER_BLOB = 131_072;
const TARGET_BLOB_GAS = 3 * GAS_PER_BLOB;
const ZERO_NONCE = '0x0000000000000000';
/** One string for every bloom without a bit set. */
const EMPTY_BLOOM = `0x${'00'.repeat(256)}`;

function utf8Hex(text: string): string {
  return `0x${Buffer.from(text, 'utf8').toString('hex')}`;
}

const POW_EXTRA_DATA: readonly string[] = ['ethermine-eu1-1', 'Hiveon', 'geth go1.16.4 linux', 'f2pool'].map(utf8Hex);
const POS_EXTRA_DATA: readonly string[] = ['beaverbuild.org', 'Titan (titanbuilder.xyz)', 'rsync-builder.xyz', 'Illuminate Dmocratize Dstribute', ''].map(utf8Hex);

/**
 * Builds the headers one block after another, carrying the state a chain carries (fees, blob gas, parent):
 * `next` draws a header's fields and the random bits of its bloom, `seal` (once the bloom is complete) links
 * the header to its parent and hashes it.
 */
class HeaderChain {
  private readonly forks: ForkBoundaries;
  private readonly powMiners: string[];
  private readonly posMiners: string[];
  private parentHash: string;
  private baseFee = INITIAL_BASE_FEE;
  private excessBlobGas = 0;
  private parentBlobGasUsed = 0;

  constructor(
    private readonly rng: Rng,
    private readonly options: SyntheticOptions,
    private readonly chainId: number,
  ) {
    this.forks = forkBoundaries(options);
    this.powMiners = POW_EXTRA_DATA.map(() => rng.hex(20));
    this.posMiners = POS_EXTRA_DATA.map(() => rng.hex(20));
    this.parentHash = options.startBlock === 0 ? ZERO_HASH : rng.hex(32);
  }

  /**
   * The header of block `startBlock + offset`, which holds `transfers` transfer logs, with neither parent
   * hash nor hash yet, and its bloom's random bits: `logsBloom` is left for the caller to set.
   */
  next(offset: number, transfers: number): { header: HeaderJson; bloom: Uint8Array } {
    const { rng, forks } = this;
    const n = this.options.startBlock + offset;
    const london = n >= forks.london;
    const merged = n >= forks.paris;
    const cancun = n >= forks.cancun;

    const builder = rng.int(0, (merged ? POS_EXTRA_DATA : POW_EXTRA_DATA).length - 1);
    const gasLimit = GAS_LIMIT + rng.int(-2000, 2000);
    const target = Math.floor(gasLimit / 2);
    // Busier when gas is cheap, quieter when it is dear: keeps the base fee near a typical level.
    const pressure = Math.min(2, this.baseFee / TYPICAL_BASE_FEE - 1);
    const fill = london ? 0.5 + (rng.next() - 0.5) * 0.9 - 0.15 * pressure : 0.3 + 0.7 * rng.next();
    const gasUsed = Math.floor(Math.min(1, Math.max(0.02, fill)) * gasLimit);
    const blobGasUsed = cancun ? GAS_PER_BLOB * rng.int(0, 6) : 0;

    // drawn in the order of the fields, as the headers stream always advanced
    const requestsHash = n >= forks.prague ? (rng.chance(0.9) ? EMPTY_REQUESTS_HASH : rng.hex(32)) : null;
    const difficulty = merged ? '0x0' : toQuantity(11_000_000_000_000_000n + rng.bigintBelow(2_000_000_000_000_000n));
    const bloom = this.randomBloom(transfers + rng.int(0, 30));
    const header: HeaderJson = {
      requestsHash,
      baseFeePerGas: london ? toQuantity(this.baseFee) : null,
      blobGasUsed: cancun ? toQuantity(blobGasUsed) : null,
      difficulty,
      excessBlobGas: cancun ? toQuantity(this.excessBlobGas) : null,
      extraData: (merged ? POS_EXTRA_DATA : POW_EXTRA_DATA)[builder]!,
      gasLimit: toQuantity(gasLimit),
      gasUsed: toQuantity(gasUsed),
      hash: '',
      logsBloom: '',
      miner: (merged ? this.posMiners : this.powMiners)[builder]!,
      mixHash: rng.hex(32),
      nonce: merged ? ZERO_NONCE : rng.hex(8),
      number: toQuantity(n),
      parentBeaconBlockRoot: cancun ? rng.hex(32) : null,
      parentHash: '',
      receiptsRoot: rng.hex(32),
      sha3Uncles: EMPTY_UNCLES_HASH,
      stateRoot: rng.hex(32),
      timestamp: toQuantity(TIMESTAMP_BASE + BLOCK_TIME_SECONDS * offset),
      transactionsRoot: rng.hex(32),
      withdrawalsRoot: n >= forks.shanghai ? rng.hex(32) : null,
      blockAccessListHash: null,
    };
    if (this.chainId === AVALANCHE) corethFields(header, london);
    if (london) {
      // EIP-1559: the base fee moves by up to 1/8 towards the gas used, relative to the target.
      this.baseFee = Math.max(7, this.baseFee + Math.trunc(((this.baseFee / target) * (gasUsed - target)) / 8));
    }
    if (cancun) {
      this.excessBlobGas = Math.max(0, this.excessBlobGas + this.parentBlobGasUsed - TARGET_BLOB_GAS);
      this.parentBlobGasUsed = blobGasUsed;
    }
    return { header, bloom };
  }

  /** Links `header` (whose fields, bloom included, are final) to the previous sealed one, and hashes it. */
  seal(header: HeaderJson): void {
    header.parentHash = this.parentHash;
    header.hash = chainHeaderHash(this.chainId, header);
    this.parentHash = header.hash;
  }

  /** A bloom with a few random bits per log (no bit for a block without logs). */
  private randomBloom(logs: number): Uint8Array {
    const bits = new Uint8Array(256);
    const count = Math.min(512, logs * 3);
    for (let i = 0; i < count; i++) {
      const bit = this.rng.int(0, 2047);
      bits[bit >>> 3]! |= 1 << (bit & 7);
    }
    return bits;
  }
}

/**
 * Makes an Ethereum-shaped header of the synthetic chain an Avalanche one, as coreth's nodes answer it: `extDataHash`
 * (no atomic transactions), from the fee fork (`london`, standing for Apricot Phase 3–4) `extDataGasUsed` and
 * `blockGasCost` of 0, and neither `withdrawalsRoot` nor `requestsHash` (coreth has neither). Drawn nothing.
 */
function corethFields(header: HeaderJson, london: boolean): void {
  const fields = header as HeaderJson & Record<string, string | null>;
  fields.extDataHash = EMPTY_EXT_DATA_HASH;
  fields.extDataGasUsed = london ? '0x0' : null;
  fields.blockGasCost = london ? '0x0' : null;
  fields.withdrawalsRoot = null;
  fields.requestsHash = null;
}

// ------------------------------------------------------------------------------------------- transfers

/** What the transfer writer needs across blocks; `emitted` counts the transfers written so far. */
interface TransferContext {
  rng: Rng;
  /** Set in the realistic amounts profile: where its values are drawn from. */
  realisticValues: Rng | undefined;
  contracts: readonly string[];
  decimals: readonly number[];
  popularity: Float64Array;
  addresses: readonly string[];
  zeroAt: number;
  maxAt: number;
  emitted: number;
  /** Sets each transfer's bits into its block's bloom as it is drawn; undefined when blooms are random only. */
  bloomBits: TransferBloomBits | undefined;
}

const MAX_UINT256_TEXT = MAX_UINT256.toString();
const TWO_POW_256 = 2n ** 256n;
/** 10^0 … 10^40 as bigints. */
const POW10: readonly bigint[] = Array.from({ length: 41 }, (_, i) => 10n ** BigInt(i));

/**
 * Appends one block's transfers in log order: `regular` transfers of popular tokens, with a run of `hot`
 * transfers of token `hotToken` (a batch payout in a few transactions) somewhere among them; sets their bits
 * into the block's `bloom` (unless blooms are random only).
 */
function appendBlockTransfers(out: TransferRecord[], ctx: TransferContext, block: BlockRef, regular: number, hot: number, hotToken: number, bloom: Uint8Array): void {
  const { rng, contracts, addresses } = ctx;
  const total = regular + hot;
  const hotStart = hot > 0 ? rng.int(0, regular) : -1;
  const hotEnd = hotStart + hot;
  const hotSender = hot > 0 ? rng.int(0, addresses.length - 1) : -1; // an index, drawn as rng.pick(addresses) draws

  let logIndex = rng.int(0, 4);
  let transactionIndex = rng.int(0, 3);
  let transactionHash = '';
  for (let i = 0; i < total; i++) {
    const isHot = i >= hotStart && i < hotEnd;
    const newTransaction = i === 0 || i === hotStart || i === hotEnd || (isHot ? rng.chance(0.02) : rng.chance(0.6));
    if (newTransaction) {
      if (i > 0) {
        transactionIndex += 1 + (rng.chance(0.4) ? rng.int(0, 6) : 0);
        if (rng.chance(0.5)) logIndex += rng.int(1, 5);
      }
      transactionHash = rng.hex(32);
    } else if (rng.chance(0.2)) {
      logIndex += rng.int(1, 2); // a Swap or Approval log between two transfers of one transaction
    }

    const token = isHot ? hotToken : pickToken(rng, ctx.popularity);
    // indexes into the address pool, −1 for the zero address
    let from: number;
    let to: number;
    if (isHot) {
      from = hotSender;
      to = rng.int(0, addresses.length - 1);
    } else {
      const u = rng.next();
      const v = rng.next();
      from = rng.chance(0.01) ? -1 : Math.floor(addresses.length * u * u);
      to = rng.chance(0.005) ? -1 : Math.floor(addresses.length * v * v);
    }
    const fromAddress = from < 0 ? ZERO_ADDRESS : addresses[from]!;
    const toAddress = to < 0 ? ZERO_ADDRESS : addresses[to]!;
    const ordinal = ctx.emitted++;
    // drawn in both profiles: the transfers stream must advance the same way for everything after it
    const edgeCase = ordinal === ctx.zeroAt ? '0' : ordinal === ctx.maxAt ? MAX_UINT256_TEXT : randomValue(rng, ctx.decimals[token]!);
    const value = ctx.realisticValues === undefined || ordinal === ctx.zeroAt ? edgeCase : realisticValue(ctx.realisticValues, ctx.decimals[token]!);

    out.push(blockTransfer({ contractAddress: contracts[token]!, fromAddress, toAddress, value }, block, { transactionHash, transactionIndex, logIndex }));
    ctx.bloomBits?.add(bloom, token, from, to);
    logIndex++;
  }
}

/** A transfer value as decimal text: mostly round-ish amounts scaled by the decimals, sometimes extremes. */
function randomValue(rng: Rng, decimals: number): string {
  const r = rng.next();
  if (r < 0.002) return '0';
  if (r < 0.0025) return MAX_UINT256_TEXT;
  if (r < 0.003) return rng.bigintBelow(TWO_POW_256).toString();
  if (r < 0.3) return (rng.bigintBelow(POW10[decimals + rng.int(0, 5)]!) + 1n).toString();
  const exponent = Math.max(0, decimals + rng.int(-4, 4));
  return (BigInt(rng.int(1, 9999)) * POW10[exponent]!).toString();
}
