import type { ReportData } from './report-data.ts';
import { barChart, escapeHtml, lineChart, spanChart, type Series } from './svg.ts';

const STYLE = `
  body { font: 14px/1.4 system-ui, sans-serif; margin: 24px auto; max-width: 820px; color: #222; }
  h1 { font-size: 22px; } h2 { font-size: 17px; margin-top: 32px; }
  figure { margin: 12px 0; } figcaption { font-weight: 600; margin-bottom: 4px; }
  table { border-collapse: collapse; font-size: 12px; } td, th { border-bottom: 1px solid #ddd; padding: 3px 8px; text-align: right; }
  td:first-child, th:first-child { text-align: left; } .failed { color: #b00; } .empty { color: #777; }`;

/**
 * The report as one HTML page: inline SVG charts and tables, no script, nothing fetched, so it opens
 * anywhere, offline, and can be mailed. Pure.
 *
 * @example reportPage(await readReportData(db, { days: 90, runs: 30, now: new Date() })) // → '<!doctype html>…'
 */
export function reportPage(data: ReportData): string {
  const tokens = [...new Set(data.daily.map((d) => d.token))].sort();
  const series = (pick: (d: ReportData['daily'][number]) => { y: number; text: string }): Series[] =>
    tokens.map((token) => ({
      name: token,
      points: data.daily.filter((d) => d.token === token).map((d) => ({ x: d.day, ...pick(d) })),
    }));
  const sections = [
    `<h2>Daily transfers and volume per token</h2>`,
    data.daily.length
      ? lineChart(
          'Transfers per day (UTC)',
          'transfers',
          series((d) => ({ y: d.transfers, text: String(d.transfers) })),
        ) +
        // one chart per token: volumes in different units (and sizes) do not share an axis
        series((d) => ({ y: d.volumePlot, text: d.volume }))
          .map((s) => lineChart(`Volume per day: ${s.name}`, 'token units', [s]))
          .join('')
      : empty('No transfers in the warehouse yet.'),
    `<h2>Coverage per contract over blocks</h2>`,
    data.coverage.length ? coverageCharts(data) + coverageTable(data) : empty('No range has been completed yet.'),
    `<h2>Recent runs</h2>`,
    data.runs.length
      ? barChart('Rows read per run', 'rows', {
          name: 'rows',
          points: data.runs.map((r) => {
            const rows = Number(r.inserted) + Number(r.updated) + Number(r.unchanged);
            return { x: `#${r.id}`, y: rows, text: `${rows} rows (${r.inserted} inserted, ${r.updated} updated, ${r.removed} removed), ${r.status}` };
          }),
        }) + runsTable(data)
      : empty('No run yet.'),
  ];
  return `<!doctype html>
<html lang="en"><head><meta charset="utf-8"><title>erc20-etl report</title><style>${STYLE}</style></head>
<body><h1>erc20-etl report</h1>
<p>Generated ${escapeHtml(data.generatedAt)}; transfers of the last ${data.days === 1 ? 'day' : `${data.days} days`} of data.</p>
${sections.join('\n')}
</body></html>
`;
}

/**
 * One chart of covered blocks per chain: block numbers of different chains do not share an axis. Where the names
 * carry their chain (`tokenLabels` ends a name with it when the report holds several), the chart's title names the
 * chain instead and its rows leave it out, so a short row name keeps the rest.
 */
function coverageCharts(data: ReportData): string {
  const chains = [...new Set(data.coverage.map((c) => c.chainId))];
  return chains
    .map((chain) => {
      const suffix = ` (chain ${chain})`;
      const rows = data.coverage.filter((c) => c.chainId === chain);
      const named = chains.length > 1 || rows.some((c) => c.token.endsWith(suffix));
      return spanChart(
        named ? `Blocks covered on chain ${chain} (completed ranges)` : 'Blocks covered (completed ranges)',
        rows.map((c) => ({ row: named ? withoutSuffix(c.token, suffix) : c.token, from: c.fromBlock, to: c.toBlock, text: `blocks ${c.fromBlock}–${c.toBlock}` })),
      );
    })
    .join('');
}

const withoutSuffix = (text: string, suffix: string) => (text.endsWith(suffix) ? text.slice(0, -suffix.length) : text);

function empty(text: string): string {
  return `<p class="empty">${escapeHtml(text)}</p>`;
}

function coverageTable(data: ReportData): string {
  const rows = data.coverage.map(
    (c) => `<tr><td>${escapeHtml(c.token)}</td><td>${escapeHtml(c.chainId)}</td><td>${escapeHtml(c.contract)}</td><td>${c.fromBlock}</td><td>${c.toBlock}</td></tr>`,
  );
  return `<table><tr><th>token</th><th>chain</th><th>contract</th><th>from block</th><th>to block</th></tr>${rows.join('')}</table>`;
}

function runsTable(data: ReportData): string {
  const rows = [...data.runs].reverse().map((r) => {
    const cells = [
      `#${r.id}`,
      r.chain,
      r.job,
      r.command,
      r.startedAt,
      r.seconds === null ? '' : r.seconds.toFixed(1),
      r.inserted,
      r.updated,
      r.unchanged,
      r.removed,
      r.status + (r.error ? `: ${r.error}` : ''),
    ];
    return `<tr class="${r.status === 'failed' ? 'failed' : ''}">${cells.map((c) => `<td>${escapeHtml(c)}</td>`).join('')}</tr>`;
  });
  const head = ['run', 'chain', 'job', 'command', 'started', 's', 'inserted', 'updated', 'unchanged', 'removed', 'status'];
  return `<table><tr>${head.map((h) => `<th>${h}</th>`).join('')}</tr>${rows.join('')}</table>`;
}
