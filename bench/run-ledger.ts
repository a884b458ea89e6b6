import type pg from 'pg';

/** The exporter's own record of its last run (export_runs), with when its reconciliation began. */
export interface LedgerRun {
  id: string;
  status: string;
  startedAt: number;
  finishedAt?: number;
  /** Start of the reconciliation transaction: `now()` of the coverage rows it wrote. */
  reconcileStartedAt?: number;
  rowsInserted: number;
  rowsUpdated: number;
  rowsUnchanged: number;
  apiRequests: number;
  headersFetched: number;
  error?: string;
}

/**
 * Reads the newest row of export_runs, and `min(export_coverage.completed_at)` of that run. Times are
 * `Date.now()`-comparable milliseconds (the server's clock: the same as the bench's when it is local).
 *
 * @example const run = await lastRun(client); run.status // → 'succeeded'
 */
export async function lastRun(client: pg.Client): Promise<LedgerRun | undefined> {
  const { rows } = await client.query<{
    id: string;
    status: string;
    started_at: Date;
    finished_at: Date | null;
    reconcile_at: Date | null;
    rows_inserted: string;
    rows_updated: string;
    rows_unchanged: string;
    api_requests: string;
    headers_fetched: string;
    error: string | null;
  }>(`
    SELECT r.id::text, r.status, r.started_at, r.finished_at,
           (SELECT min(c.completed_at) FROM export_coverage c WHERE c.run_id = r.id) AS reconcile_at,
           r.rows_inserted::text, r.rows_updated::text, r.rows_unchanged::text, r.api_requests::text, r.headers_fetched::text, r.error
    FROM export_runs r ORDER BY r.id DESC LIMIT 1`);
  const r = rows[0];
  if (!r) return undefined;
  return {
    id: r.id,
    status: r.status,
    startedAt: r.started_at.getTime(),
    ...(r.finished_at && { finishedAt: r.finished_at.getTime() }),
    ...(r.reconcile_at && { reconcileStartedAt: r.reconcile_at.getTime() }),
    rowsInserted: Number(r.rows_inserted),
    rowsUpdated: Number(r.rows_updated),
    rowsUnchanged: Number(r.rows_unchanged),
    apiRequests: Number(r.api_requests),
    headersFetched: Number(r.headers_fetched),
    ...(r.error !== null && { error: r.error }),
  };
}

/**
 * Rows of token_transfers a run inserted or last updated, by its provenance columns: a re-run that changes
 * nothing has none.
 *
 * @example await rowsTouchedBy(client, '2') // → 0
 */
export async function rowsTouchedBy(client: pg.Client, runId: string): Promise<number> {
  const { rows } = await client.query<{ n: string }>('SELECT count(*)::text AS n FROM token_transfers WHERE inserted_by_run = $1 OR updated_by_run = $1', [runId]);
  return Number(rows[0]!.n);
}

/** What the warehouse holds after a run: transfers and stored headers. */
export async function warehouseCounts(client: pg.Client): Promise<{ transfers: number; headers: number }> {
  const { rows } = await client.query<{ transfers: string; headers: string }>(
    'SELECT (SELECT count(*) FROM token_transfers)::text AS transfers, (SELECT count(*) FROM block_headers)::text AS headers',
  );
  return { transfers: Number(rows[0]!.transfers), headers: Number(rows[0]!.headers) };
}

/**
 * What the other sessions of the database are executing right now, and for how long: where a run that
 * does not end is stuck.
 *
 * @example await runningStatements(client) // → ['688 s: WITH gone AS ( DELETE FROM token_transfers t WHERE …']
 */
export async function runningStatements(client: pg.Client): Promise<string[]> {
  const { rows } = await client.query<{ seconds: number; query: string }>(
    `SELECT extract(epoch FROM now() - query_start)::int AS seconds, left(regexp_replace(query, '\\s+', ' ', 'g'), 160) AS query
     FROM pg_stat_activity
     WHERE datname = current_database() AND state = 'active' AND pid <> pg_backend_pid() AND backend_type = 'client backend'
     ORDER BY query_start`,
  );
  return rows.map((r) => `${r.seconds} s: ${r.query.trim()}`);
}

/**
 * The `eth_getLogs` range (blocks per call) a node source stored last (logs_ranges: per job and endpoint host),
 * or undefined when none is stored: what the next run of that job against that host starts from.
 *
 * @example await lastLearnedLogsRange(client) // → 2310
 */
export async function lastLearnedLogsRange(client: pg.Client): Promise<number | undefined> {
  const { rows } = await client.query<{ blocks: number }>('SELECT blocks FROM logs_ranges ORDER BY updated_at DESC LIMIT 1');
  return rows[0]?.blocks;
}
