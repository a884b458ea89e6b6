import { Registry } from 'prom-client';
import { describe, expect, it } from 'vitest';
import { createSourceCounters } from '../common/source-counters.ts';
import { jobSeries } from './job-series.ts';
import { createRunMetrics } from './run-metrics.ts';

const CONTRACT = '0xa0b86991c6218b36c1d19d4a2e9eb0ce3606eb48';

/** Every series of `name` in the registry, as its labels and value (a histogram: its `_count` series). */
async function series(registry: Registry, name: string): Promise<{ labels: Record<string, string | number | undefined>; value: number }[]> {
  const metric = registry.getSingleMetric(name);
  if (!metric) throw new Error(`no metric ${name}`);
  const { values } = await metric.get();
  return values.filter((v) => !('metricName' in v) || v.metricName === undefined || v.metricName === `${name}_count`).map((v) => ({ labels: { ...v.labels }, value: v.value }));
}

describe('run metrics', () => {
  it('keeps two jobs of different chains in separate series, even under one name', async () => {
    const registry = new Registry();
    const metrics = createRunMetrics(registry);
    const op = { job: 'usdc', chain: 10 };
    const base = { job: 'usdc', chain: 8453 };
    metrics.page(op, CONTRACT, { inserted: 5, updated: 0, unchanged: 1 });
    metrics.page(base, CONTRACT, { inserted: 7, updated: 0, unchanged: 0 });
    metrics.page(op, CONTRACT, { inserted: 2, updated: 0, unchanged: 0 });

    const rows = await series(registry, 'erc20_etl_rows_total');
    expect(rows).toEqual(
      expect.arrayContaining([
        { labels: { job: 'usdc', chain: '10', contract: CONTRACT, outcome: 'inserted' }, value: 7 },
        { labels: { job: 'usdc', chain: '10', contract: CONTRACT, outcome: 'unchanged' }, value: 1 },
        { labels: { job: 'usdc', chain: '8453', contract: CONTRACT, outcome: 'inserted' }, value: 7 },
      ]),
    );
    expect(rows).toHaveLength(3);
    expect(await registry.metrics()).toContain(`erc20_etl_rows_total{job="usdc",chain="8453",contract="${CONTRACT}",outcome="inserted"} 7`);
  });

  it('labels every series of a job or a contract with its chain, as decimal text', async () => {
    const registry = new Registry();
    const metrics = createRunMetrics(registry);
    const of = { job: 'nightly', chain: 42161 };
    metrics.page(of, CONTRACT, { inserted: 1, updated: 0, unchanged: 0 });
    metrics.removed(of, CONTRACT, 2);
    metrics.headersStored(of, 3);
    metrics.transfersBloomChecked(of, 4);
    metrics.chunkDone(of, CONTRACT, 0.2);
    metrics.lag(of, CONTRACT, 5);
    metrics.runEnded(of, 'succeeded', 1_700_000_000);

    for (const name of [
      'erc20_etl_rows_total',
      'erc20_etl_headers_stored_total',
      'erc20_etl_transfers_bloom_checked_total',
      'erc20_etl_chunk_duration_seconds',
      'erc20_etl_lag_blocks',
      'erc20_etl_runs_total',
      'erc20_etl_last_run_end_timestamp_seconds',
    ]) {
      const found = await series(registry, name);
      expect(found.length, name).toBeGreaterThan(0);
      for (const s of found) expect(s.labels, name).toMatchObject({ job: 'nightly', chain: '42161' });
    }
  });

  it('leaves the process-wide HTTP counters without job or chain labels', async () => {
    const registry = new Registry();
    createRunMetrics(registry);
    const text = await registry.metrics();
    expect(text).toMatch(/^erc20_etl_transfer_requests_total 0$/m);
    expect(text).toMatch(/^erc20_etl_retries_total 0$/m);
  });

  it("counts a node source's eth_getLogs calls, refusals and timeouts, through a run and after it ended", async () => {
    const registry = new Registry();
    const metrics = createRunMetrics(registry);
    const value = async (name: string) => (await series(registry, name))[0]?.value;
    const counters = { ...createSourceCounters(), logsCalls: 5, logsRefused: 2, logsTimedOut: 1 };
    const untrack = metrics.trackSource(counters);
    expect(await value('erc20_etl_logs_calls_total')).toBe(5);
    counters.logsCalls = 9;
    counters.logsRefused = 3;
    untrack();
    // a builder source's counters (none of these) alongside
    metrics.trackSource({ ...createSourceCounters(), logsCalls: undefined, logsRefused: undefined, logsTimedOut: undefined });
    expect(await value('erc20_etl_logs_calls_total')).toBe(9);
    expect(await value('erc20_etl_logs_refused_total')).toBe(3);
    expect(await value('erc20_etl_logs_timed_out_total')).toBe(1);
  });

  it('takes a job without "chain" for chain 1, as a run does', () => {
    expect(jobSeries({ name: 'old' })).toEqual({ job: 'old', chain: 1 });
    expect(jobSeries({ name: 'base', chain: 8453 })).toEqual({ job: 'base', chain: 8453 });
  });
});
