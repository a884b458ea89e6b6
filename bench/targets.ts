import type { DevnetBenchResult } from './devnet-bench.ts';
import type { ExporterBenchResult, Outcome } from './exporter-bench.ts';
import type { LoadFigures } from './measure-load.ts';
import type { NodeBenchResult } from './node-bench.ts';
import { pairRatiosText, ratioText } from './pairs.ts';

/** One line of the bench's table. `ok` is undefined for a figure without a target of its own. */
export interface TargetRow {
  figure: string;
  measured: string;
  target: string;
  ok?: boolean;
}

export interface TargetInput {
  devnet?: Outcome<DevnetBenchResult>;
  exporter?: ExporterBenchResult;
  pageSize: number;
  concurrency: number;
}

/** The performance targets, each an exact threshold on a figure measured in this run. */
export const TARGETS = {
  serverTransfersPerSecond: 200_000,
  firstLoadVsCopy: 0.8,
  rerunSpeedup: 2,
  latencyShare: 0.9,
  peakRssMb: 200,
  growthRatio: 11,
  /** Node source: eth_getLogs calls refused for size, at most this share of the calls. */
  nodeRefusedShare: 0.1,
  /** Node source: logs per answered eth_getLogs call, on average at least this share of the results cap. */
  nodeMeanLogsShare: 0.5,
  /** Node source: refusals of a second run over the same span, at most. */
  nodeSecondRunRefusals: 2,
  /** Issue 17: `erc20-etl migrate` of a warehouse of a million transfers written before chains, at most (minutes, not hours). */
  upgradeSeconds: 300,
} as const;

/**
 * The rows of the table: each target with what was measured and ✓/✗, and beside them the figures they
 * are made of. A scenario that failed gives one ✗ row saying why.
 *
 * @example targetRows({ exporter, pageSize: 1000, concurrency: 4 })[0] // → { figure: 'first load: rows/s, end to end', measured: '41,233', target: '', ok: undefined }
 */
export function targetRows(input: TargetInput): TargetRow[] {
  const rows: TargetRow[] = [];
  const add = (figure: string, measured: string, target = '', ok?: boolean) => rows.push({ figure, measured, target, ...(ok !== undefined && { ok }) });
  const failed = (what: string, o: { ok: false; error: string }) => add(`${what}: failed`, firstLine(o.error), 'completes', false);

  if (input.devnet?.ok) {
    const d = input.devnet.value;
    add(
      'reference server: transfers served / s (1000-row pages)',
      int(d.transfersPerSecond),
      `≥ ${int(TARGETS.serverTransfersPerSecond)}`,
      d.transfersPerSecond >= TARGETS.serverTransfersPerSecond,
    );
  } else if (input.devnet) failed('reference server', input.devnet);

  const x = input.exporter;
  if (!x) return rows;
  const { baseline, dense, growth, sparse, latency } = x;
  if (dense.ok) {
    const d = dense.value;
    const n = int(d.chain.transfers);
    add(`first load: rows / s end to end (${n} transfers)`, int(d.first.rowsPerSecond));
    add('plain COPY into a copy of token_transfers: rows / s', int(d.copy.rowsPerSecond));
    add('first load ÷ plain COPY', ratioText(d.firstLoadVsCopy, TARGETS.firstLoadVsCopy), `≥ ${TARGETS.firstLoadVsCopy}`, d.firstLoadVsCopy >= TARGETS.firstLoadVsCopy);
    if (d.first.cpuSeconds.postgres !== undefined && d.copy.postgresCpuSeconds) {
      add('PostgreSQL CPU: first load ÷ plain COPY (less noisy than time)', ratio(d.first.cpuSeconds.postgres / d.copy.postgresCpuSeconds));
    }
    add('re-run: time of first load ÷ time of re-run', ratio(d.rerun.speedup), `≥ ${TARGETS.rerunSpeedup}`, d.rerun.speedup >= TARGETS.rerunSpeedup);
    add(
      're-run: token_transfers tuples written (ins + upd + del)',
      `${int(d.rerun.tokenTransfersWritten)} (${int(d.rerun.rowsTouched)} rows by the run)`,
      '0',
      d.rerun.tokenTransfersWritten === 0 && d.rerun.rowsTouched === 0,
    );
    const others = Object.values(d.rerun.otherTablesWritten).reduce((sum, w) => sum + w.inserted + w.updated, 0);
    add('re-run: other tables, tuples inserted + updated (below)', int(others));
    add(`memory: exporter peak RSS, MB (${n} transfers)`, int(d.first.peakRssMb), `≤ ${TARGETS.peakRssMb}`, d.first.peakRssMb <= TARGETS.peakRssMb);
    apiRows(add, 'dense', d.first, input);
    add('API re-run: header calls', int(d.rerun.api.headerCalls), '0', d.rerun.api.headerCalls === 0);
    if (!d.first.exact || !d.rerun.exact) add('dense: warehouse holds exactly the chain', 'no', 'yes', false);
  } else failed('dense (first load, COPY, re-run)', dense);

  if (sparse.ok) {
    apiRows(add, `sparse (${int(sparse.value.chain.transfers)} over ${int(sparse.value.chain.blocks)} blocks)`, sparse.value.load, input);
    if (!sparse.value.load.exact) add('sparse: warehouse holds exactly the chain', 'no', 'yes', false);
  } else failed('sparse', sparse);

  if (latency.ok) {
    const l = latency.value;
    const label = `latency-bound (${l.latencyMs} ms, R = ${l.rateLimit}/s, ${int(l.chain.transfers)} transfers)`;
    add(
      `${label}: rows / s over the run`,
      int(l.runRowsPerSecond),
      `≥ ${int(l.targetRowsPerSecond)} = ${TARGETS.latencyShare} × R × pageSize`,
      l.runRowsPerSecond >= l.targetRowsPerSecond,
    );
    add(
      `${label}: requests (pages + JSON-RPC POSTs of ${l.headerBatchSize} headers, which share R), 429s`,
      `${int(l.load.api.transferRequests)} + ${int(l.load.api.rpcPosts)}, ${int(l.load.api.errors['429'] ?? 0)}`,
    );
    add(`${label}: share of R used over the run`, `${(100 * l.fill).toFixed(1)} %`);
    add(`${label}: rows / s end to end, with process start-up`, int(l.load.rowsPerSecond));
    if (l.readPhaseRowsPerSecond !== undefined) add(`${label}: rows / s while reading pages`, int(l.readPhaseRowsPerSecond));
    apiRows(add, 'latency-bound', l.load, input);
    if (!l.load.exact) add('latency-bound: warehouse holds exactly the chain', 'no', 'yes', false);
  } else failed('latency-bound', latency);

  if (growth.ok) {
    const g = growth.value;
    const label = dense.ok ? `growth: time(${int(dense.value.chain.transfers)}) ÷ time(${int(g.chain.transfers)})` : 'growth';
    add(label, ratio(g.timeRatio), `≤ ${TARGETS.growthRatio}`, Number.isFinite(g.timeRatio) && g.timeRatio <= TARGETS.growthRatio);
    const big = dense.ok ? totalCpu(dense.value.first) : undefined;
    const small = totalCpu(g.load);
    if (big !== undefined && small) add('growth by CPU seconds of all three processes (less noisy than time)', ratio(big / small));
  } else failed('growth', growth);

  if (baseline.ok) {
    add('exporter process doing nothing (--help): wall s', baseline.value.wallSeconds.toFixed(1));
    add('exporter process doing nothing (--help): peak RSS, MB', int(baseline.value.peakRssMb));
  } else failed('baseline (--help)', baseline);
  return rows;
}

/**
 * The node source's rows (issue 16): per error style, the share of eth_getLogs calls refused for size, the mean
 * logs per answered call against the results cap, the second run's refusals and the exporter's memory; for
 * the whole chain, first load ÷ plain COPY, memory and the same counts from the server. A failed part gives one ✗ row.
 *
 * @example nodeTargetRows(node).find((r) => r.figure === 'node infura: eth_getLogs refused for size ÷ calls') // → { measured: '2 ÷ 41 = 4.9 %', target: '≤ 10 %', ok: true }
 */
export function nodeTargetRows(node: NodeBenchResult): TargetRow[] {
  const rows: TargetRow[] = [];
  const add = (figure: string, measured: string, target = '', ok?: boolean) => rows.push({ figure, measured, target, ...(ok !== undefined && { ok }) });
  const cap = node.maxResults;
  const refusedShare = (refused: number, calls: number) => (calls ? refused / calls : Number.NaN);
  const refusedRow = (label: string, refused: number, calls: number) => {
    const share = refusedShare(refused, calls);
    add(
      `${label}: eth_getLogs refused for size ÷ calls`,
      `${int(refused)} ÷ ${int(calls)} = ${percent(share)}`,
      `≤ ${percent(TARGETS.nodeRefusedShare)}`,
      share <= TARGETS.nodeRefusedShare,
    );
  };
  const meanRow = (label: string, mean: number) =>
    add(`${label} ÷ cap`, `${int(mean)} = ${percent(mean / cap)}`, `≥ ${percent(TARGETS.nodeMeanLogsShare)} of ${int(cap)}`, mean / cap >= TARGETS.nodeMeanLogsShare);
  const secondRow = (label: string, refused: number, calls: number) =>
    add(`${label}: second run, eth_getLogs refused`, `${int(refused)} of ${int(calls)} calls`, `≤ ${TARGETS.nodeSecondRunRefusals}`, refused <= TARGETS.nodeSecondRunRefusals);
  const rssRow = (label: string, mb: number) => add(`${label}: exporter peak RSS, MB`, int(mb), `≤ ${TARGETS.peakRssMb}`, mb <= TARGETS.peakRssMb);

  if (node.full?.ok) {
    const f = node.full.value;
    const label = `node ${f.style}, whole chain (${int(f.chain.transfers)} transfers)`;
    add(`${label}: first load rows / s end to end`, int(f.first.rowsPerSecond));
    const spread = f.pairs.length > 1 ? ` (pairs ${pairRatiosText(f.pairs, TARGETS.firstLoadVsCopy)})` : '';
    add(
      `${label}: first load ÷ plain COPY`,
      `${ratioText(f.firstLoadVsCopy, TARGETS.firstLoadVsCopy)}${spread}`,
      `≥ ${TARGETS.firstLoadVsCopy}`,
      f.firstLoadVsCopy >= TARGETS.firstLoadVsCopy,
    );
    // the ratio is the median pair's; a ceiling or a floor is held by every pair's first load (the worst of them)
    const firsts = f.pairs.map((p) => p.first);
    rssRow(label, Math.max(...firsts.map((l) => l.peakRssMb), f.second.peakRssMb));
    // a load of no calls has no share (NaN), and fails the row: it counts as the worst
    const refusedMost = firsts.reduce((w, l) => (!(refusedShare(w.logs.refused, w.logs.calls) >= refusedShare(l.logs.refused, l.logs.calls)) ? l : w));
    refusedRow(`${label}, server's count`, refusedMost.logs.refused, refusedMost.logs.calls);
    meanRow(`${label}: rows ÷ eth_getLogs calls answered`, Math.min(...firsts.map((l) => l.rows / (l.logs.calls - l.logs.refused))));
    secondRow(label, f.second.logs.refused, f.second.logs.calls);
    // the second run follows the last pair's first load, in its warehouse
    add(`${label}: second run ÷ the first load before it, time`, ratio(f.second.wallSeconds / f.pairs.at(-1)!.first.wallSeconds));
    if (!firsts.every((l) => l.exact) || !f.second.exact) add(`${label}: warehouse holds exactly the chain`, 'no', 'yes', false);
  } else if (node.full) add('node, whole chain (first load, COPY, second run): failed', firstLine(node.full.error), 'completes', false);

  const span = node.styles.find((s) => s.result.ok)?.result;
  if (span?.ok) {
    const p = span.value.span;
    add(`node, each style: blocks ${p.fromBlock}–${p.toBlock} (${int(p.transfers)} transfers), results cap ${int(cap)}, through the tap`, '');
  }
  for (const { style, result } of node.styles) {
    const label = `node ${style}`;
    if (!result.ok) {
      add(`${label}: failed`, firstLine(result.error), 'completes', false);
      continue;
    }
    const { first, second } = result.value;
    refusedRow(label, first.logs.refused, first.logs.calls);
    meanRow(`${label}: logs per answered call, mean`, first.logs.meanLogs);
    secondRow(label, second.logs.refused, second.logs.calls);
    rssRow(label, Math.max(first.load.peakRssMb, second.load.peakRssMb));
    for (const [run, r] of [['first', first] as const, ['second', second] as const]) {
      if (r.serverCalls !== r.logs.calls) add(`${label}, ${run} run: eth_getLogs calls, tap = server`, `${int(r.logs.calls)} ≠ ${int(r.serverCalls)}`, 'equal', false);
      if (!r.load.exact) add(`${label}, ${run} run: warehouse holds exactly the span`, 'no', 'yes', false);
    }
  }
  return rows;
}

function apiRows(add: (figure: string, measured: string, target?: string, ok?: boolean) => void, label: string, load: LoadFigures, input: TargetInput) {
  const a = load.api;
  add(
    `API ${label}: getTokenTransfers requests`,
    int(a.transferRequests),
    `≤ ${ratio(a.transferRequestsBound)} (1.01 × ${int(a.pagesNeeded)} + 2 × ${input.concurrency})`,
    a.transferRequests <= a.transferRequestsBound,
  );
  add(`API ${label}: header calls`, int(a.headerCalls), `= ${int(a.headerCallsExpected)} distinct blocks`, a.headerCalls === a.headerCallsExpected);
  add(`API ${label}: header POSTs`, int(a.headerPosts), `= ${int(a.headerPostsExpected)} (calls ÷ ${a.headerBatchSize}, up)`, a.headerPosts === a.headerPostsExpected);
}

/**
 * The table as text: figure, measured, target, ✓/✗ (blank where a figure has no target of its own).
 *
 * @example formatTable([{ figure: 'x', measured: '1', target: '≥ 1', ok: true }]) // → 'figure  measured  target\nx              1  ≥ 1     ✓\n'
 */
export function formatTable(rows: readonly TargetRow[]): string {
  const w = [6, 8, 6];
  for (const r of rows) {
    w[0] = Math.max(w[0]!, r.figure.length);
    w[1] = Math.max(w[1]!, r.measured.length);
    w[2] = Math.max(w[2]!, r.target.length);
  }
  const line = (a: string, b: string, c: string, d: string) => `${a.padEnd(w[0]!)}  ${b.padStart(w[1]!)}  ${c.padEnd(w[2]!)}  ${d}`.trimEnd();
  return [line('figure', 'measured', 'target', ''), ...rows.map((r) => line(r.figure, r.measured, r.target, r.ok === undefined ? '' : r.ok ? '✓' : '✗'))]
    .map((l) => `${l}\n`)
    .join('');
}

/** CPU seconds of the exporter, the server and PostgreSQL together, when all three were measured. */
function totalCpu(load: LoadFigures): number | undefined {
  const { exporter, server, postgres } = load.cpuSeconds;
  return exporter !== undefined && server !== undefined && postgres !== undefined ? exporter + server + postgres : undefined;
}

function int(n: number): string {
  return Number.isFinite(n) ? Math.round(n).toLocaleString('en-US') : 'n/a';
}

function ratio(n: number): string {
  if (!Number.isFinite(n)) return 'n/a';
  return Math.abs(n) < 0.1 && n !== 0 ? n.toPrecision(2) : (Math.round(n * 100) / 100).toString();
}

function percent(share: number): string {
  return Number.isFinite(share) ? `${(100 * share).toFixed(1).replace(/\.0$/, '')} %` : 'n/a';
}

function firstLine(text: string): string {
  const line = text.split('\n')[0] ?? '';
  return line.length > 100 ? `${line.slice(0, 99)}…` : line;
}
