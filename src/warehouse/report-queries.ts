import { sql, type Kysely } from 'kysely';
import type { Database, RunStatus } from './schema.ts';
import { ROWS_FROM_PAGES, runAbandoned } from './runs.ts';

/** Transfers of one token on one UTC day. */
export interface TokenDay {
  /** The chain (decimal text). */
  chainId: string;
  contract: string;
  /** Symbol, else name, else the address. */
  token: string;
  /** `YYYY-MM-DD`, UTC. */
  day: string;
  transfers: number;
  /** Exact: the sum of values scaled by the token's decimals (unscaled when they are unknown), as text. */
  volume: string;
  /** Where that volume is plotted: an approximation, never shown as the value. */
  volumePlot: number;
}

/** One row of the coverage ledger: blocks of a contract some run covered (rows of a contract may overlap). */
export interface CoveredSpan {
  /** The chain (decimal text). */
  chainId: string;
  contract: string;
  /** Symbol, else name, else the address. */
  token: string;
  fromBlock: number;
  toBlock: number;
}

/** One run of the run ledger. */
export interface RunRecord {
  id: string;
  /** The chain of the run's job (decimal text). */
  chainId: string;
  job: string;
  command: string;
  status: RunStatus;
  startedAt: Date;
  finishedAt: Date | null;
  rowsInserted: string;
  rowsUpdated: string;
  rowsUnchanged: string;
  rowsRemoved: string;
  error: string | null;
  /** Marked running, but no process works it (`runAbandoned`): killed or crashed. */
  abandoned: boolean;
}

/**
 * Transfers and volume per chain, token and UTC day over the last `days` UTC days of each chain's data (the day of its
 * newest transfer and the days before it, each whole: a window counted back from the newest transfer's moment cut the
 * first day short, which the chart showed as a day of few transfers), by day, then token.
 */
export async function dailyTransfers(db: Kysely<Database>, days: number): Promise<TokenDay[]> {
  const { rows } = await sql<{ chain_id: string; contract: string; token: string; day: string; transfers: string; volume: string; volume_plot: number }>`
    WITH newest AS (
      SELECT chain_id, max(block_timestamp) AS at FROM token_transfers GROUP BY chain_id
    ), recent AS (
      SELECT t.chain_id, t.contract_address, t.value, t.block_timestamp FROM token_transfers t
      JOIN newest n ON n.chain_id = t.chain_id
      WHERE t.block_timestamp >= (date_trunc('day', n.at AT TIME ZONE 'UTC') - make_interval(days => ${days - 1})) AT TIME ZONE 'UTC'
    ), per_day AS (
      SELECT chain_id, contract_address, to_char(block_timestamp AT TIME ZONE 'UTC', 'YYYY-MM-DD') AS day, count(*) AS transfers, sum(value) AS volume
      FROM recent GROUP BY 1, 2, 3
    )
    SELECT d.chain_id::text AS chain_id, d.contract_address AS contract, coalesce(nullif(k.symbol, ''), nullif(k.name, ''), d.contract_address) AS token, d.day,
      d.transfers::text AS transfers,
      (d.volume * CASE WHEN k.decimals IS NULL THEN 1 ELSE ('1e-' || k.decimals)::numeric END)::text AS volume,
      (d.volume * CASE WHEN k.decimals IS NULL THEN 1 ELSE ('1e-' || k.decimals)::numeric END)::float8 AS volume_plot
    FROM per_day d LEFT JOIN tokens k ON k.chain_id = d.chain_id AND k.contract_address = d.contract_address
    ORDER BY d.day, token, d.chain_id`.execute(db);
  return rows.map((r) => ({
    chainId: r.chain_id,
    contract: r.contract,
    token: r.token,
    day: r.day,
    transfers: Number(r.transfers),
    volume: r.volume,
    volumePlot: Number(r.volume_plot),
  }));
}

/** Every row of the coverage ledger, with its token's name, unmerged. */
export async function coveredSpans(db: Kysely<Database>): Promise<CoveredSpan[]> {
  const { rows } = await sql<{ chain_id: string; contract: string; token: string; from_block: string; to_block: string }>`
    SELECT c.chain_id::text AS chain_id, c.contract_address AS contract, coalesce(nullif(k.symbol, ''), nullif(k.name, ''), c.contract_address) AS token,
      c.from_block::text AS from_block, c.to_block::text AS to_block
    FROM export_coverage c LEFT JOIN tokens k ON k.chain_id = c.chain_id AND k.contract_address = c.contract_address`.execute(db);
  return rows.map((r) => ({ chainId: r.chain_id, contract: r.contract, token: r.token, fromBlock: Number(r.from_block), toBlock: Number(r.to_block) }));
}

/** The last `limit` runs of the run ledger, newest first. */
export async function latestRuns(db: Kysely<Database>, limit: number): Promise<RunRecord[]> {
  const rows = await db
    .selectFrom('export_runs')
    .select(['id', 'chain_id', 'job', 'command', 'status', 'started_at', 'finished_at', 'rows_removed', 'error'])
    .select([ROWS_FROM_PAGES.rows_inserted.as('rows_inserted'), ROWS_FROM_PAGES.rows_updated.as('rows_updated'), ROWS_FROM_PAGES.rows_unchanged.as('rows_unchanged')])
    .select(runAbandoned.as('abandoned'))
    .orderBy('id', 'desc')
    .limit(limit)
    .execute();
  return rows.map((r) => ({
    id: r.id,
    chainId: String(r.chain_id),
    job: r.job,
    command: r.command,
    status: r.status,
    startedAt: r.started_at,
    finishedAt: r.finished_at,
    rowsInserted: r.rows_inserted,
    rowsUpdated: r.rows_updated,
    rowsUnchanged: r.rows_unchanged,
    rowsRemoved: r.rows_removed,
    error: r.error,
    abandoned: r.abandoned,
  }));
}
