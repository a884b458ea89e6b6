import { describe, expect, expectTypeOf, it } from 'vitest';
import { jobSchema, type JobConfig } from './job-schema.ts';

const USDC = '0xa0b86991c6218b36c1d19d4a2e9eb0ce3606eb48';
const base = { name: 'nightly', contracts: [{ address: USDC, fromBlock: 100 }] };

function messages(input: unknown): string[] {
  const result = jobSchema.safeParse(input);
  return result.success ? [] : result.error.issues.map((i) => `${i.path.join('.')}: ${i.message}`);
}

describe('jobSchema', () => {
  it('fills in the defaults and drops $schema', () => {
    const job = jobSchema.parse({ $schema: './job.schema.json', ...base });
    expect(job).toEqual({
      ...base,
      pageSize: 1000,
      concurrency: 4,
      headerBatchSize: 100,
      commitRows: 10_000,
      keepIndexes: false,
      finality: 64,
      source: 'builder',
      verifyHeaders: 'allow-unverified',
    });
    expectTypeOf<JobConfig>().not.toHaveProperty('$schema');
    expectTypeOf<JobConfig['pageSize']>().toEqualTypeOf<number>();
    expectTypeOf<JobConfig['contracts'][number]['toBlock']>().toEqualTypeOf<number | undefined>();
  });

  it('commits a node job every 5,000 rows and a builder job every 10,000 unless the job says', () => {
    expect(jobSchema.parse({ ...base, source: 'node' }).commitRows).toBe(5_000);
    expect(jobSchema.parse({ ...base, source: 'builder' }).commitRows).toBe(10_000);
    expect(jobSchema.parse({ ...base, source: 'node', commitRows: 30_000 }).commitRows).toBe(30_000);
    expect(jobSchema.parse({ ...base, commitRows: 7 }).commitRows).toBe(7);
    expectTypeOf<JobConfig['commitRows']>().toEqualTypeOf<number>();
  });

  it('keeps the lookup indexes up by default only when the job states a request rate (its API holds the load up)', () => {
    expect(jobSchema.parse(base).keepIndexes).toBe(false);
    expect(jobSchema.parse({ ...base, requestsPerSecond: 20 }).keepIndexes).toBe(true);
    expect(jobSchema.parse({ ...base, requestsPerSecond: 20, keepIndexes: false }).keepIndexes).toBe(false);
    expect(jobSchema.parse({ ...base, keepIndexes: true }).keepIndexes).toBe(true);
    expectTypeOf<JobConfig['keepIndexes']>().toEqualTypeOf<boolean>();
  });

  it('accepts the edges of every range', () => {
    expect(messages({ ...base, contracts: [{ address: USDC, fromBlock: 0, toBlock: 0 }], pageSize: 1, concurrency: 64, finality: 0, requestsPerSecond: 0.5 })).toEqual([]);
    expect(messages({ ...base, pageSize: 1000, concurrency: 1, finality: 10_000 })).toEqual([]);
    expect(messages({ ...base, contracts: [{ address: USDC, fromBlock: 9_007_199_254_740_991 }] })).toEqual([]);
  });

  it('takes names of 1 to 100 letters, digits, ".", "_" and "-" that start with a letter or digit', () => {
    for (const name of ['a', '7', 'usdc.usdt_mainnet-2', 'x'.repeat(100)]) expect(messages({ ...base, name }), name).toEqual([]);
    for (const name of ['', 'x'.repeat(101), '.hidden', '_x', 'with space', 'a/b', 'é']) {
      expect(messages({ ...base, name }), name).toEqual(['name: expected a job name of 1–100 letters, digits, ".", "_" or "-", starting with a letter or digit']);
    }
  });

  it('refuses block numbers a JS number cannot hold exactly', () => {
    expect(messages({ ...base, contracts: [{ address: USDC, fromBlock: 1e20 }] })).toEqual(['contracts.0.fromBlock: expected an integer ≤ 9007199254740991']);
  });

  it('refuses non-numbers in every numeric field', () => {
    expect(messages({ ...base, pageSize: '10', concurrency: null, requestsPerSecond: '5', finality: true })).toEqual([
      'pageSize: expected an integer from 1 to 1000',
      'concurrency: expected an integer from 1 to 64',
      'requestsPerSecond: expected a number > 0',
      'finality: expected an integer from 0 to 10000',
    ]);
  });

  it('reads "source" and a node job\'s "logsRange"', () => {
    const job = jobSchema.parse({ ...base, source: 'node', logsRange: 2500 });
    expect(job.source).toBe('node');
    expect(job.logsRange).toBe(2500);
    expect(jobSchema.parse(base).logsRange).toBeUndefined();
    expectTypeOf<JobConfig['source']>().toEqualTypeOf<'builder' | 'node'>();
    expect(messages({ ...base, source: 'node', logsRange: 1 })).toEqual([]);
    expect(messages({ ...base, source: 'node', logsRange: 100_000 })).toEqual([]);
  });

  it('refuses another source, a logsRange out of range, and a logsRange without a node source', () => {
    expect(messages({ ...base, source: 'Node' })).toEqual(['source: expected "builder" (the hosted builder API) or "node" (any Ethereum node\'s JSON-RPC)']);
    expect(messages({ ...base, source: 'node', logsRange: 0 })).toEqual(['logsRange: expected an integer from 1 to 100000']);
    expect(messages({ ...base, source: 'node', logsRange: 100_001 })).toEqual(['logsRange: expected an integer from 1 to 100000']);
    expect(messages({ ...base, source: 'node', logsRange: 2.5 })).toEqual(['logsRange: expected an integer from 1 to 100000']);
    const needsNode = 'logsRange: applies to "source": "node" only (eth_getLogs ranges); add "source": "node", or drop it';
    expect(messages({ ...base, logsRange: 500 })).toEqual([needsNode]);
    expect(messages({ ...base, source: 'builder', logsRange: 500, pageSize: 0 })).toEqual(['pageSize: expected an integer from 1 to 1000', needsNode]);
  });

  it('refuses a pageSize in a node job, with its other problems, and gives a builder job one when it states none', () => {
    const builderOnly = 'pageSize: applies to "source": "builder" only (rows per getTokenTransfers page; an eth_getLogs answer holds what its range holds); drop it';
    expect(messages({ ...base, source: 'node', pageSize: 500 })).toEqual([builderOnly]);
    expect(messages({ ...base, source: 'node', pageSize: 500, concurrency: 0 })).toEqual(['concurrency: expected an integer from 1 to 64', builderOnly]);
    expect(messages({ ...base, source: 'builder', pageSize: 500 })).toEqual([]);
    expect(messages({ ...base, source: 'node', pageSize: 0 })).toEqual(['pageSize: expected an integer from 1 to 1000']);
    expect(jobSchema.parse(base).pageSize).toBe(1000);
    expect(jobSchema.parse({ ...base, source: 'node' }).pageSize).toBe(1000);
    expectTypeOf<JobConfig['pageSize']>().toEqualTypeOf<number>();
  });

  it("gives a job that states no finality its chain's default", () => {
    expect(jobSchema.parse(base).finality).toBe(64);
    expect(jobSchema.parse({ ...base, chain: 1 }).finality).toBe(64);
    expect(jobSchema.parse({ ...base, chain: 10 }).finality).toBe(900);
    expect(jobSchema.parse({ ...base, chain: 8453 }).finality).toBe(900);
    expect(jobSchema.parse({ ...base, chain: 42161 }).finality).toBe(7200);
    expect(jobSchema.parse({ ...base, chain: 137 }).finality).toBe(512);
    expect(jobSchema.parse({ ...base, chain: 56 }).finality).toBe(240);
    expectTypeOf<JobConfig['finality']>().toEqualTypeOf<number>();
  });

  it('keeps the finality a job states, whatever its chain', () => {
    expect(jobSchema.parse({ ...base, chain: 42161, finality: 100 }).finality).toBe(100);
    expect(jobSchema.parse({ ...base, chain: 137, finality: 0 }).finality).toBe(0);
    expect(jobSchema.parse({ ...base, finality: 10_000 }).finality).toBe(10_000);
  });

  it('gives a chain it knows nothing of the default of 64', () => {
    expect(jobSchema.parse({ ...base, chain: 999_999 }).finality).toBe(64);
    // Gnosis and Avalanche finalise sooner than Ethereum; their default is not lowered
    expect(jobSchema.parse({ ...base, chain: 100 }).finality).toBe(64);
    expect(jobSchema.parse({ ...base, chain: 43114 }).finality).toBe(64);
  });

  it('reads "verifyHeaders": headers that cannot be verified are allowed, unverified, unless the job requires them verified', () => {
    expect(jobSchema.parse(base).verifyHeaders).toBe('allow-unverified');
    expect(jobSchema.parse({ ...base, verifyHeaders: 'require' }).verifyHeaders).toBe('require');
    expectTypeOf<JobConfig['verifyHeaders']>().toEqualTypeOf<'allow-unverified' | 'require'>();
    for (const wrong of ['required', true, 'Require']) {
      expect(messages({ ...base, verifyHeaders: wrong }), String(wrong)).toEqual([
        'verifyHeaders: expected "allow-unverified" (headers that cannot be verified are stored with hash_verified = false and the reason) or "require" (such a header fails the run)',
      ]);
    }
  });
});
