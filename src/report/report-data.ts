import { mergeSpans } from '../common/spans.ts';
import type { Warehouse } from '../warehouse/db.ts';
import { tokenLabels } from './token-labels.ts';
import { coveredSpans, dailyTransfers, latestRuns, type CoveredSpan, type TokenDay } from '../warehouse/report-queries.ts';

/** Transfers and volume of one token on one UTC day. */
export type DailyRow = TokenDay;

/** Blocks of a contract covered without a gap. */
export type CoverageRow = CoveredSpan;

export interface RunRow {
  id: string;
  /** The chain of the run's job (decimal text). */
  chain: string;
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
 * UTC days of each chain's data (the newest transfer's day and those before it, whole), each contract's covered blocks (merged), and the
 * last `runs` runs, oldest first.
 *
 * @example await readReportData(warehouse.db, { days: 90, runs: 30, now: new Date() }) // → { daily: [...], coverage: [...], runs: [...] }
 */
export async function readReportData(db: Warehouse['db'], options: { days: number; runs: number; now: Date }): Promise<ReportData> {
  const days = await dailyTransfers(db, options.days);
  const spans = await coveredSpans(db);
  // one name per (chain, contract): a chart's series and rows are keyed by it
  const label = tokenLabels([...days, ...spans]);
  const daily = days.map((d) => ({ ...d, token: label(d) }));

  const byContract = new Map<string, { chainId: string; contract: string; token: string; spans: { fromBlock: number; toBlock: number }[] }>();
  for (const r of spans) {
    const key = `${r.chainId}:${r.contract}`;
    const entry = byContract.get(key) ?? { chainId: r.chainId, contract: r.contract, token: label(r), spans: [] };
    entry.spans.push({ fromBlock: r.fromBlock, toBlock: r.toBlock });
    byContract.set(key, entry);
  }
  const coverage = [...byContract.values()].flatMap(({ chainId, contract, token, spans }) => mergeSpans(spans).map((s) => ({ chainId, contract, token, ...s })));

  const runs = await latestRuns(db, options.runs);

  return {
    generatedAt: options.now.toISOString(),
    days: options.days,
    daily,
    coverage,
    runs: runs.reverse().map((r) => ({
      id: r.id,
      chain: r.chainId,
      job: r.job,
      command: r.command,
      // as status says it: a run marked running that no process works was killed or crashed
      status: r.abandoned ? 'ended without finishing (killed or crashed)' : r.status,
      startedAt: r.startedAt.toISOString(),
      seconds: r.finishedAt ? (r.finishedAt.getTime() - r.startedAt.getTime()) / 1000 : null,
      inserted: r.rowsInserted,
      updated: r.rowsUpdated,
      unchanged: r.rowsUnchanged,
      removed: r.rowsRemoved,
      error: r.error,
    })),
  };
}
