import { readdirSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import type { TransferRecord } from '../src/dataset/types.ts';
import { allTransfers, getTransfers, rpc, serveMainnetFixture } from './helpers/devnet.ts';
import { FIXTURE_DIR } from './helpers/fixtures.ts';

const fileLines = (name: string) =>
  readFileSync(join(FIXTURE_DIR, name), 'utf8')
    .split('\n')
    .filter(Boolean)
    .map((l) => JSON.parse(l) as Record<string, unknown>);

const USDT = '0xdac17f958d2ee523a2206206994597c13d831ec7';
const WETH = '0xc02aaa39b223fe8d0a0e5c4f27ead9083c756cc2';

function served(t: TransferRecord) {
  const { contractAddress: _c, ...rest } = t;
  return rest;
}
const newestFirst = (a: TransferRecord, b: TransferRecord) => b.blockNumber - a.blockNumber || b.logIndex - a.logIndex;

describe('reference server serving the mainnet fixture', () => {
  const suite = serveMainnetFixture();

  it('serves every header exactly as its line of headers.jsonl, by hash and by number', async () => {
    const lines = fileLines('headers.jsonl');
    const byHash = await rpc(
      suite.devnet.base,
      lines.map((h, i) => ({ jsonrpc: '2.0', id: i, method: 'erigon_getHeaderByHash', params: [h.hash] })),
    );
    expect(byHash.status).toBe(200);
    expect(byHash.body).toHaveLength(lines.length);
    for (const answer of byHash.body as { id: number; result: unknown }[]) {
      expect(answer.result).toEqual(lines[answer.id]);
      expect(Object.keys(answer.result as object)).toEqual(Object.keys(lines[answer.id]!));
    }
    for (const line of lines) {
      const { body } = await rpc(suite.devnet.base, { jsonrpc: '2.0', id: 1, method: 'erigon_getHeaderByNumber', params: [line.number] });
      expect(body.result).toEqual(line);
    }
  });

  it('reproduces Erigon’s recorded vectors', async () => {
    let checked = 0;
    for (const method of ['erigon_getHeaderByHash', 'erigon_getHeaderByNumber']) {
      const dir = join(FIXTURE_DIR, 'vectors', method);
      for (const file of readdirSync(dir)) {
        const vectors = JSON.parse(readFileSync(join(dir, file), 'utf8')) as { request: unknown; response: any }[];
        for (const v of vectors) {
          const { status, body } = await rpc(suite.devnet.base, v.request);
          expect(status, file).toBe(200);
          if ('error' in v.response) {
            expect(body.error.code, file).toBe(v.response.error.code);
            expect(body.error.message, file).toBe(v.response.error.message);
            expect(body.id).toBe(v.response.id);
          } else {
            expect(body, `${method}/${file}`).toEqual(v.response);
          }
          checked++;
        }
      }
    }
    expect(checked).toBe(14);
  });

  it('pages every contract with several page sizes: each transfer once, newest first', async () => {
    const contracts = [...new Set(suite.dataset.transfers.map((t) => t.contractAddress))];
    for (const pageSize of [1, 7, 100, 1000]) {
      for (const contract of pageSize === 1 ? [USDT, WETH] : contracts) {
        const pages = await allTransfers(suite.devnet.base, { contractAddress: contract, fromBlock: 0, toBlock: 20_000_000, pageSize });
        const rows = pages.flatMap((p) => p.tokenTransfers);
        const expected = suite.dataset.transfers
          .filter((t) => t.contractAddress === contract)
          .sort(newestFirst)
          .map(served);
        expect(rows).toEqual(expected);
        for (const [i, page] of pages.entries()) {
          expect(page.count).toBe(page.tokenTransfers.length);
          expect(page.count).toBeLessThanOrEqual(pageSize);
          expect('nextPageKey' in page).toBe(i < pages.length - 1);
        }
      }
    }
  });

  it('treats fromBlock and toBlock as inclusive, in decimal or 0x hex', async () => {
    const inBlock = (n: number) => suite.dataset.transfers.filter((t) => t.contractAddress === WETH && t.blockNumber === n);
    const pages = await allTransfers(suite.devnet.base, { contractAddress: WETH, fromBlock: 15_000_000, toBlock: 15_000_000, pageSize: 1000 });
    expect(pages[0]!.tokenTransfers).toEqual(inBlock(15_000_000).sort(newestFirst).map(served));
    const both = await allTransfers(suite.devnet.base, { contractAddress: WETH, fromBlock: '0xe4e1c0', toBlock: '0x112a880', pageSize: 1000 });
    const expected = suite.dataset.transfers.filter((t) => t.contractAddress === WETH && t.blockNumber >= 15_000_000 && t.blockNumber <= 18_000_000).sort(newestFirst);
    expect(both[0]!.tokenTransfers).toEqual(expected.map(served));
    expect(Math.min(...expected.map((t) => t.blockNumber))).toBe(15_000_000);
    expect(Math.max(...expected.map((t) => t.blockNumber))).toBe(18_000_000);
    expect(expected.some((t) => t.blockNumber === 18_000_000)).toBe(true);
  });

  it('defaults to pages of 100 and to the whole chain', async () => {
    const { body } = await getTransfers(suite.devnet.base, { contractAddress: WETH });
    const page = body as { count: number; nextPageKey?: string };
    expect(page.count).toBe(100);
    expect(page.nextPageKey).toBeTypeOf('string');
  });

  it('answers token metadata, "" for an unknown token, and count 0 for a contract without transfers', async () => {
    const usdt = (await getTransfers(suite.devnet.base, { contractAddress: USDT, pageSize: 1 })).body as Record<string, unknown>;
    expect(usdt).toMatchObject({ contractAddress: USDT, contractName: 'Tether USD', contractSymbol: 'USDT', contractDecimals: '6' });
    const unknown = '0x5d3a536e4d6dbd6114cc1ead35777bab948e3643';
    const u = (await getTransfers(suite.devnet.base, { contractAddress: unknown })).body as Record<string, unknown>;
    expect(u).toMatchObject({ contractName: '', contractSymbol: '', contractDecimals: '' });
    expect(u.count).toBeGreaterThan(0);
    const none = (await getTransfers(suite.devnet.base, { contractAddress: `0x${'ab'.repeat(20)}` })).body;
    expect(none).toEqual({ contractAddress: `0x${'ab'.repeat(20)}`, contractDecimals: '', contractName: '', contractSymbol: '', count: 0, tokenTransfers: [] });
  });

  it('accepts a checksummed address and answers in lower case', async () => {
    const { status, body } = await getTransfers(suite.devnet.base, { contractAddress: '0xC02aaA39b223FE8D0A0e5C4F27eAD9083C756Cc2', pageSize: 1 });
    expect(status).toBe(200);
    expect((body as { contractAddress: string }).contractAddress).toBe(WETH);
  });

  it('answers eth_blockNumber and eth_chainId', async () => {
    const { body } = await rpc(suite.devnet.base, [
      { jsonrpc: '2.0', id: 'a', method: 'eth_blockNumber', params: [] },
      { jsonrpc: '2.0', id: 'b', method: 'eth_chainId' },
    ]);
    const byId = Object.fromEntries((body as { id: string; result: string }[]).map((a) => [a.id, a.result]));
    expect(byId).toEqual({ a: `0x${(19_900_000).toString(16)}`, b: '0x1' }); // the newest fixture header
  });
});
