import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { manualClock } from '../src/common/clock.ts';
import { readDataset } from '../src/dataset/read.ts';
import type { Dataset } from '../src/dataset/types.ts';
import { FIXTURE_DIR } from './helpers/fixtures.ts';
import { getTransfers, PROJECT, rpc, startDevnet, type RunningDevnet } from './helpers/devnet.ts';

const WETH = '0xc02aaa39b223fe8d0a0e5c4f27ead9083c756cc2';
const HASH = '0x96cfa0fb5e50b0a3f6cc76f3299cfbf48f17e8b41798d1394474e67ec8a97e9f';

let dataset: Dataset;
beforeAll(async () => {
  dataset = await readDataset(FIXTURE_DIR);
});

describe('getTokenTransfers errors', () => {
  const clock = manualClock();
  let devnet: RunningDevnet;
  beforeAll(async () => {
    devnet = await startDevnet(dataset, { pageKeyTtlSeconds: 3600 }, clock);
  });
  afterAll(() => devnet.close());

  const invalid = async (query: Record<string, string | number>, message: RegExp) => {
    const { status, body } = await getTransfers(devnet.base, query);
    expect(status).toBe(400);
    expect(body).toEqual({ error: { code: 'invalid_params', message: expect.stringMatching(message) } });
  };

  it('answers 400 invalid_params for each kind of bad parameter', async () => {
    await invalid({}, /contractAddress is required/);
    await invalid({ contractAddress: '0x1234' }, /contractAddress must be a 0x address/);
    await invalid({ contractAddress: WETH, fromBlock: 'ten' }, /fromBlock must be a block number/);
    await invalid({ contractAddress: WETH, toBlock: '-5' }, /toBlock must be a block number/);
    await invalid({ contractAddress: WETH, fromBlock: 20, toBlock: 10 }, /fromBlock \(20\) is greater than toBlock \(10\)/);
    await invalid({ contractAddress: WETH, pageSize: 0 }, /pageSize must be an integer from 1 to 1000/);
    await invalid({ contractAddress: WETH, pageSize: 1001 }, /pageSize must be an integer from 1 to 1000/);
    await invalid({ contractAddress: WETH, pageSize: 'many' }, /pageSize must be an integer/);
    await invalid({ contractAddress: WETH, pageKey: 'not-a-key' }, /pageKey is unknown/);
  });

  it('keeps a nextPageKey valid after 10 minutes, and expires it after its lifetime', async () => {
    const first = (await getTransfers(devnet.base, { contractAddress: WETH, pageSize: 10 })).body as { nextPageKey: string };
    clock.advance(10 * 60_000);
    const second = await getTransfers(devnet.base, { contractAddress: WETH, pageSize: 10, pageKey: first.nextPageKey });
    expect(second.status).toBe(200);
    clock.advance(3600_000);
    await invalid({ contractAddress: WETH, pageSize: 10, pageKey: first.nextPageKey }, /pageKey has expired/);
  });

  it('rejects a tampered pageKey and one sent with another contract', async () => {
    const first = (await getTransfers(devnet.base, { contractAddress: WETH, pageSize: 10 })).body as { nextPageKey: string };
    const [v, payload, mac] = first.nextPageKey.split('.');
    const fields = JSON.parse(Buffer.from(payload!, 'base64url').toString()) as unknown[];
    fields[3] = 1; // skip to the end of the range
    const forged = `${v}.${Buffer.from(JSON.stringify(fields)).toString('base64url')}.${mac}`;
    await invalid({ contractAddress: WETH, pageKey: forged }, /pageKey is unknown/);
    await invalid({ contractAddress: `0x${'11'.repeat(20)}`, pageKey: first.nextPageKey }, /pageKey belongs to another query/);
  });

  it('answers 401 unauthorized for an unknown project id, without echoing it', async () => {
    const { status, body } = await getTransfers(`${devnet.origin}/not-a-project`, { contractAddress: WETH });
    expect(status).toBe(401);
    expect(body).toEqual({ error: { code: 'unauthorized', message: expect.any(String) } });
    expect(JSON.stringify(body)).not.toContain('not-a-project');
  });

  it('answers 404 with a hint for an unknown path', async () => {
    const res = await fetch(`${devnet.base}/builder/getTokenTransferz`);
    expect(res.status).toBe(404);
    expect(((await res.json()) as { error: { code: string } }).error.code).toBe('not_found');
  });
});

describe('a nextPageKey after a restart on the same data', () => {
  it('is still valid and continues where it left off', async () => {
    const a = await startDevnet(dataset);
    const first = (await getTransfers(a.base, { contractAddress: WETH, pageSize: 50 })).body as { nextPageKey: string; tokenTransfers: unknown[] };
    const expected = (await getTransfers(a.base, { contractAddress: WETH, pageSize: 50, pageKey: first.nextPageKey })).body;
    await a.close();
    const b = await startDevnet(dataset);
    const again = await getTransfers(b.base, { contractAddress: WETH, pageSize: 50, pageKey: first.nextPageKey });
    await b.close();
    expect(again.status).toBe(200);
    expect(again.body).toEqual(expected);
  });
});

describe('gateway errors', () => {
  it('answers 403 forbidden once the plan capacity is used up', async () => {
    const devnet = await startDevnet(dataset, { quota: 2 });
    try {
      expect((await getTransfers(devnet.base, { contractAddress: WETH })).status).toBe(200);
      expect((await getTransfers(devnet.base, { contractAddress: WETH })).status).toBe(200);
      const third = await getTransfers(devnet.base, { contractAddress: WETH });
      expect(third.status).toBe(403);
      expect(third.body).toEqual({ error: { code: 'forbidden', message: expect.stringMatching(/plan capacity exceeded/) } });
    } finally {
      await devnet.close();
    }
  });

  it('answers 429 with Retry-After over the rate limit, REST and JSON-RPC alike, per project id', async () => {
    const clock = manualClock();
    const devnet = await startDevnet(dataset, { rateLimit: 2, projectIds: [PROJECT, 'other'] }, clock);
    try {
      expect((await getTransfers(devnet.base, { contractAddress: WETH })).status).toBe(200);
      expect((await rpc(devnet.base, { jsonrpc: '2.0', id: 1, method: 'eth_blockNumber' })).status).toBe(200);
      const rest = await getTransfers(devnet.base, { contractAddress: WETH });
      expect(rest.status).toBe(429);
      expect(rest.headers.get('retry-after')).toBe('1');
      expect(rest.body).toEqual({ error: { code: 'rate_limited', message: expect.any(String) } });
      const call = await rpc(devnet.base, { jsonrpc: '2.0', id: 1, method: 'eth_blockNumber' });
      expect(call.status).toBe(429);
      expect(call.headers.get('retry-after')).toBe('1');
      expect(call.body.error).toEqual({ code: -32097, message: 'rate limit reached' });
      expect((await getTransfers(`${devnet.origin}/other`, { contractAddress: WETH })).status).toBe(200);
      clock.advance(1000);
      expect((await getTransfers(devnet.base, { contractAddress: WETH })).status).toBe(200);
      const stats = await devnet.stats();
      expect(stats.errors).toEqual({ '429': 1, '-32097': 1 });
    } finally {
      await devnet.close();
    }
  });

  it('answers 500, 502 or 503 with code internal when failing on purpose', async () => {
    const devnet = await startDevnet(dataset, { faults: { failRate: 1 } });
    try {
      const seen = new Set<number>();
      for (let i = 0; i < 30; i++) {
        const { status, body } = await getTransfers(devnet.base, { contractAddress: WETH });
        seen.add(status);
        expect(body).toEqual({ error: { code: 'internal', message: expect.any(String) } });
      }
      expect(seen).toEqual(new Set([500, 502, 503]));
      const call = await rpc(devnet.base, { jsonrpc: '2.0', id: 1, method: 'eth_blockNumber' });
      expect([500, 502, 503]).toContain(call.status);
    } finally {
      await devnet.close();
    }
  });
});

describe('JSON-RPC errors', () => {
  let devnet: RunningDevnet;
  beforeAll(async () => {
    devnet = await startDevnet(dataset);
  });
  afterAll(() => devnet.close());

  const cases: [string, unknown, number, number, RegExp][] = [
    ['not JSON', '{"jsonrpc": "2.0", "method": ', 400, -32700, /^parse error$/],
    ['not JSON-RPC 2.0', { jsonrpc: '1.0', id: 1, method: 'eth_chainId' }, 400, -32600, /^invalid request$/],
    ['a method that does not exist', { jsonrpc: '2.0', id: 1, method: 'foo' }, 400, -32601, /^the method foo does not exist\/is not available$/],
    [
      'a hash of 40 digits',
      { jsonrpc: '2.0', id: 1, method: 'erigon_getHeaderByHash', params: [`0x${'ab'.repeat(20)}`] },
      400,
      -32602,
      /^invalid argument 0: hex string has length 40, want 64 for common.Hash$/,
    ],
    ['a hash without 0x', { jsonrpc: '2.0', id: 1, method: 'erigon_getHeaderByHash', params: ['ab'.repeat(32)] }, 400, -32602, /without 0x prefix/],
    ['no hash at all', { jsonrpc: '2.0', id: 1, method: 'erigon_getHeaderByHash', params: [] }, 400, -32602, /missing value for required argument 0/],
    ['an unknown hash', { jsonrpc: '2.0', id: 1, method: 'erigon_getHeaderByHash', params: [`0x${'ff'.repeat(32)}`] }, 200, -32000, /^block header not found: 0xffff/],
    ['an unknown number', { jsonrpc: '2.0', id: 1, method: 'erigon_getHeaderByNumber', params: ['0x2'] }, 200, -32000, /^block header not found: 2$/],
    ['an empty batch', [], 400, -32600, /empty batch/],
  ];
  it.each(cases)('answers %s with its code and HTTP status', async (_name, body, status, code, message) => {
    const res = await rpc(devnet.base, body);
    expect(res.status).toBe(status);
    expect(res.body.jsonrpc).toBe('2.0');
    expect(res.body.error.code).toBe(code);
    expect(res.body.error.message).toMatch(message);
  });

  it('answers -32099 with HTTP 401 for an unknown project id', async () => {
    const res = await rpc(`${devnet.origin}/nobody`, { jsonrpc: '2.0', id: 1, method: 'eth_chainId' });
    expect(res.status).toBe(401);
    expect(res.body.error).toEqual({ code: -32099, message: 'authentication failed' });
  });

  it('answers a batch member by member, matched by id, errors included', async () => {
    const res = await rpc(devnet.base, [
      { jsonrpc: '2.0', id: 1, method: 'erigon_getHeaderByHash', params: [HASH] },
      { jsonrpc: '2.0', id: 2, method: 'erigon_getHeaderByHash', params: [`0x${'00'.repeat(32)}`] },
      { jsonrpc: '2.0', id: 3, method: 'nope' },
      { jsonrpc: '2.0', method: 'eth_chainId' },
      42,
    ]);
    expect(res.status).toBe(200);
    const byId = new Map((res.body as { id: unknown; result?: any; error?: any }[]).map((a) => [a.id, a]));
    expect(res.body).toHaveLength(4); // the notification gets no answer; 42 gets an error with id null
    expect(byId.get(1)?.result.hash).toBe(HASH);
    expect(byId.get(2)?.error.code).toBe(-32000);
    expect(byId.get(3)?.error.code).toBe(-32601);
    expect(byId.get(null)?.error.code).toBe(-32600);
  });

  it('counts requests, calls one by one, and errors by code in /__stats', async () => {
    await fetch(`${devnet.origin}/__control/reset-stats`, { method: 'POST' });
    await rpc(devnet.base, [
      { jsonrpc: '2.0', id: 1, method: 'erigon_getHeaderByHash', params: [HASH] },
      { jsonrpc: '2.0', id: 2, method: 'erigon_getHeaderByHash', params: [`0x${'00'.repeat(32)}`] },
      { jsonrpc: '2.0', id: 3, method: 'eth_blockNumber' },
    ]);
    await getTransfers(devnet.base, { contractAddress: WETH });
    await getTransfers(devnet.base, { contractAddress: 'bad' });
    expect(await devnet.stats()).toEqual({
      getTokenTransfers: 2,
      rpcHttpRequests: 1,
      rpcCalls: { erigon_getHeaderByHash: 2, eth_blockNumber: 1 },
      errors: { '-32000': 1, '400': 1 },
      rpcOutcomes: { erigon_getHeaderByHash: { answered: 1, refused: { notFound: 1 } }, eth_blockNumber: { answered: 1, refused: {} } },
      logsServed: 0,
    });
  });
});
