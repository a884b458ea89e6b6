import { describe, expect, it } from 'vitest';
import type { DevnetStats } from '../src/devnet/stats.ts';
import { apiUse, apiUseOk } from './api-efficiency.ts';

const stats = (over: Partial<DevnetStats>): DevnetStats => ({ getTokenTransfers: 0, rpcHttpRequests: 0, rpcCalls: {}, errors: {}, rpcOutcomes: {}, logsServed: 0, ...over });

describe('apiUse', () => {
  it('bounds page requests by 1.01 × ceil(rows / pageSize) + 2 × concurrency', () => {
    const use = apiUse(stats({ getTokenTransfers: 1018 }), { rows: 1_000_000, newBlocks: 0, pageSize: 1000, concurrency: 4 });
    expect(use.pagesNeeded).toBe(1000);
    expect(use.transferRequestsBound).toBe(1018);
    expect(apiUseOk(use)).toBe(true);
    expect(apiUseOk({ ...use, transferRequests: 1019 })).toBe(false);
  });

  it('counts header POSTs as the POSTs less the calls of other methods, each sent alone', () => {
    const use = apiUse(stats({ getTokenTransfers: 3, rpcHttpRequests: 12, rpcCalls: { erigon_getHeaderByHash: 1001, eth_blockNumber: 1 } }), {
      rows: 2500,
      newBlocks: 1001,
      pageSize: 1000,
      concurrency: 4,
    });
    expect(use).toMatchObject({ headerCalls: 1001, headerCallsExpected: 1001, headerPosts: 11, headerPostsExpected: 11, rpcPosts: 12 });
    expect(apiUseOk(use)).toBe(true);
  });

  it('fails a run that asked for a header twice or sent more POSTs than needed', () => {
    const run = { rows: 1000, newBlocks: 100, pageSize: 1000, concurrency: 4 };
    expect(apiUseOk(apiUse(stats({ getTokenTransfers: 1, rpcHttpRequests: 2, rpcCalls: { erigon_getHeaderByHash: 101 } }), run))).toBe(false);
    expect(apiUseOk(apiUse(stats({ getTokenTransfers: 1, rpcHttpRequests: 2, rpcCalls: { erigon_getHeaderByHash: 100 } }), run))).toBe(false);
    expect(apiUseOk(apiUse(stats({ getTokenTransfers: 1, rpcHttpRequests: 1, rpcCalls: { erigon_getHeaderByHash: 100 } }), run))).toBe(true);
  });
});
