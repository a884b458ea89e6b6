import { sql, type Kysely } from 'kysely';
import type { Database } from '../warehouse/schema.ts';
import { mergeSpans } from '../common/spans.ts';

export interface DailyRow {
  contract: string;
  /** Symbol, else name, else the address. */
  token: string;
  day: string;
  transfers: number;
  /** Exact: the sum of values scaled by the token's decimals (unscaled when they are unknown), as text. */
  volume: string;
  /** Where that volume is plotted: an approximation, never shown as the value. */
  volumePlot: number;
}

export interface CoverageRow {
  contract: string;
  token: string;
  fromBlock: number;
  toBlock: number;
}

export interface RunRow {
  id: string;
  job: string;
  command: string;
  status: string;
  startedAt: string;
  seconds: number | null;
  inserted: string;
  updated: string;
  unchanged: string;
  removed: string;
  error: string | null;
}

export interface ReportData {
  generatedAt: string;
  days: number;
  daily: DailyRow[];
  coverage: CoverageRow[];
  runs: RunRow[];
}

/**
 * What the report shows, read in one go: transfers and volume per token and UTC day over the last `days`
 * days of data (counted back from the newest transfer), each contract's covered blocks (merged), and the
 * last `runs` runs.
 *
 * @example await readReportData(db, { days: 90, runs: 30, now: new Date() }) // → { daily: [...], coverage: [...], runs: [...] }
 */
export async function readReportData(db: Kysely<Database>, options: { days: number; runs: number; now: Date }): Promise<ReportData> {
  const daily = await sql<{ contract: string; token: string; day: string; transfers: string; volume: string; volume_plot: number }>`
    WITH recent AS (
      SELECT t.contract_address, t.value, t.block_timestamp FROM token_transfers t
      WHERE t.block_timestamp > (SELECT max(block_timestamp) FROM token_transfers) - make_interval(days => ${options.days})
    ), per_day AS (
      SELECT contract_address, to_char(block_timestamp AT TIME ZONE 'UTC', 'YYYY-MM-DD') AS day, count(*) AS transfers, sum(value) AS volume
      FROM recent GROUP BY 1, 2
    )
    SELECT d.contract_address AS contract, coalesce(nullif(k.symbol, ''), nullif(k.name, ''), d.contract_address) AS token, d.day,
      d.transfers::text AS transfers,
      (d.volume * CASE WHEN k.decimals IS NULL THEN 1 ELSE ('1e-' || k.decimals)::numeric END)::text AS volume,
      (d.volume * CASE WHEN k.decimals IS NULL THEN 1 ELSE ('1e-' || k.decimals)::numeric END)::float8 AS volume_plot
    FROM per_day d LEFT JOIN tokens k ON k.contract_address = d.contract_address
    ORDER BY d.day, token`.execute(db);

  const covered = await sql<{ contract: string; token: string; from_block: string; to_block: string }>`
    SELECT c.contract_address AS contract, coalesce(nullif(k.symbol, ''), nullif(k.name, ''), c.contract_address) AS token,
      c.from_block::text AS from_block, c.to_block::text AS to_block
    FROM export_coverage c LEFT JOIN tokens k ON k.contract_address = c.contract_address`.execute(db);
  const byContract = new Map<string, { token: string; spans: { fromBlock: number; toBlock: number }[] }>();
  for (const r of covered.rows) {
    const entry = byContract.get(r.contract) ?? { token: r.token, spans: [] };
    entry.spans.push({ fromBlock: Number(r.from_block), toBlock: Number(r.to_block) });
    byContract.set(r.contract, entry);
  }
  const coverage = [...byContract].flatMap(([contract, { token, spans }]) => mergeSpans(spans).map((s) => ({ contract, token, ...s })));

  const runs = await db
    .selectFrom('export_runs')
    .select(['id', 'job', 'command', 'status', 'started_at', 'finished_at', 'rows_inserted', 'rows_updated', 'rows_unchanged', 'rows_removed', 'error'])
    .orderBy('id', 'desc')
    .limit(options.runs)
    .execute();

  return {
    generatedAt: options.now.toISOString(),
    days: options.days,
    daily: daily.rows.map((r) => ({ contract: r.contract, token: r.token, day: r.day, transfers: Number(r.transfers), volume: r.volume, volumePlot: Number(r.volume_plot) })),
    coverage,
    runs: runs.reverse().map((r) => ({
      id: r.id,
      job: r.job,
      command: r.command,
      status: r.status,
      startedAt: r.started_at.toISOString(),
      seconds: r.finished_at ? (r.finished_at.getTime() - r.started_at.getTime()) / 1000 : null,
      inserted: r.rows_inserted,
      updated: r.rows_updated,
      unchanged: r.rows_unchanged,
      removed: r.rows_removed,
      error: r.error,
    })),
  };
}
