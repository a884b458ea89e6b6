import type { BudgetReport } from '../common/time-budget.ts';
import type { RunSummary } from '../pipeline/run-job.ts';
import type { SkippedLogCounts } from '../source/source.ts';
import type { LogsCalls } from './exporter.ts';

/** A run's summary, with what a node source skipped and learned when it says so. */
type SummaryInput = RunSummary & {
  skippedLogs?: ReadonlyMap<string, SkippedLogCounts>;
  logsRange?: number;
  logsRangeKept?: boolean;
  logsBlockLimit?: number;
  logsCalls?: LogsCalls;
};

/**
 * The run's wall time by part (`--time-budget`), seconds and share, and where the whole report went.
 *
 * @example budgetText(report, 'budget.json') // → '  time: parse 1.20 s (31 %), copy 0.90 s (23 %), …, other 0.10 s (3 %); in budget.json\n'
 */
export function budgetText(report: BudgetReport, file: string): string {
  const span = (report.endedAt - report.startedAt) / 1000;
  const parts = (Object.entries(report.seconds) as [string, number][]).map(([part, s]) => `${part} ${s.toFixed(2)} s (${span > 0 ? Math.round((100 * s) / span) : 0} %)`);
  return `  time: ${parts.join(', ')}; in ${file}\n`;
}

/** What a finished run says on stdout: per range, totals, API use, and logs skipped as not ERC-20 transfers. */
export function summaryText(s: SummaryInput): string {
  const t = s.totals;
  const lines = [
    `erc20-etl: job ${s.job}, run #${s.runId} succeeded in ${(s.ms / 1000).toFixed(1)} s (chain head ${s.head})`,
    ...s.ranges.map((r) => `  ${r.contract} blocks ${r.fromBlock}–${r.toBlock}: ${r.rows} rows in the warehouse, ${r.removed} removed`),
    `  rows: ${t.rowsInserted} inserted, ${t.rowsUpdated} updated, ${t.rowsUnchanged} unchanged, ${t.rowsRemoved} removed`,
    `  API: ${t.apiRequests} requests, ${t.retries} retries, ${t.rateLimited} rate-limited; ${t.headersFetched} headers fetched`,
  ];
  const calls = s.logsCalls ? `${logsCallsText(s.logsCalls)}; ` : '';
  if (s.logsRange !== undefined) {
    lines.push(
      s.logsRangeKept === false
        ? `  eth_getLogs: ${calls}${s.logsRange} blocks per call learned, but it could not be stored (a warning in the log says why): the next run of the job starts from the range stored before, else the default`
        : `  eth_getLogs: ${calls}${s.logsRange} blocks per call learned, the next run of the job starts there${
            s.logsBlockLimit === undefined
              ? ''
              : ` and stays under the ${s.logsBlockLimit}-block span the node refused as too wide (asked again every 100 answers, counted across runs)`
          }`,
    );
  } else if (calls) lines.push(`  eth_getLogs: ${calls.slice(0, -2)}`);
  lines.push(...skippedLines(s.skippedLogs));
  if (!s.ranges.length) lines.push(`  nothing to read: no contract has blocks left to read up to the chain head ${s.head}`);
  return `${lines.join('\n')}\n`;
}

/**
 * How many `eth_getLogs` calls a run sent and how many were refused (each asked again in smaller calls: fewer blocks, or one block's contracts apart): a
 * provider may bill refused calls too, and many say its range or `--rpc-timeout` is too tight for the chain.
 *
 * @example logsCallsText({ calls: 158, refused: 3, timedOut: 1 }) // → '158 calls, 3 refused (1 unanswered within --rpc-timeout) and asked again in smaller calls'
 */
export function logsCallsText(c: LogsCalls): string {
  if (c.refused === 0) return `${c.calls} call${c.calls === 1 ? '' : 's'}, none refused`;
  const timedOut = c.timedOut > 0 ? ` (${c.timedOut === c.refused ? (c.refused === 1 ? '' : 'all ') : `${c.timedOut} `}unanswered within --rpc-timeout)` : '';
  return `${c.calls} call${c.calls === 1 ? '' : 's'}, ${c.refused} refused${timedOut} and asked again in smaller calls`;
}

/**
 * One line per contract with logs skipped, sorted by contract; none when nothing was skipped.
 *
 * @example skippedLines(new Map([['0xabc…', { erc721: 12, other: 1 }]]))
 * // → ['  skipped: 0xabc… 12 ERC-721 and 1 other-shaped Transfer log(s): not ERC-20 transfers, not stored']
 */
export function skippedLines(skipped: ReadonlyMap<string, SkippedLogCounts> | undefined): string[] {
  return [...(skipped ?? [])]
    .filter(([, c]) => c.erc721 > 0 || c.other > 0)
    .sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0))
    .map(([contract, c]) => `  skipped: ${contract} ${skippedText(c)}: not ERC-20 transfers, not stored`);
}

/** `12 ERC-721 and 1 other-shaped Transfer log(s)`, naming only the kinds that occurred. */
export function skippedText(c: SkippedLogCounts): string {
  const kinds = [c.erc721 > 0 && `${c.erc721} ERC-721`, c.other > 0 && `${c.other} other-shaped`].filter(Boolean).join(' and ');
  return `${kinds} Transfer log(s)`;
}
