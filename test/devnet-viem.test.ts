import { describe, expect, it } from 'vitest';
import { createPublicClient, http } from 'viem';
import { mainnet } from 'viem/chains';
import { serveMainnetFixture } from './helpers/devnet.ts';

// viem is a client nobody here wrote: if it can talk to the reference server, so can the hosted service's users.
describe('viem against the reference server', () => {
  const suite = serveMainnetFixture();

  const client = () => createPublicClient({ chain: mainnet, transport: http(suite.devnet.base, { retryCount: 0 }) });

  it('reads the chain head with getBlockNumber and the chain id with getChainId', async () => {
    expect(await client().getBlockNumber({ cacheTime: 0 })).toBe(19_900_000n);
    expect(await client().getChainId()).toBe(1);
  });

  it('fetches a header with request({ method: "erigon_getHeaderByHash" })', async () => {
    const expected = suite.dataset.headers.find((h) => h.number === '0x12c135c')!;
    const header = await client().request({
      method: 'erigon_getHeaderByHash' as never,
      params: [expected.hash] as never,
    });
    expect(header).toEqual(expected);
  });

  it('surfaces the not-found error with Erigon’s code and message', async () => {
    const missing = `0x${'fe'.repeat(32)}`;
    const err = await client()
      .request({ method: 'erigon_getHeaderByHash' as never, params: [missing] as never })
      .catch((e: unknown) => e as { code: number; details: string });
    expect(err.code).toBe(-32000);
    expect(err.details).toBe(`block header not found: ${missing}`);
  });

  it('batches requests through its http transport', async () => {
    const batching = createPublicClient({ chain: mainnet, transport: http(suite.devnet.base, { batch: true, retryCount: 0 }) });
    const hashes = suite.dataset.headers.slice(0, 5).map((h) => h.hash);
    const before = (await suite.devnet.stats()).rpcHttpRequests;
    const headers = await Promise.all(hashes.map((hash) => batching.request({ method: 'erigon_getHeaderByHash' as never, params: [hash] as never })));
    expect((headers as { hash: string }[]).map((h) => h.hash)).toEqual(hashes);
    expect((await suite.devnet.stats()).rpcHttpRequests - before).toBe(1);
  });
});
