import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { Dataset } from '../src/dataset/types.ts';
import { headerLine } from '../src/dataset/write.ts';
import type { HeaderJson } from '../src/eth/header-fields.ts';
import { computeHeaderHash } from '../src/eth/header-hash.ts';
import { forkBoundaries, generateSyntheticDataset } from '../src/devnet/synthetic.ts';
import { allTransfers, rpc, startDevnet, type RunningDevnet } from './helpers/devnet.ts';

const OPTIONS = { seed: 3, blocks: 400, tokens: 7, transfers: 3000, startBlock: 1000 };
const MAX = ((1n << 256n) - 1n).toString();

async function headersByNumber(base: string, from: number, to: number): Promise<HeaderJson[]> {
  const calls = [];
  for (let n = from; n <= to; n++) calls.push({ jsonrpc: '2.0', id: n, method: 'erigon_getHeaderByNumber', params: [`0x${n.toString(16)}`] });
  const { body } = await rpc(base, calls);
  return (body as { id: number; result: HeaderJson }[]).sort((a, b) => a.id - b.id).map((a) => a.result);
}

async function truth(origin: string, file: string): Promise<Record<string, unknown>[]> {
  const text = await (await fetch(`${origin}/__truth/${file}`)).text();
  return text
    .split('\n')
    .filter(Boolean)
    .map((l) => JSON.parse(l) as Record<string, unknown>);
}

describe('reference server serving a synthetic chain', () => {
  let dataset: Dataset;
  let devnet: RunningDevnet;
  beforeAll(async () => {
    dataset = generateSyntheticDataset(OPTIONS);
    devnet = await startDevnet(dataset);
  });
  afterAll(() => devnet.close());

  it('serves headers that any verifier accepts: keccak256(RLP) is the hash, parents link', async () => {
    const headers = await headersByNumber(devnet.base, 1000, 1399);
    expect(headers).toHaveLength(400);
    headers.forEach((h, i) => {
      expect(computeHeaderHash(h)).toBe(h.hash);
      if (i > 0) expect(h.parentHash).toBe(headers[i - 1]!.hash);
    });
  });

  it('serves fields true to each fork', async () => {
    const forks = forkBoundaries(OPTIONS);
    const headers = await headersByNumber(devnet.base, 1000, 1399);
    const at = (n: number) => headers[n - 1000]!;
    expect(at(forks.london - 1).baseFeePerGas).toBeNull();
    expect(at(forks.london).baseFeePerGas).toMatch(/^0x/);
    expect(at(forks.paris - 1).difficulty).not.toBe('0x0');
    expect(at(forks.paris).difficulty).toBe('0x0');
    expect(at(forks.shanghai - 1).withdrawalsRoot).toBeNull();
    expect(at(forks.shanghai).withdrawalsRoot).toMatch(/^0x[0-9a-f]{64}$/);
    expect(at(forks.cancun - 1).parentBeaconBlockRoot).toBeNull();
    expect(at(forks.cancun)).toMatchObject({ blobGasUsed: expect.any(String), excessBlobGas: expect.any(String) });
    expect(at(forks.prague - 1).requestsHash).toBeNull();
    expect(at(forks.prague).requestsHash).toMatch(/^0x/);
    expect(headers.every((h) => h.blockAccessListHash === null)).toBe(true);
  });

  it('serves varied token metadata: both symbol spellings, unknown metadata, non-ASCII names, 0 to 2^256−1', async () => {
    const contracts = [...new Set(dataset.transfers.map((t) => t.contractAddress))];
    const seen = { symbols: 0, symbol: 0, unknown: 0, nonAscii: 0, decimals: new Set<string>(), max: false, zero: false };
    for (const contract of contracts) {
      const pages = await allTransfers(devnet.base, { contractAddress: contract, pageSize: 1000 });
      const first = pages[0]!;
      if ('contractSymbols' in first) seen.symbols++;
      else seen.symbol++;
      if (first.contractName === '' && first.contractDecimals === '') seen.unknown++;
      if (/\P{ASCII}/u.test(first.contractName)) seen.nonAscii++;
      seen.decimals.add(first.contractDecimals);
      const rows = pages.flatMap((p) => p.tokenTransfers);
      seen.max ||= rows.some((r) => r.value === MAX);
      seen.zero ||= rows.some((r) => r.value === '0');
      const expected = dataset.transfers.filter((t) => t.contractAddress === contract).length;
      expect(rows).toHaveLength(expected);
    }
    expect(seen.symbols).toBe(1);
    expect(seen.unknown).toBe(1);
    expect(seen.nonAscii).toBeGreaterThanOrEqual(1);
    expect([...seen.decimals]).toEqual(expect.arrayContaining(['0', '6', '8', '18', '']));
    expect(seen.max && seen.zero).toBe(true);
  });
});

describe('a reorg on the reference server', () => {
  let dataset: Dataset;
  let devnet: RunningDevnet;
  beforeAll(async () => {
    dataset = generateSyntheticDataset({ ...OPTIONS, seed: 9 });
    devnet = await startDevnet(dataset);
  });
  afterAll(() => devnet.close());

  it('replaces the last N blocks: new hashes from the fork point on, /__truth follows, orphans still answer by hash', async () => {
    const before = await headersByNumber(devnet.base, 1000, 1399);
    const transfersBefore = await truth(devnet.origin, 'transfers.jsonl');
    const res = await fetch(`${devnet.origin}/__control/reorg`, { method: 'POST', body: JSON.stringify({ depth: 12 }) });
    expect(res.status).toBe(200);
    const summary = (await res.json()) as { forkBlock: number; head: number; orphanedHeaders: string[] };
    expect(summary).toMatchObject({ forkBlock: 1388, head: 1399 });

    const after = await headersByNumber(devnet.base, 1000, 1399);
    after.forEach((h, i) => {
      const n = 1000 + i;
      if (n < 1388) expect(h).toEqual(before[i]);
      else expect(h.hash).not.toBe(before[i]!.hash);
      expect(computeHeaderHash(h)).toBe(h.hash);
      if (i > 0) expect(h.parentHash).toBe(after[i - 1]!.hash);
    });
    expect(new Set(summary.orphanedHeaders)).toEqual(new Set(before.slice(388).map((h) => h.hash)));

    const truthHeaders = await truth(devnet.origin, 'headers.jsonl');
    expect(truthHeaders.map((h) => JSON.stringify(h))).toEqual(after.map((h) => headerLine(h)));

    const orphan = before[395]!;
    const { body } = await rpc(devnet.base, { jsonrpc: '2.0', id: 1, method: 'erigon_getHeaderByHash', params: [orphan.hash] });
    expect(body.result).toEqual(orphan);

    const transfersAfter = await truth(devnet.origin, 'transfers.jsonl');
    const below = (rows: Record<string, unknown>[]) => rows.filter((t) => (t.blockNumber as number) < 1388);
    expect(below(transfersAfter)).toEqual(below(transfersBefore));
    const orphanHashes = new Set(summary.orphanedHeaders);
    expect(transfersAfter.some((t) => orphanHashes.has(t.blockHash as string))).toBe(false);

    // getTokenTransfers serves only the new fork
    const contracts = [...new Set(transfersAfter.map((t) => t.contractAddress as string))];
    for (const contract of contracts) {
      const rows = (await allTransfers(devnet.base, { contractAddress: contract, fromBlock: 1380, pageSize: 1000 })).flatMap((p) => p.tokenTransfers);
      const expected = transfersAfter
        .filter((t) => t.contractAddress === contract && (t.blockNumber as number) >= 1380)
        .map(({ contractAddress: _c, ...rest }) => rest)
        .reverse();
      expect(rows.map((r) => JSON.stringify(r, Object.keys(r).sort()))).toEqual(expected.map((r) => JSON.stringify(r, Object.keys(r).sort())));
    }
  });

  it('refuses a reorg without a sensible depth', async () => {
    for (const body of ['{}', '{"depth":0}', '{"depth":100000}', 'nonsense']) {
      const res = await fetch(`${devnet.origin}/__control/reorg`, { method: 'POST', body });
      expect(res.status, body).toBe(400);
    }
  });
});
