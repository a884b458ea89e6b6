import { describe, expect, it } from 'vitest';
import { serverLogsCounts } from './node-bench.ts';

describe('serverLogsCounts', () => {
  it("counts as refusals the errors with the code of the style's answer to a query over the results cap", () => {
    const stats = { getTokenTransfers: 0, rpcHttpRequests: 90, rpcCalls: { eth_getLogs: 44, eth_call: 9 }, errors: { '-32005': 3, '-32000': 2, '-32614': 1 } };
    expect(serverLogsCounts(stats, 'infura')).toEqual({ calls: 44, refused: 3, errors: stats.errors });
    expect(serverLogsCounts(stats, 'quicknode')).toMatchObject({ refused: 1 });
    expect(serverLogsCounts(stats, 'arbitrum')).toMatchObject({ refused: 2 });
    expect(serverLogsCounts({ ...stats, rpcCalls: {}, errors: {} }, 'reth')).toMatchObject({ calls: 0, refused: 0 });
  });
});
