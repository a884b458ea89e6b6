import { spawn } from 'node:child_process';
import { join } from 'node:path';
import { pathToFileURL } from 'node:url';
import { createBenchDatabase, type BenchPostgres } from './bench-database.ts';
import { BIN, REPO_DIR, startDevnetProcess } from './devnet-process.ts';
import { runExporterProcess } from './exporter-process.ts';
import { processMemoryMb } from './process-memory.ts';
import { clockTicksPerSecond } from './proc-stat.ts';
import type { Outcome } from './exporter-bench.ts';
import { formatTable, type TargetRow } from './targets.ts';

const STATUS_RUNS = 5;
const IDLE_RUNS = 3;
/** How long a worker waits on its empty queue before its memory is read. */
const IDLE_SETTLE_MS = 2_000;
const START_TIMEOUT_MS = 60_000;

/** What one way of starting erc20-etl costs before it does any work. Medians. */
export interface StartupFigures {
  /** `erc20-etl status` on an empty, migrated warehouse: spawn to exit. */
  statusSeconds: number;
  /** Its peak resident memory. */
  statusPeakRssMb: number;
  /** Resident memory of `erc20-etl worker` waiting on an empty queue, 2 s after it listens for tasks. */
  idleRssMb: number;
}

export interface StartupBenchResult {
  /** The bin, running the compiled dist/: what users and the docker image run. */
  compiled: StartupFigures;
  /** The TypeScript sources through tsx (`node --import tsx`), for comparison: close to how the bin ran before dist/. */
  fromSources: StartupFigures;
}

/**
 * Node's arguments that run the CLI from the TypeScript sources through tsx (a development dependency),
 * with the command's arguments after them, as the bin would get them.
 */
export function sourceEntry(): string[] {
  const main = pathToFileURL(join(REPO_DIR, 'src', 'cli', 'main.ts')).href;
  const script = `const { main } = await import(${JSON.stringify(main)}); process.exitCode = await main(['node', 'erc20-etl', ...process.argv.slice(1)]);`;
  return ['--import', 'tsx', '--input-type=module', '-e', script, '--'];
}

/**
 * Measures the start-up of `erc20-etl status` and the idle memory of a worker, for the compiled CLI and for
 * the sources through tsx, in a database of its own on the bench's server.
 *
 * @example await benchStartup(server) // → { compiled: { statusSeconds: 0.4, statusPeakRssMb: 80, idleRssMb: 85 }, fromSources: { … } }
 */
export async function benchStartup(postgres: BenchPostgres): Promise<StartupBenchResult> {
  const db = await createBenchDatabase(postgres.serverUrl, 'startup');
  try {
    return { compiled: await startupFigures([BIN], db.url), fromSources: await startupFigures(sourceEntry(), db.url) };
  } finally {
    await db.drop();
  }
}

/**
 * The figures of one way in (`entry`: node's arguments before the command's) against DATABASE_URL, a migrated
 * warehouse with an empty queue.
 */
export async function startupFigures(entry: readonly string[], databaseUrl: string): Promise<StartupFigures> {
  // no CHAIN_API_URL for status (it would ask the API for the head); a worker asks its endpoint's chain once
  // (eth_chainId) before it listens, then nothing while its queue is empty: a small reference server answers it
  const env = { DATABASE_URL: databaseUrl, CHAIN_API_URL: '', LOG_LEVEL: 'info', LOG_FORMAT: 'json' };
  const status = await repeat(STATUS_RUNS, () => statusRun(entry, env));
  const devnet = await startDevnetProcess({ transfers: 100, blocks: 100, tokens: 1 });
  try {
    const idle = await repeat(IDLE_RUNS, () => idleWorkerRssMb(entry, { ...env, CHAIN_API_URL: devnet.apiUrl }));
    return { statusSeconds: median(status.map((s) => s.seconds)), statusPeakRssMb: median(status.map((s) => s.peakRssMb)), idleRssMb: median(idle) };
  } finally {
    await devnet.stop();
  }
}

/**
 * `benchStartup`, for the bench's report: its figures, or what failed (the other scenarios still run).
 *
 * @example const startup = await measureStartup(server, note); formatStartup(startup) // → 'figure … measured …'
 */
export async function measureStartup(postgres: BenchPostgres, note: (line: string) => void): Promise<Outcome<StartupBenchResult>> {
  note(`start-up: erc20-etl status (${STATUS_RUNS} runs) and an idle worker (${IDLE_RUNS}), compiled and through tsx`);
  try {
    return { ok: true, value: await benchStartup(postgres) };
  } catch (err) {
    const error = err instanceof Error ? err.message : String(err);
    note(`start-up: failed: ${error}`);
    return { ok: false, error };
  }
}

/** The figures as the bench's table: the compiled CLI, with the sources through tsx in brackets. */
export function formatStartup(outcome: Outcome<StartupBenchResult>): string {
  if (!outcome.ok) return `start-up: failed: ${outcome.error}\n`;
  const c = outcome.value.compiled;
  const s = outcome.value.fromSources;
  const row = (figure: string, compiled: number, sources: number, text: (n: number) => string): TargetRow => ({
    figure: `${figure} (through tsx from the sources)`,
    measured: `${text(compiled)} (${text(sources)})`,
    target: '≤ through tsx',
    ok: compiled <= sources,
  });
  return formatTable([
    row('start-up: `erc20-etl status`, spawn to exit, s', c.statusSeconds, s.statusSeconds, (n) => n.toFixed(2)),
    row('start-up: `erc20-etl status`, peak RSS, MB', c.statusPeakRssMb, s.statusPeakRssMb, int),
    row('idle RSS: a worker on an empty queue, MB', c.idleRssMb, s.idleRssMb, int),
  ]);
}

async function statusRun(entry: readonly string[], env: Record<string, string>): Promise<{ seconds: number; peakRssMb: number }> {
  const run = await runExporterProcess(['status'], env, { ticksPerSecond: clockTicksPerSecond() }, { intervalMs: 10, timeoutMs: START_TIMEOUT_MS }, entry);
  if (run.code !== 0) throw new Error(`erc20-etl status exited with ${run.code}: ${run.stderrTail.slice(-500)}`);
  return { seconds: run.wallSeconds, peakRssMb: run.peakRssMb };
}

/** Starts `erc20-etl worker`, waits until it listens for tasks and a little longer, reads its RSS, and stops it. */
async function idleWorkerRssMb(entry: readonly string[], env: Record<string, string>): Promise<number> {
  const child = spawn(process.execPath, [...entry, 'worker', '--concurrency', '1'], { cwd: REPO_DIR, env: { ...process.env, ...env }, stdio: ['ignore', 'ignore', 'pipe'] });
  const exited = new Promise<number | null>((resolve) => child.once('exit', (code) => resolve(code)));
  try {
    let log = '';
    await new Promise<void>((resolve, reject) => {
      const timer = setTimeout(() => reject(new Error(`erc20-etl worker did not listen for tasks within ${START_TIMEOUT_MS / 1000} s: ${log.slice(-500)}`)), START_TIMEOUT_MS);
      child.stderr.on('data', (d: Buffer) => {
        log = `${log}${d.toString()}`.slice(-32_000);
        if (log.includes('worker listening for tasks')) {
          clearTimeout(timer);
          resolve();
        }
      });
      void exited.then((code) => {
        clearTimeout(timer);
        reject(new Error(`erc20-etl worker exited with ${code} before it listened for tasks: ${log.slice(-500)}`));
      });
    });
    await new Promise((resolve) => setTimeout(resolve, IDLE_SETTLE_MS));
    return processMemoryMb(child.pid!).rssMb;
  } finally {
    child.kill('SIGTERM');
    const killer = setTimeout(() => child.kill('SIGKILL'), 10_000);
    await exited;
    clearTimeout(killer);
  }
}

async function repeat<T>(times: number, run: () => Promise<T>): Promise<T[]> {
  const results: T[] = [];
  for (let i = 0; i < times; i++) results.push(await run());
  return results;
}

function median(values: number[]): number {
  const sorted = [...values].sort((a, b) => a - b);
  return sorted[Math.floor(sorted.length / 2)]!;
}

function int(n: number): string {
  return Math.round(n).toLocaleString('en-US');
}
