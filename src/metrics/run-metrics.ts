import { Counter, Gauge, Histogram, type Registry } from 'prom-client';
import { createSourceCounters, type SourceCounters } from '../common/source-counters.ts';
import type { JobSeries } from './job-series.ts';

/**
 * What a run tells its metrics as it goes. Labels are job names, chain ids (decimal) and contract addresses,
 * never a URL.
 */
export interface RunMetrics {
  /**
   * The HTTP counters of a run that starts now, read at every scrape; call what it returns when the run
   * ends, to keep its counts without keeping it.
   */
  trackSource(counters: SourceCounters): () => void;
  /** A committed page of a contract: its rows, by what the load did with them. */
  page(of: JobSeries, contract: string, rows: { inserted: number; updated: number; unchanged: number }): void;
  /** Rows a reconciliation moved out, and headers stored. */
  removed(of: JobSeries, contract: string, rows: number): void;
  headersStored(of: JobSeries, headers: number): void;
  /** Transfers checked against their block header's logsBloom. */
  transfersBloomChecked(of: JobSeries, rows: number): void;
  /** A chunk read to its end, and how long that took. */
  chunkDone(of: JobSeries, contract: string, seconds: number): void;
  /** Blocks between the chain head and the highest block of the contract the job has covered. */
  lag(of: JobSeries, contract: string, blocks: number): void;
  /** A run ended: `succeeded` or `failed`. */
  runEnded(of: JobSeries, status: 'succeeded' | 'failed', endedAtSeconds: number): void;
  /** Where these metrics are registered, for a command's own gauges. */
  readonly registry: Registry;
}

const SOURCE_COUNTS = ['transferRequests', 'rpcPosts', 'headerCalls', 'retries', 'rateLimited', 'logsCalls', 'logsRefused', 'logsTimedOut'] as const;

/** The labels of a job's series: the chain id as decimal text. */
const labelsOf = (of: JobSeries) => ({ job: of.job, chain: String(of.chain) });

/**
 * The exporter's Prometheus metrics, registered in `registry` (none in prom-client's global one, so two
 * exporters in one process never mix). HTTP counts are read from the runs' own counters at each scrape. Every
 * series of a job or a contract has a `chain` label.
 *
 * @example const registry = new Registry(); const metrics = createRunMetrics(registry); await registry.metrics() // → '# HELP erc20_etl_rows_total …'
 */
export function createRunMetrics(registry: Registry): RunMetrics {
  const live = new Set<SourceCounters>();
  const ended = createSourceCounters();
  // a node source's eth_getLogs counts are optional in the counters (none for a builder source)
  const sum = (key: (typeof SOURCE_COUNTS)[number]) => [...live].reduce((a, c) => a + (c[key] ?? 0), ended[key] ?? 0);
  const errorKinds = () => {
    const total = new Map<string, number>();
    for (const c of [ended, ...live]) for (const [kind, n] of Object.entries(c.errors)) total.set(kind, (total.get(kind) ?? 0) + n);
    return total;
  };
  // a counter that follows a running total: each scrape adds what the total grew by since the last one
  const following = (name: string, help: string, read: () => number) => {
    let reported = 0;
    return new Counter({
      name,
      help,
      registers: [registry],
      collect() {
        const now = read();
        if (now > reported) this.inc(now - reported);
        reported = now;
      },
    });
  };
  following('erc20_etl_transfer_requests_total', 'getTokenTransfers HTTP requests, retries included.', () => sum('transferRequests'));
  following('erc20_etl_rpc_posts_total', 'JSON-RPC HTTP requests (a batch counts once), retries included.', () => sum('rpcPosts'));
  following('erc20_etl_header_calls_total', 'erigon_getHeaderByHash calls sent.', () => sum('headerCalls'));
  following('erc20_etl_retries_total', 'HTTP requests that were retried.', () => sum('retries'));
  following('erc20_etl_rate_limited_total', 'HTTP answers 429 (rate limited).', () => sum('rateLimited'));
  following('erc20_etl_logs_calls_total', 'eth_getLogs calls sent (a node source).', () => sum('logsCalls'));
  following('erc20_etl_logs_refused_total', 'eth_getLogs calls refused as too large, or unanswered within --rpc-timeout, and asked again in smaller calls.', () =>
    sum('logsRefused'),
  );
  following('erc20_etl_logs_timed_out_total', 'Of the refused eth_getLogs calls, those unanswered within --rpc-timeout.', () => sum('logsTimedOut'));
  const reportedErrors = new Map<string, number>();
  new Counter({
    name: 'erc20_etl_request_errors_total',
    help: 'Failed HTTP attempts, by HTTP status or kind (timeout, reset, refused, dns, network, tls, bad-body, too-large).',
    labelNames: ['kind'],
    registers: [registry],
    collect() {
      for (const [kind, n] of errorKinds()) {
        const before = reportedErrors.get(kind) ?? 0;
        if (n > before) this.labels(kind).inc(n - before);
        reportedErrors.set(kind, n);
      }
    },
  });
  const rows = new Counter({
    name: 'erc20_etl_rows_total',
    help: 'Transfers read and loaded, by outcome: inserted, updated, unchanged, removed (by reconciliation).',
    labelNames: ['job', 'chain', 'contract', 'outcome'],
    registers: [registry],
  });
  const headers = new Counter({
    name: 'erc20_etl_headers_stored_total',
    help: 'Block headers fetched, verified and stored.',
    labelNames: ['job', 'chain'],
    registers: [registry],
  });
  const bloomChecked = new Counter({
    name: 'erc20_etl_transfers_bloom_checked_total',
    help: "Transfers checked against their block header's logsBloom (the contract, the Transfer topic, the from and to topics).",
    labelNames: ['job', 'chain'],
    registers: [registry],
  });
  const chunks = new Histogram({
    name: 'erc20_etl_chunk_duration_seconds',
    help: 'Time to read a chunk to its end, its pages loaded.',
    labelNames: ['job', 'chain', 'contract'],
    buckets: [0.1, 0.5, 1, 5, 15, 60, 300, 900, 3600],
    registers: [registry],
  });
  const lag = new Gauge({
    name: 'erc20_etl_lag_blocks',
    help: "Blocks the job has yet to cover for the contract: from the highest block covered to the chain head at the last run, or to the contract's toBlock when that comes first.",
    labelNames: ['job', 'chain', 'contract'],
    registers: [registry],
  });
  const runs = new Counter({ name: 'erc20_etl_runs_total', help: 'Runs ended, by status.', labelNames: ['job', 'chain', 'status'], registers: [registry] });
  const lastRun = new Gauge({
    name: 'erc20_etl_last_run_end_timestamp_seconds',
    help: 'When the last run of the job ended, by status (Unix time).',
    labelNames: ['job', 'chain', 'status'],
    registers: [registry],
  });

  return {
    registry,
    trackSource(counters) {
      live.add(counters);
      return () => {
        if (!live.delete(counters)) return;
        for (const key of SOURCE_COUNTS) ended[key] = (ended[key] ?? 0) + (counters[key] ?? 0);
        for (const [kind, n] of Object.entries(counters.errors)) ended.errors[kind] = (ended.errors[kind] ?? 0) + n;
      };
    },
    page(of, contract, counts) {
      for (const outcome of ['inserted', 'updated', 'unchanged'] as const) {
        if (counts[outcome]) rows.inc({ ...labelsOf(of), contract, outcome }, counts[outcome]);
      }
    },
    removed(of, contract, n) {
      rows.inc({ ...labelsOf(of), contract, outcome: 'removed' }, n);
    },
    headersStored(of, n) {
      headers.inc(labelsOf(of), n);
    },
    transfersBloomChecked(of, n) {
      bloomChecked.inc(labelsOf(of), n);
    },
    chunkDone(of, contract, seconds) {
      chunks.observe({ ...labelsOf(of), contract }, seconds);
    },
    lag(of, contract, blocks) {
      lag.set({ ...labelsOf(of), contract }, blocks);
    },
    runEnded(of, status, endedAtSeconds) {
      runs.inc({ ...labelsOf(of), status });
      lastRun.set({ ...labelsOf(of), status }, endedAtSeconds);
    },
  };
}
