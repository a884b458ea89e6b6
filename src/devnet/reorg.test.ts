import { readFileSync } from 'node:fs';
import { describe, expect, it } from 'vitest';
import { FIXTURE_DIR } from '../../test/helpers/fixtures.ts';
import type { Dataset, TokenRecord, TransferRecord } from '../dataset/types.ts';
import type { HeaderJson } from '../eth/header-fields.ts';
import { verifyChainHeader } from '../eth/chain-rules.ts';
import { computeHeaderHash } from '../eth/header-hash.ts';
import { createBloomBitsCache, missingFromBloom } from '../eth/logs-bloom.ts';
import { reorgDataset } from './reorg.ts';
import { generateSyntheticDataset, SYNTHETIC_DEFAULTS } from './synthetic.ts';

function readJsonl<T>(name: string): T[] {
  return readFileSync(`${FIXTURE_DIR}/${name}`, 'utf8')
    .split('\n')
    .filter(Boolean)
    .map((line) => JSON.parse(line) as T);
}

const mainnet: Dataset = {
  headers: readJsonl<HeaderJson>('headers.jsonl'),
  transfers: readJsonl<TransferRecord>('transfers.jsonl'),
  tokens: readJsonl<TokenRecord>('tokens.jsonl'),
};
const synthetic = generateSyntheticDataset({ ...SYNTHETIC_DEFAULTS, blocks: 300, transfers: 6000 });
const DEPTH = 12;

const numberOf = (h: HeaderJson): number => Number(BigInt(h.number!));
const txKey = (t: TransferRecord): string => `${t.transactionHash}/${t.logIndex}`;
const isoOf = (h: HeaderJson): string => new Date(Number(BigInt(h.timestamp!)) * 1000).toISOString();

/** Everything a consistent dataset satisfies; returns the problems found. */
function problems(ds: Dataset): string[] {
  const out: string[] = [];
  const byHash = new Map(ds.headers.map((h) => [h.hash, h]));
  const byNumber = new Map(ds.headers.map((h) => [numberOf(h), h]));
  for (const h of ds.headers) {
    if (computeHeaderHash(h) !== h.hash) out.push(`header ${numberOf(h)} does not hash to its hash`);
    const parent = byNumber.get(numberOf(h) - 1);
    if (parent && h.parentHash !== parent.hash) out.push(`header ${numberOf(h)} does not link to its parent`);
  }
  const keys = new Set<string>();
  const blockLogs = new Set<string>();
  for (const t of ds.transfers) {
    const h = byHash.get(t.blockHash);
    if (!h) out.push(`transfer ${txKey(t)} has no header`);
    else if (numberOf(h) !== t.blockNumber || isoOf(h) !== t.blockTimestamp) {
      out.push(`transfer ${txKey(t)} disagrees with its header`);
    }
    if (keys.has(txKey(t))) out.push(`duplicate (transactionHash, logIndex) ${txKey(t)}`);
    keys.add(txKey(t));
    const blockLog = `${t.blockNumber}/${t.logIndex}`;
    if (blockLogs.has(blockLog)) out.push(`duplicate (blockNumber, logIndex) ${blockLog}`);
    blockLogs.add(blockLog);
  }
  ds.transfers.forEach((b, i) => {
    const a = ds.transfers[i - 1];
    if (a && (a.blockNumber > b.blockNumber || (a.blockNumber === b.blockNumber && a.logIndex >= b.logIndex))) {
      out.push(`transfers out of order at ${i}`);
    }
    if (a && a.blockNumber === b.blockNumber && a.transactionIndex > b.transactionIndex) {
      out.push(`transaction index goes back at ${i}`);
    }
  });
  const txPlace = new Map<string, string>();
  for (const t of ds.transfers) {
    const place = `${t.blockNumber}/${t.transactionIndex}`;
    if ((txPlace.get(t.transactionHash) ?? place) !== place) out.push(`transaction ${t.transactionHash} in two places`);
    txPlace.set(t.transactionHash, place);
  }
  return out;
}

/** Transfers that their block's bloom rules out, each with what it lacks. */
function outOfBloom(ds: Dataset): string[] {
  const blooms = new Map(ds.headers.map((h) => [h.hash, Buffer.from(h.logsBloom!.slice(2), 'hex')]));
  const bits = createBloomBitsCache();
  const out: string[] = [];
  for (const t of ds.transfers) {
    const missing = missingFromBloom(blooms.get(t.blockHash)!, t, bits);
    if (missing) out.push(`transfer ${txKey(t)} in block ${t.blockNumber}: ${missing}`);
  }
  return out;
}

/** The headers of `after` whose bloom lacks a bit that the header of the same number had in `before`. */
function lostBloomBits(before: Dataset, after: Dataset): string[] {
  const old = new Map(before.headers.map((h) => [numberOf(h), Buffer.from(h.logsBloom!.slice(2), 'hex')]));
  return after.headers
    .filter((h) => {
      const was = old.get(numberOf(h))!;
      return !Buffer.from(h.logsBloom!.slice(2), 'hex').every((byte, i) => (byte & was[i]!) === was[i]!);
    })
    .map((h) => `header ${numberOf(h)}`);
}

/** How the transfers of the replaced blocks fared. */
function outcome(before: Dataset, after: Dataset, orphaned: readonly HeaderJson[]) {
  const oldHashes = new Set(orphaned.map((h) => h.hash));
  const affected = before.transfers.filter((t) => oldHashes.has(t.blockHash));
  const afterByTx = new Map<string, TransferRecord[]>();
  for (const t of after.transfers) afterByTx.set(t.transactionHash, [...(afterByTx.get(t.transactionHash) ?? []), t]);
  const beforeTx = new Set(before.transfers.map((t) => t.transactionHash));
  const dropped = affected.filter((t) => !afterByTx.has(t.transactionHash));
  const moved = affected.filter((t) => afterByTx.get(t.transactionHash)?.some((u) => u.blockNumber !== t.blockNumber));
  const kept = affected.filter((t) => afterByTx.get(t.transactionHash)?.some((u) => u.blockNumber === t.blockNumber && u.logIndex === t.logIndex));
  const added = after.transfers.filter((t) => !beforeTx.has(t.transactionHash));
  return { affected, dropped, moved, kept, added };
}

describe('reorg of a synthetic chain', () => {
  const before = structuredClone(synthetic);
  const { dataset: after, orphaned } = reorgDataset(synthetic, DEPTH, 7);
  const fork = synthetic.headers.length - DEPTH;

  it('leaves its input unchanged', () => {
    expect(synthetic).toEqual(before);
  });

  it('changes hashes exactly from the fork point on, keeping numbers and timestamps', () => {
    expect(after.headers).toHaveLength(synthetic.headers.length);
    expect(after.headers.slice(0, fork)).toEqual(synthetic.headers.slice(0, fork));
    after.headers.slice(fork).forEach((h, i) => {
      const old = synthetic.headers[fork + i]!;
      expect(h.hash).not.toBe(old.hash);
      expect(h.number).toBe(old.number);
      expect(h.timestamp).toBe(old.timestamp);
      expect(Object.keys(h)).toEqual(Object.keys(old));
      for (const key of Object.keys(h) as (keyof HeaderJson)[]) expect(h[key] === null).toBe(old[key] === null);
    });
  });

  it('keeps every header hashing to its hash and linked to its parent', () => {
    expect(problems(after)).toEqual([]);
    expect(after.headers[fork]!.parentHash).toBe(synthetic.headers[fork - 1]!.hash);
  });

  it('gives each new block a true bloom: the old block’s bits, and those of every transfer it now holds', () => {
    expect(outOfBloom(synthetic)).toEqual([]);
    expect(outOfBloom(after)).toEqual([]);
    expect(lostBloomBits(synthetic, after)).toEqual([]);
    // blocks that gained transfers (moved or new ones) gained bits
    const gained = after.headers.slice(fork).filter((h, i) => h.logsBloom !== synthetic.headers[fork + i]!.logsBloom);
    expect(gained.length).toBeGreaterThan(0);
    for (const depth of [1, 150, synthetic.headers.length]) {
      const other = reorgDataset(synthetic, depth, depth).dataset;
      expect(outOfBloom(other), `depth ${depth}`).toEqual([]);
      expect(outOfBloom(reorgDataset(other, 3, 9).dataset), `depth ${depth}, then 3`).toEqual([]);
    }
  });

  it('reports the replaced headers as orphaned', () => {
    expect(orphaned).toEqual(synthetic.headers.slice(fork));
    const live = new Set(after.headers.map((h) => h.hash));
    expect(orphaned.filter((h) => live.has(h.hash))).toEqual([]);
  });

  it('leaves the transfers below the fork point untouched and the tokens unchanged', () => {
    const forkNumber = numberOf(synthetic.headers[fork]!);
    const below = (ds: Dataset) => ds.transfers.filter((t) => t.blockNumber < forkNumber);
    expect(below(after)).toEqual(below(synthetic));
    expect(after.tokens).toEqual(synthetic.tokens);
    const oldHashes = new Set(orphaned.map((h) => h.hash));
    expect(after.transfers.filter((t) => oldHashes.has(t.blockHash))).toEqual([]);
  });

  it('drops some transfers, moves some, keeps the rest and adds new ones', () => {
    const { affected, dropped, moved, kept, added } = outcome(synthetic, after, orphaned);
    expect(affected.length).toBeGreaterThan(20);
    expect(dropped.length).toBeGreaterThan(0);
    expect(moved.length).toBeGreaterThan(0);
    expect(kept.length).toBeGreaterThan(affected.length / 2);
    expect(added.length).toBeGreaterThanOrEqual(1);
    expect(dropped.length + moved.length + kept.length).toBe(affected.length);
    expect(after.transfers.length).toBe(synthetic.transfers.length - dropped.length + added.length);
    const contracts = new Set(synthetic.transfers.map((t) => t.contractAddress));
    expect(added.filter((t) => !contracts.has(t.contractAddress))).toEqual([]);
    expect(added.filter((t) => !/^(0|[1-9]\d*)$/.test(t.value))).toEqual([]);
  });

  it('keeps a moved transfer’s transaction hash and value, with new indexes in its new block', () => {
    const { moved } = outcome(synthetic, after, orphaned);
    for (const t of moved) {
      const now = after.transfers.filter((u) => u.transactionHash === t.transactionHash);
      expect(now.some((u) => u.value === t.value && u.contractAddress === t.contractAddress)).toBe(true);
      expect(now.every((u) => u.blockNumber !== t.blockNumber)).toBe(true);
    }
  });

  it('is deterministic for the same dataset, depth and seed', () => {
    expect(reorgDataset(synthetic, DEPTH, 7)).toEqual({ dataset: after, orphaned });
    const other = reorgDataset(synthetic, DEPTH, 8);
    expect(other.dataset.headers.at(-1)!.hash).not.toBe(after.headers.at(-1)!.hash);
  });

  it('can replace a single block, or the whole chain', () => {
    const one = reorgDataset(synthetic, 1, 1);
    expect(problems(one.dataset)).toEqual([]);
    expect(one.orphaned).toEqual([synthetic.headers.at(-1)]);
    expect(one.dataset.headers.slice(0, -1)).toEqual(synthetic.headers.slice(0, -1));
    expect(outcome(synthetic, one.dataset, one.orphaned).added.length).toBeGreaterThanOrEqual(1);

    const all = reorgDataset(synthetic, synthetic.headers.length, 2);
    expect(problems(all.dataset)).toEqual([]);
    expect(all.dataset.headers[0]!.parentHash).toBe(synthetic.headers[0]!.parentHash);
    const oldHashes = new Set(synthetic.headers.map((h) => h.hash));
    expect(all.dataset.headers.filter((h) => oldHashes.has(h.hash))).toEqual([]);
  });

  it('can be applied again on its own result', () => {
    const twice = reorgDataset(after, 3, 9);
    expect(problems(twice.dataset)).toEqual([]);
    expect(twice.orphaned).toEqual(after.headers.slice(-3));
  });

  it('refuses a depth below 1, above the number of headers, or not an integer', () => {
    expect(() => reorgDataset(synthetic, 0, 1)).toThrow(RangeError);
    expect(() => reorgDataset(synthetic, synthetic.headers.length + 1, 1)).toThrow(RangeError);
    expect(() => reorgDataset(synthetic, 1.5, 1)).toThrow(RangeError);
    expect(() => reorgDataset(synthetic, 0, 1)).toThrow(/from 1 to 300/);
  });
});

describe('reorg of the real mainnet dataset', () => {
  const byNumber = [...mainnet.headers].sort((a, b) => numberOf(a) - numberOf(b));
  const depth = 9; // blocks 17000000 … 19900000, holding 247 transfers
  const { dataset: after, orphaned } = reorgDataset(mainnet, depth, 3);
  const replacedNumbers = new Set(byNumber.slice(-depth).map(numberOf));

  it('the mainnet dataset is consistent to start with', () => {
    expect(problems(mainnet)).toEqual([]);
  });

  it('replaces the highest-numbered headers and keeps the rest in place', () => {
    expect(orphaned).toEqual(byNumber.slice(-depth));
    after.headers.forEach((h, i) => {
      const old = mainnet.headers[i]!;
      expect(h.number).toBe(old.number);
      if (replacedNumbers.has(numberOf(old))) expect(h.hash).not.toBe(old.hash);
      else expect(h).toBe(old);
    });
  });

  it('keeps the real blooms’ bits (the blocks’ other logs) and adds those of the transfers moved in or added', () => {
    expect(outOfBloom(mainnet)).toEqual([]);
    expect(outOfBloom(after)).toEqual([]);
    expect(lostBloomBits(mainnet, after)).toEqual([]);
  });

  it('relinks a replaced header to its replaced parent, and keeps other parents', () => {
    expect(problems(after)).toEqual([]);
    const find = (ds: Dataset, n: number) => ds.headers.find((h) => numberOf(h) === n)!;
    expect(find(after, 19665756).parentHash).toBe(find(after, 19665755).hash);
    expect(find(after, 19665756).parentHash).not.toBe(find(mainnet, 19665756).parentHash);
    expect(find(after, 19900000).parentHash).toBe(find(mainnet, 19900000).parentHash);
  });

  it('drops, moves, keeps and adds transfers in the replaced blocks only', () => {
    const { affected, dropped, moved, kept, added } = outcome(mainnet, after, orphaned);
    expect(affected.length).toBe(247);
    expect(dropped.length).toBeGreaterThan(0);
    expect(moved.length).toBeGreaterThan(0);
    expect(kept.length).toBeGreaterThan(0);
    expect(added.length).toBeGreaterThanOrEqual(1);
    const firstReplaced = Math.min(...replacedNumbers);
    const below = (ds: Dataset) => ds.transfers.filter((t) => t.blockNumber < firstReplaced);
    expect(below(after)).toEqual(below(mainnet));
    const strays = after.transfers.filter((t) => t.blockNumber >= firstReplaced && !replacedNumbers.has(t.blockNumber));
    expect(strays).toEqual([]);
    expect(after.tokens).toEqual(mainnet.tokens);
  });
});

describe("a reorg of another chain's headers", () => {
  it("hashes the new fork by the chain's rule: Avalanche's stay verifiable", () => {
    const avalanche = generateSyntheticDataset({ ...SYNTHETIC_DEFAULTS, blocks: 60, transfers: 600 }, { chainId: 43114 });
    const { dataset } = reorgDataset(avalanche, 8, 3, 43114);
    const fork = dataset.headers.slice(-8);
    expect(fork.map((h) => h.hash)).not.toEqual(avalanche.headers.slice(-8).map((h) => h.hash));
    expect(fork.map((h) => verifyChainHeader(43114, h).verified)).toEqual(fork.map(() => true));
  });
});
