import type { RunSummary } from '../pipeline/run-job.ts';

/** What a finished run says on stdout: per range, totals, and API use. */
export function summaryText(s: RunSummary): string {
  const t = s.totals;
  const lines = [
    `erc20-etl: job ${s.job}, run #${s.runId} succeeded in ${(s.ms / 1000).toFixed(1)} s (chain head ${s.head})`,
    ...s.ranges.map((r) => `  ${r.contract} blocks ${r.fromBlock}–${r.toBlock}: ${r.rows} rows in the warehouse, ${r.removed} removed`),
    `  rows: ${t.rowsInserted} inserted, ${t.rowsUpdated} updated, ${t.rowsUnchanged} unchanged, ${t.rowsRemoved} removed`,
    `  API: ${t.apiRequests} requests, ${t.retries} retries, ${t.rateLimited} rate-limited; ${t.headersFetched} headers fetched`,
  ];
  if (!s.ranges.length) lines.push('  nothing to do: every contract is up to date');
  return `${lines.join('\n')}\n`;
}
