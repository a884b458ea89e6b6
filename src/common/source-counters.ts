/**
 * What the source layer did, for the run summary and metrics. Every HTTP attempt counts, retries
 * included. Here in src/common, not src/source, because the run ledger (src/warehouse) and the metrics
 * (src/metrics) read it too, and neither may import src/source.
 */
export interface SourceCounters {
  /** getTokenTransfers attempts (GET). */
  transferRequests: number;
  /** JSON-RPC HTTP attempts (POST), a batch counting once. */
  rpcPosts: number;
  /** `erigon_getHeaderByHash` calls sent, one per hash. */
  headerCalls: number;
  /** Attempts that were followed by another one. */
  retries: number;
  /** Answers with HTTP 429. */
  rateLimited: number;
  /** `eth_getLogs` calls sent (a node source). Optional, like `logsRefused`, so counters written out by older code stay valid. */
  logsCalls?: number;
  /** `eth_getLogs` calls refused as too large, or unanswered in time (`--rpc-timeout`), and asked again in smaller calls. */
  logsRefused?: number;
  /** Of `logsRefused`, the calls unanswered within `--rpc-timeout`. */
  logsTimedOut?: number;
  /** Failed attempts, keyed by HTTP status (`"503"`) or `timeout`, `reset`, `refused`, `dns`, `network`, `tls`, `bad-body`, `too-large`. */
  errors: Record<string, number>;
}

/** @example const counters = createSourceCounters(); counters.retries // → 0 */
export function createSourceCounters(): SourceCounters {
  return { transferRequests: 0, rpcPosts: 0, headerCalls: 0, retries: 0, rateLimited: 0, logsCalls: 0, logsRefused: 0, logsTimedOut: 0, errors: {} };
}

/** Adds one to `errors[key]`. */
export function countError(counters: SourceCounters, key: string | number): void {
  const k = String(key);
  counters.errors[k] = (counters.errors[k] ?? 0) + 1;
}
