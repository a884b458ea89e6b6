import { describe, expect, it } from 'vitest';
import { serverLogsCounts } from './node-bench.ts';

describe('serverLogsCounts', () => {
  it('counts as refusals the eth_getLogs calls refused over a cap, never an eth_call revert of the same code', () => {
    // arbitrum's refusal and a metadata revert are both -32000: only the per-method outcomes tell them apart
    const stats = {
      getTokenTransfers: 0,
      rpcHttpRequests: 90,
      rpcCalls: { eth_getLogs: 44, eth_call: 9 },
      errors: { '-32000': 5 },
      rpcOutcomes: { eth_getLogs: { answered: 40, refused: { resultsCap: 2, rangeCap: 1, hang: 1 } }, eth_call: { answered: 7, refused: { reverted: 2 } } },
      logsServed: 123_456,
    };
    expect(serverLogsCounts(stats)).toEqual({ calls: 44, refused: 3, errors: stats.errors });
    expect(serverLogsCounts({ ...stats, rpcCalls: {}, errors: {}, rpcOutcomes: {} })).toMatchObject({ calls: 0, refused: 0 });
  });
});
