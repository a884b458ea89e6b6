import { createHash } from 'node:crypto';
import { MAX_UINT256 } from '../dataset/validate.ts';
import { describe, expect, it } from 'vitest';
import type { Dataset, TransferRecord } from '../dataset/types.ts';
import { TRANSFER_KEYS } from '../dataset/types.ts';
import { ERIGON_HEADER_KEYS, FORK_KEYS, type HeaderJson } from '../eth/header-fields.ts';
import { headerLine } from '../dataset/write.ts';
import { verifyChainHeader } from '../eth/chain-rules.ts';
import { computeHeaderHash } from '../eth/header-hash.ts';
import { isHexData, isHexQuantity } from '../eth/hex.ts';
import {
  BLOCK_TIME_SECONDS,
  EMPTY_UNCLES_HASH,
  forkBoundaries,
  generateSyntheticDataset,
  SYNTHETIC_DEFAULTS,
  type AmountsProfile,
  type SyntheticOptions,
  type SyntheticProfile,
  TIMESTAMP_BASE,
  ZERO_HASH,
} from './synthetic.ts';

const MAX_TEXT = '115792089237316195423570985008687907853269984665640564039457584007913129639935';
const defaults = generateSyntheticDataset(SYNTHETIC_DEFAULTS);
const small = (o: Partial<SyntheticOptions> = {}, profile: SyntheticProfile = {}): Dataset =>
  generateSyntheticDataset({ ...SYNTHETIC_DEFAULTS, blocks: 200, transfers: 1500, ...o }, profile);

const num = (h: HeaderJson, key: 'number' | 'timestamp' | 'difficulty' | 'gasUsed' | 'gasLimit'): bigint => BigInt(h[key]!);
const jsonl = (ds: Dataset): string => [ds.headers, ds.transfers, ds.tokens].map((rows) => rows.map((r) => JSON.stringify(r)).join('\n')).join('\n\n');

describe('synthetic dataset: determinism and options', () => {
  it('the same seed gives the same dataset, byte for byte', () => {
    const again = generateSyntheticDataset({ ...SYNTHETIC_DEFAULTS });
    expect(again).toEqual(defaults);
    expect(jsonl(again)).toBe(jsonl(defaults));
  });

  it('the default amounts profile is edge-cases, and the default dataset is the one every test was written against', () => {
    expect(generateSyntheticDataset({ ...SYNTHETIC_DEFAULTS }, { amounts: 'edge-cases' })).toEqual(defaults);
    // change this digest only when changing the generator on purpose: tests' expected figures rest on the dataset.
    // Changed when the blooms became true (each header's logsBloom holds its block's logs, so the hashes changed
    // with it); everything else is as it was: see 'synthetic dataset: true blooms' below.
    expect(createHash('sha256').update(jsonl(defaults)).digest('hex')).toBe('5ada65d5b944d0c062bdf5c4d49984ce1d1ee6bda945e487ae70e8fa164b4c74');
  });

  it('rejects an unknown amounts profile, naming the flag and the accepted ones', () => {
    const bad = () => small({}, { amounts: 'huge' as AmountsProfile });
    expect(bad).toThrow(new RangeError('--amounts must be edge-cases or realistic, got "huge"'));
  });

  it('a different seed gives different hashes, addresses and contracts', () => {
    const a = small({ seed: 1 });
    const b = small({ seed: 2 });
    const hashesA = new Set(a.headers.map((h) => h.hash));
    expect(b.headers.some((h) => hashesA.has(h.hash))).toBe(false);
    expect(b.tokens.map((t) => t.contractAddress)).not.toEqual(a.tokens.map((t) => t.contractAddress));
  });

  it('rejects bad options with a message naming the flag', () => {
    const bad = (o: Partial<SyntheticOptions>) => () => generateSyntheticDataset({ ...SYNTHETIC_DEFAULTS, ...o });
    expect(bad({ blocks: -3 })).toThrow(new RangeError('--blocks must be an integer ≥ 1, got -3'));
    expect(bad({ blocks: 0 })).toThrow(/--blocks must be an integer ≥ 1, got 0/);
    expect(bad({ tokens: 0 })).toThrow(/--tokens must be an integer ≥ 1, got 0/);
    expect(bad({ transfers: -1 })).toThrow(/--transfers must be an integer ≥ 0, got -1/);
    expect(bad({ transfers: 2.5 })).toThrow(/--transfers must be an integer ≥ 0, got 2.5/);
    expect(bad({ startBlock: -1 })).toThrow(/--start-block must be an integer ≥ 0, got -1/);
    expect(bad({ seed: 0.5 })).toThrow(/--seed must be an integer, got 0.5/);
    expect(bad({ blocks: Number.NaN })).toThrow(RangeError);
    expect(bad({ tokens: '3' as unknown as number })).toThrow(/--tokens must be an integer ≥ 1, got "3"/);
  });

  it('accepts the smallest options', () => {
    const ds = generateSyntheticDataset({ seed: 0, blocks: 1, tokens: 1, transfers: 0, startBlock: 0 });
    expect(ds.headers).toHaveLength(1);
    expect(ds.transfers).toHaveLength(0);
    expect(computeHeaderHash(ds.headers[0]!)).toBe(ds.headers[0]!.hash);
  });
});

describe('synthetic dataset: true blooms', () => {
  // the default dataset as it was before blooms were true: random bits only
  const before = generateSyntheticDataset(SYNTHETIC_DEFAULTS, {}, 'random-only');
  const BEFORE_DIGEST = '84bc6669d7b90541e5c2f6cb0fc06eb0128514f1a058ab86b0a649fddfc8b529';
  const bloomOf = (h: HeaderJson) => Buffer.from(h.logsBloom!.slice(2), 'hex');

  it('the random-only mode still makes, byte for byte, the default dataset of the generator before true blooms', () => {
    expect(createHash('sha256').update(jsonl(before)).digest('hex')).toBe(BEFORE_DIGEST);
  });

  it('changes only the blooms, and the hashes that follow from them: every other field is as it was', () => {
    const headerFields = ({ logsBloom: _b, parentHash: _p, hash: _h, ...rest }: HeaderJson) => rest;
    const transferFields = ({ blockHash: _, ...rest }: TransferRecord) => rest;
    expect(defaults.headers).toHaveLength(before.headers.length);
    expect(defaults.headers.map(headerFields)).toEqual(before.headers.map(headerFields));
    expect(defaults.headers.map((h) => Object.keys(h))).toEqual(before.headers.map((h) => Object.keys(h)));
    expect(defaults.transfers).toHaveLength(before.transfers.length);
    expect(defaults.transfers.map(transferFields)).toEqual(before.transfers.map(transferFields));
    expect(defaults.transfers.map((t) => Object.keys(t))).toEqual(before.transfers.map((t) => Object.keys(t)));
    expect(defaults.tokens).toEqual(before.tokens);
    // the first parent hash is drawn, not computed: it stays
    expect(defaults.headers[0]!.parentHash).toBe(before.headers[0]!.parentHash);
  });

  it('keeps the old random bits (for the blocks’ other logs) and adds the logs’ bits to them', () => {
    let grown = 0;
    defaults.headers.forEach((h, i) => {
      const now = bloomOf(h);
      const old = bloomOf(before.headers[i]!);
      expect(now.every((byte, j) => (byte & old[j]!) === old[j]!)).toBe(true);
      if (!now.equals(old)) grown++;
    });
    // every block with a transfer or a foreign log has bits of its own
    const withLogs = new Set(defaults.transfers.map((t) => t.blockNumber));
    expect(grown).toBeGreaterThanOrEqual(withLogs.size);
  });

  it('gives a new hash to every block from the first whose bloom changed on, and the transfers their block’s new hash', () => {
    const first = defaults.headers.findIndex((h, i) => h.logsBloom !== before.headers[i]!.logsBloom);
    expect(first).toBeGreaterThanOrEqual(0);
    expect(defaults.headers.slice(0, first)).toEqual(before.headers.slice(0, first));
    const oldHashes = new Set(before.headers.map((h) => h.hash));
    expect(defaults.headers.slice(first).filter((h) => oldHashes.has(h.hash))).toEqual([]);
    const hashOf = new Map(defaults.headers.map((h) => [Number(h.number), h.hash]));
    expect(defaults.transfers.filter((t) => t.blockHash !== hashOf.get(t.blockNumber))).toEqual([]);
  });

  it('leaves a block without transfers, foreign logs or random bits an empty bloom', () => {
    const empty = `0x${'00'.repeat(256)}`;
    const ds = generateSyntheticDataset({ seed: 0, blocks: 1, tokens: 1, transfers: 0, startBlock: 0 });
    // its three foreign logs are in its one block
    expect(ds.headers[0]!.logsBloom).not.toBe(empty);
    expect(defaults.headers.some((h) => h.logsBloom === empty)).toBe(true);
  });
});

describe('synthetic dataset: headers', () => {
  const { headers } = defaults;
  const start = SYNTHETIC_DEFAULTS.startBlock;

  it('has one header per block of the range, in ascending order', () => {
    expect(headers).toHaveLength(SYNTHETIC_DEFAULTS.blocks);
    expect(headers.map((h) => h.number)).toEqual(headers.map((_, i) => `0x${(start + i).toString(16)}`));
  });

  it('every header hashes to its own hash', () => {
    expect(headers.filter((h) => computeHeaderHash(h) !== h.hash)).toEqual([]);
  });

  it('every header links to the previous one by parentHash', () => {
    expect(headers.slice(1).map((h) => h.parentHash)).toEqual(headers.slice(0, -1).map((h) => h.hash));
    expect(headers[0]!.parentHash).toMatch(/^0x[0-9a-f]{64}$/);
    expect(headers[0]!.parentHash).not.toBe(ZERO_HASH);
  });

  it('starts from a zero parent hash at block 0', () => {
    const ds = small({ startBlock: 0, blocks: 20, transfers: 10 });
    expect(ds.headers[0]!.number).toBe('0x0');
    expect(ds.headers[0]!.parentHash).toBe(ZERO_HASH);
  });

  it('has exactly Erigon’s keys, in Erigon’s order', () => {
    const orders = new Set(headers.map((h) => Object.keys(h).join(',')));
    expect([...orders]).toEqual([ERIGON_HEADER_KEYS.join(',')]);
  });

  it('spaces timestamps 12 seconds apart', () => {
    expect(headers.map((h) => num(h, 'timestamp'))).toEqual(headers.map((_, i) => BigInt(TIMESTAMP_BASE + BLOCK_TIME_SECONDS * i)));
  });

  it('writes quantities as minimal hex and data with the right sizes, lower-case', () => {
    const quantities = [...['difficulty', 'number', 'gasLimit', 'gasUsed', 'timestamp'], ...['baseFeePerGas', 'blobGasUsed', 'excessBlobGas']] as const;
    const hashes = [...['parentHash', 'stateRoot', 'transactionsRoot', 'receiptsRoot', 'mixHash'], ...['withdrawalsRoot', 'parentBeaconBlockRoot', 'requestsHash']] as const;
    const bad: string[] = [];
    for (const h of headers) {
      const at = `block ${h.number}`;
      for (const k of quantities) if (h[k] !== null && !isHexQuantity(h[k])) bad.push(`${at} ${k}`);
      for (const k of hashes) if (h[k] !== null && !isHexData(h[k], 32)) bad.push(`${at} ${k}`);
      if (!isHexData(h.logsBloom!, 256)) bad.push(`${at} logsBloom`);
      if (!isHexData(h.miner!, 20)) bad.push(`${at} miner`);
      if (!isHexData(h.nonce!, 8)) bad.push(`${at} nonce`);
      if (!isHexData(h.extraData!) || h.extraData!.length > 2 + 64) bad.push(`${at} extraData`);
      for (const [k, v] of Object.entries(h)) if (v !== null && v !== v.toLowerCase()) bad.push(`${at} ${k} case`);
    }
    expect(bad).toEqual([]);
  });

  it('has realistic constant and bounded fields', () => {
    const bad = headers.filter(
      (h) =>
        h.sha3Uncles !== EMPTY_UNCLES_HASH ||
        num(h, 'gasUsed') > num(h, 'gasLimit') ||
        num(h, 'gasLimit') < 29_000_000n ||
        num(h, 'gasLimit') > 31_000_000n ||
        h.blockAccessListHash !== null,
    );
    expect(bad).toEqual([]);
    expect(headers.some((h) => h.logsBloom !== `0x${'00'.repeat(256)}`)).toBe(true);
    expect(new Set(headers.map((h) => h.miner)).size).toBeLessThanOrEqual(10);
    expect(new Set(headers.map((h) => h.miner)).size).toBeGreaterThan(1);
  });

  it('puts every fork boundary inside the range, in fork order', () => {
    const f = forkBoundaries(SYNTHETIC_DEFAULTS);
    const order = [start, f.london, f.paris, f.shanghai, f.cancun, f.prague, start + SYNTHETIC_DEFAULTS.blocks - 1];
    for (let i = 1; i < order.length; i++) expect(order[i]!).toBeGreaterThan(order[i - 1]!);
    expect(forkBoundaries({ startBlock: 100, blocks: 1000 })).toEqual({
      london: 300,
      paris: 450,
      shanghai: 600,
      cancun: 800,
      prague: 950,
    });
  });

  it('sets each fork field exactly from its fork boundary on', () => {
    const f = forkBoundaries(SYNTHETIC_DEFAULTS);
    const forkOf: Record<string, number> = {
      baseFeePerGas: f.london,
      withdrawalsRoot: f.shanghai,
      blobGasUsed: f.cancun,
      excessBlobGas: f.cancun,
      parentBeaconBlockRoot: f.cancun,
      requestsHash: f.prague,
      blockAccessListHash: Number.POSITIVE_INFINITY,
    };
    expect(Object.keys(forkOf).sort()).toEqual([...FORK_KEYS].sort());
    const bad: string[] = [];
    for (const h of headers) {
      const n = Number(num(h, 'number'));
      for (const [key, boundary] of Object.entries(forkOf)) {
        if ((h[key as keyof HeaderJson] === null) !== n < boundary) bad.push(`${key} at ${n}`);
      }
    }
    expect(bad).toEqual([]);
    const f2 = forkBoundaries(SYNTHETIC_DEFAULTS);
    const at = (n: number) => headers[n - start]!;
    expect(at(f2.london - 1).baseFeePerGas).toBeNull();
    expect(at(f2.london).baseFeePerGas).not.toBeNull();
    expect(at(f2.prague - 1).requestsHash).toBeNull();
    expect(at(f2.prague).requestsHash).not.toBeNull();
  });

  it('is proof-of-work before the merge and proof-of-stake after it', () => {
    const { paris } = forkBoundaries(SYNTHETIC_DEFAULTS);
    const pow = headers.filter((h) => Number(num(h, 'number')) < paris);
    const pos = headers.filter((h) => Number(num(h, 'number')) >= paris);
    expect(pow.length).toBeGreaterThan(0);
    expect(pos.length).toBeGreaterThan(0);
    expect(pow.filter((h) => num(h, 'difficulty') === 0n || h.nonce === '0x0000000000000000')).toEqual([]);
    expect(new Set(pow.map((h) => h.nonce)).size).toBe(pow.length);
    expect(pos.filter((h) => h.difficulty !== '0x0' || h.nonce !== '0x0000000000000000')).toEqual([]);
    expect(new Set(pos.map((h) => h.mixHash)).size).toBe(pos.length);
  });

  it('covers every fork even in a short chain', () => {
    const ds = small({ blocks: 20, transfers: 30 });
    const f = forkBoundaries({ ...SYNTHETIC_DEFAULTS, blocks: 20 });
    const last = ds.headers.at(-1)!;
    expect(last.requestsHash).not.toBeNull();
    expect(ds.headers[0]!.baseFeePerGas).toBeNull();
    expect(f.london).toBeGreaterThan(SYNTHETIC_DEFAULTS.startBlock);
    for (const h of ds.headers) expect(computeHeaderHash(h)).toBe(h.hash);
  });

  it("makes Avalanche's headers (chain 43114) as coreth's nodes answer them, each verified by its rule; the same draws otherwise", () => {
    const options = { ...SYNTHETIC_DEFAULTS, blocks: 20, transfers: 30 };
    const ethereum = generateSyntheticDataset(options);
    const avalanche = generateSyntheticDataset(options, { chainId: 43114 });
    expect(avalanche.headers.map((h) => verifyChainHeader(43114, h))).toEqual(
      avalanche.headers.map((h) => ({ block: Number(BigInt(h.number!)), rule: 'avalanche-coreth', verified: true })),
    );
    // coreth's fields, no withdrawals or requests; an Ethereum header of the same draws fails coreth's rule
    const last = avalanche.headers.at(-1) as Record<string, unknown>;
    expect(last).toMatchObject({ extDataHash: expect.stringMatching(/^0x[0-9a-f]{64}$/), extDataGasUsed: '0x0', blockGasCost: '0x0', withdrawalsRoot: null, requestsHash: null });
    expect(verifyChainHeader(43114, ethereum.headers.at(-1)!).verified).toBe(false);
    // the same chain of draws: transfers and fields alike but for the block hashes
    const withoutHashes = (ds: typeof ethereum) => ds.transfers.map(({ blockHash: _hash, ...t }) => t);
    expect(withoutHashes(avalanche)).toEqual(withoutHashes(ethereum));
    expect(avalanche.headers.map((h) => h.stateRoot)).toEqual(ethereum.headers.map((h) => h.stateRoot));
    // other chains take Ethereum's headers as they are
    expect(generateSyntheticDataset(options, { chainId: 8453 })).toEqual(ethereum);
    // a dataset line (devnet dump, /__truth/headers.jsonl) keeps coreth's fields: read back, it verifies
    expect(verifyChainHeader(43114, JSON.parse(headerLine(avalanche.headers.at(-1)!)) as Record<string, unknown>).verified).toBe(true);
  });
});

describe('synthetic dataset: tokens', () => {
  const symbolOf = (t: Dataset['tokens'][number]) => t.contractSymbol ?? t.contractSymbols;

  it('has the requested number of contracts, with lower-case 20-byte addresses', () => {
    const contracts = new Set([...defaults.tokens.map((t) => t.contractAddress), ...defaults.transfers.map((t) => t.contractAddress)]);
    expect(contracts.size).toBe(SYNTHETIC_DEFAULTS.tokens);
    for (const c of contracts) expect(c).toMatch(/^0x[0-9a-f]{40}$/);
  });

  it('covers decimals 0, 6, 8 and 18 as decimal text', () => {
    expect(new Set(defaults.tokens.map((t) => t.contractDecimals))).toEqual(new Set(['0', '6', '8', '18']));
  });

  it('leaves one token out of tokens.jsonl (unknown metadata) although it has transfers', () => {
    const listed = new Set(defaults.tokens.map((t) => t.contractAddress));
    const unlisted = new Set(defaults.transfers.map((t) => t.contractAddress).filter((c) => !listed.has(c)));
    expect(unlisted.size).toBe(1);
    expect(defaults.tokens).toHaveLength(SYNTHETIC_DEFAULTS.tokens - 1);
  });

  it('spells one symbol contractSymbols, and has a non-ASCII name', () => {
    const odd = defaults.tokens.filter((t) => 'contractSymbols' in t);
    expect(odd).toHaveLength(1);
    expect(odd[0]).not.toHaveProperty('contractSymbol');
    expect(Object.keys(odd[0]!)).toEqual(['contractAddress', 'contractName', 'contractSymbols', 'contractDecimals']);
    expect(defaults.tokens.some((t) => /[^\x20-\x7e]/.test(t.contractName))).toBe(true);
    for (const t of defaults.tokens) expect(symbolOf(t)).toBeTruthy();
  });

  it('covers the awkward cases with only three tokens', () => {
    const ds = small({ tokens: 3 });
    expect(ds.tokens).toHaveLength(2);
    expect(ds.tokens[0]!.contractDecimals).toBe('18');
    expect(ds.tokens[0]!.contractName).toBe('Éther Synthétique ✓');
    expect(ds.tokens[1]!.contractDecimals).toBe('6');
    expect(ds.tokens[1]).toHaveProperty('contractSymbols');
    expect(new Set(ds.transfers.map((t) => t.contractAddress)).size).toBe(3);
  });

  it('cycles decimals through 18, 6, 8, 0 with plain names beyond the fifth token', () => {
    const ds = small({ tokens: 10 });
    expect(ds.tokens.slice(4).map((t) => t.contractDecimals)).toEqual(['18', '6', '8', '0', '18']);
    expect(ds.tokens.slice(4).every((t) => /^[\x20-\x7e]+$/.test(t.contractName))).toBe(true);
  });
});

describe('synthetic dataset: transfers', () => {
  const { transfers, headers } = defaults;

  it('has exactly the requested number of transfers', () => {
    expect(transfers).toHaveLength(SYNTHETIC_DEFAULTS.transfers);
    for (const n of [0, 1, 2, 3, 99, 501, 777]) expect(small({ transfers: n }).transfers).toHaveLength(n);
    expect(small({ blocks: 1, transfers: 1200 }).transfers).toHaveLength(1200);
  });

  it('writes every transfer with the dataset keys, in order', () => {
    const orders = new Set(transfers.map((t) => Object.keys(t).join(',')));
    expect([...orders]).toEqual([TRANSFER_KEYS.join(',')]);
  });

  it('is sorted by block number, then log index', () => {
    const unsorted = transfers.filter((b, i) => {
      const a = transfers[i - 1];
      return a && !(a.blockNumber < b.blockNumber || (a.blockNumber === b.blockNumber && a.logIndex < b.logIndex));
    });
    expect(unsorted).toEqual([]);
  });

  it('never repeats (transactionHash, logIndex) or (blockNumber, logIndex)', () => {
    expect(new Set(transfers.map((t) => `${t.transactionHash}/${t.logIndex}`)).size).toBe(transfers.length);
    expect(new Set(transfers.map((t) => `${t.blockNumber}/${t.logIndex}`)).size).toBe(transfers.length);
  });

  it('keeps transaction indexes in step with log indexes, and a transaction in one place', () => {
    const seen = new Map<string, { block: number; index: number; count: number }>();
    const bad: TransferRecord[] = [];
    for (let i = 0; i < transfers.length; i++) {
      const t = transfers[i]!;
      const prev = transfers[i - 1];
      if (prev && prev.blockNumber === t.blockNumber && t.transactionIndex < prev.transactionIndex) bad.push(t);
      const tx = seen.get(t.transactionHash);
      if (tx) {
        if (tx.block !== t.blockNumber || tx.index !== t.transactionIndex) bad.push(t);
        tx.count++;
      } else seen.set(t.transactionHash, { block: t.blockNumber, index: t.transactionIndex, count: 1 });
    }
    expect(bad).toEqual([]);
    const shared = [...seen.values()].filter((tx) => tx.count > 1).length;
    expect(shared).toBeGreaterThan(100);
    expect(seen.size).toBeLessThan(transfers.length);
  });

  it('leaves gaps in log indexes for other logs', () => {
    const gaps = transfers.filter((t, i) => {
      const prev = transfers[i - 1];
      return prev && prev.blockNumber === t.blockNumber && t.logIndex > prev.logIndex + 1;
    });
    expect(gaps.length).toBeGreaterThan(100);
  });

  it('matches every transfer’s block hash and timestamp with its header', () => {
    const byNumber = new Map(headers.map((h) => [Number(h.number), h]));
    const bad = transfers.filter((t) => {
      const h = byNumber.get(t.blockNumber);
      return !h || t.blockHash !== h.hash || t.blockTimestamp !== new Date(Number(h.timestamp) * 1000).toISOString();
    });
    expect(bad).toEqual([]);
    expect(transfers[0]!.blockTimestamp).toMatch(/^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\.000Z$/);
  });

  it('writes values as decimal text from 0 to 2^256−1, including both ends', () => {
    expect(transfers.filter((t) => !/^(0|[1-9]\d*)$/.test(t.value) || BigInt(t.value) > MAX_UINT256)).toEqual([]);
    const values = new Set(transfers.map((t) => t.value));
    expect(values.has('0')).toBe(true);
    expect(values.has(MAX_TEXT)).toBe(true);
    expect(MAX_UINT256.toString()).toBe(MAX_TEXT);
  });

  it('has 0 and 2^256−1 among as few as two transfers', () => {
    for (const seed of [1, 2, 3]) {
      const values = small({ seed, transfers: 2 })
        .transfers.map((t) => t.value)
        .sort();
      expect(values).toEqual(['0', MAX_TEXT]);
    }
  });

  it('scales plausible values by the token decimals', () => {
    const decimalsOf = new Map(defaults.tokens.map((t) => [t.contractAddress, Number(t.contractDecimals)]));
    const median = (list: TransferRecord[]) => {
      const lengths = list.map((t) => t.value.length).sort((a, b) => a - b);
      return lengths[Math.floor(lengths.length / 2)]!;
    };
    const of = (d: number) => transfers.filter((t) => decimalsOf.get(t.contractAddress) === d);
    expect(median(of(18))).toBeGreaterThan(median(of(6)));
    expect(median(of(6))).toBeGreaterThan(median(of(0)));
  });

  it('uses lower-case addresses from a pool, with repeated senders and receivers', () => {
    const address = /^0x[0-9a-f]{40}$/;
    const hash = /^0x[0-9a-f]{64}$/;
    const bad = transfers.filter((t) => !address.test(t.fromAddress) || !address.test(t.toAddress) || !hash.test(t.transactionHash) || !hash.test(t.blockHash));
    expect(bad).toEqual([]);
    const senders = new Map<string, number>();
    for (const t of transfers) senders.set(t.fromAddress, (senders.get(t.fromAddress) ?? 0) + 1);
    expect(Math.max(...senders.values())).toBeGreaterThan(50);
    expect(new Set(transfers.map((t) => t.toAddress)).size).toBeLessThan(transfers.length / 4);
  });

  it('is skewed: most blocks empty, and hot blocks with hundreds of transfers of one token', () => {
    const perBlock = new Map<number, number>();
    const perBlockToken = new Map<string, number>();
    for (const t of transfers) {
      perBlock.set(t.blockNumber, (perBlock.get(t.blockNumber) ?? 0) + 1);
      const key = `${t.blockNumber}/${t.contractAddress}`;
      perBlockToken.set(key, (perBlockToken.get(key) ?? 0) + 1);
    }
    expect(SYNTHETIC_DEFAULTS.blocks - perBlock.size).toBeGreaterThanOrEqual(SYNTHETIC_DEFAULTS.blocks / 2);
    expect(Math.max(...perBlockToken.values())).toBeGreaterThanOrEqual(100);
  });

  it('makes some tokens far more popular than others', () => {
    const perToken = new Map<string, number>();
    for (const t of transfers) perToken.set(t.contractAddress, (perToken.get(t.contractAddress) ?? 0) + 1);
    const counts = [...perToken.values()].sort((a, b) => b - a);
    expect(counts[0]!).toBeGreaterThan(3 * counts.at(-1)!);
  });
});

describe('synthetic dataset: realistic amounts', () => {
  const realistic = generateSyntheticDataset(SYNTHETIC_DEFAULTS, { amounts: 'realistic' });
  const withoutValues = (ds: Dataset) => ({ ...ds, transfers: ds.transfers.map(({ value: _, ...rest }) => rest) });
  // the unlisted token (no line in tokens.jsonl) moves 18-decimal amounts
  const listed = new Map(realistic.tokens.map((t) => [t.contractAddress, Number(t.contractDecimals)]));
  const decimalsOf = (t: TransferRecord) => listed.get(t.contractAddress) ?? 18;
  const unit = (t: TransferRecord) => 10n ** BigInt(decimalsOf(t));

  it('changes only the values: headers, tokens, blocks, addresses and counts equal the default profile’s', () => {
    expect(withoutValues(realistic)).toEqual(withoutValues(defaults));
    expect(realistic.transfers.filter((t, i) => t.value !== defaults.transfers[i]!.value).length).toBeGreaterThan(realistic.transfers.length * 0.99);
  });

  it('keeps every value within 10^(decimals+7), with neither 2^256−1 nor random 256-bit values', () => {
    expect(realistic.transfers.filter((t) => BigInt(t.value) > 10n * 1_000_000n * unit(t))).toEqual([]);
    expect(realistic.transfers.filter((t) => t.value === MAX_TEXT)).toEqual([]);
  });

  it('has fractional token amounts, and only the one forced zero', () => {
    const fractional = realistic.transfers.filter((t) => decimalsOf(t) > 0 && BigInt(t.value) % unit(t) !== 0n);
    expect(fractional.length).toBeGreaterThan(realistic.transfers.length / 10);
    expect(realistic.transfers.filter((t) => t.value === '0')).toHaveLength(1);
  });

  it('is reproducible, and differs by seed like the default profile', () => {
    const again = small({}, { amounts: 'realistic' });
    expect(again).toEqual(small({}, { amounts: 'realistic' }));
    expect(small({ seed: 2 }, { amounts: 'realistic' }).transfers.map((t) => t.value)).not.toEqual(again.transfers.map((t) => t.value));
  });
});
