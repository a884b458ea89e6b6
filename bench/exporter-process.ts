import { spawn } from 'node:child_process';
import type { DevnetStats } from '../src/devnet/stats.ts';
import { BIN, REPO_DIR } from './devnet-process.ts';
import { processMemoryMb } from './process-memory.ts';
import { readProcStat } from './proc-stat.ts';

/** One look at the run, taken every `intervalMs` while the exporter lives. Missing fields could not be read. */
export interface Sample {
  /** `Date.now()` of the sample. */
  at: number;
  exporterCpuSeconds?: number;
  exporterRssMb?: number;
  /** VmHWM: the exporter's peak resident memory so far. */
  exporterPeakRssMb?: number;
  serverCpuSeconds?: number;
  postgresCpuSeconds?: number;
  /** Pages the server has answered: getTokenTransfers requests, or eth_getLogs calls for a node source. */
  transferRequests?: number;
  headerCalls?: number;
}

export interface Probes {
  ticksPerSecond: number;
  serverPid?: number;
  /** CPU seconds of the PostgreSQL server so far, when it runs on this machine. */
  postgresCpu?: () => number | undefined;
  serverStats?: () => Promise<DevnetStats>;
}

export interface RunLimits {
  /** Sampling interval. Default 200 ms. */
  intervalMs?: number;
  /** Past this, `onTimeout` runs and the process is stopped (SIGTERM, then SIGKILL). Default: no limit. */
  timeoutMs?: number;
  /** Called once at the timeout, before the process is stopped: to record what it was doing. */
  onTimeout?: () => Promise<void>;
}

export interface ExporterRun {
  code: number | null;
  /** It ran past `timeoutMs` and was stopped. */
  timedOut: boolean;
  /** `Date.now()` at spawn and at exit. */
  startedAt: number;
  endedAt: number;
  wallSeconds: number;
  /** Peak resident memory of the exporter process (VmHWM, read until just before it ended). */
  peakRssMb: number;
  /** Seconds after spawn when that peak was first seen. */
  peakAtSeconds: number;
  samples: Sample[];
  stdout: string;
  /** The last part of its stderr (pino JSON lines). */
  stderrTail: string;
}

const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

/**
 * Runs `erc20-etl ARGS…` in its own process to its end, timing it wall-clock and sampling its CPU and memory
 * (from /proc), the server's CPU, PostgreSQL's CPU and the server's request counters as it goes; stops it
 * when it runs past `limits.timeoutMs`. `entry` is what node runs before ARGS: the bin (the compiled CLI), or
 * another way in, such as the TypeScript sources through tsx (`sourceEntry` in startup-bench.ts).
 *
 * @example
 * const run = await runExporterProcess(['backfill', '--contract', a, '--from', '1', '--to', '9'], { DATABASE_URL, CHAIN_API_URL }, probes);
 * run.code // → 0
 */
export async function runExporterProcess(
  args: readonly string[],
  env: Record<string, string>,
  probes: Probes,
  limits: RunLimits = {},
  entry: readonly string[] = [BIN],
): Promise<ExporterRun> {
  const intervalMs = limits.intervalMs ?? 200;
  const samples: Sample[] = [];
  samples.push(await serverSample(probes));
  const startedAt = Date.now();
  const child = spawn(process.execPath, [...entry, ...args], { cwd: REPO_DIR, env: { ...process.env, LOG_LEVEL: 'info', ...env }, stdio: ['ignore', 'pipe', 'pipe'] });
  let stdout = '';
  let stderrTail = '';
  child.stdout.on('data', (d: Buffer) => (stdout += d.toString()));
  child.stderr.on('data', (d: Buffer) => (stderrTail = `${stderrTail}${d.toString()}`.slice(-32_000)));
  let code: number | null | undefined;
  let endedAt = 0;
  // 'close' comes after 'exit', once stdout and stderr are read to their end
  const closed = new Promise<void>((resolve) => child.once('close', () => resolve()));
  const exited = new Promise<void>((resolve, reject) => {
    child.once('error', reject);
    child.once('exit', (c) => {
      endedAt = Date.now();
      code = c;
      resolve();
    });
  });
  const pid = child.pid!;
  const take = async (exporterAlive: boolean) => {
    const s: Sample = { at: Date.now() };
    if (exporterAlive) {
      const stat = readProcStat(pid);
      if (stat) s.exporterCpuSeconds = stat.ownTicks / probes.ticksPerSecond;
      try {
        const memory = processMemoryMb(pid);
        if (Number.isFinite(memory.rssMb)) s.exporterRssMb = memory.rssMb;
        if (Number.isFinite(memory.peakRssMb)) s.exporterPeakRssMb = memory.peakRssMb;
      } catch {
        // it ended between two reads
      }
    }
    samples.push({ ...(await serverSample(probes)), ...s });
  };
  let timedOut = false;
  while (code === undefined) {
    await take(true);
    await Promise.race([exited, sleep(intervalMs)]);
    if (code === undefined && !timedOut && limits.timeoutMs !== undefined && Date.now() - startedAt > limits.timeoutMs) {
      timedOut = true;
      await limits.onTimeout?.().catch(() => undefined);
      child.kill('SIGTERM');
      setTimeout(() => child.kill('SIGKILL'), 10_000).unref();
    }
  }
  await exited;
  await take(false);
  await closed;
  const peaks = samples.filter((s) => s.exporterPeakRssMb !== undefined);
  const peakRssMb = Math.max(0, ...peaks.map((s) => s.exporterPeakRssMb!));
  const firstAtPeak = peaks.find((s) => s.exporterPeakRssMb === peakRssMb);
  return {
    code: code ?? null,
    timedOut,
    startedAt,
    endedAt,
    wallSeconds: (endedAt - startedAt) / 1000,
    peakRssMb,
    peakAtSeconds: firstAtPeak ? (firstAtPeak.at - startedAt) / 1000 : 0,
    samples,
    stdout,
    stderrTail,
  };
}

/** The server's and PostgreSQL's side of a sample. */
async function serverSample(probes: Probes): Promise<Sample> {
  const s: Sample = { at: Date.now() };
  if (probes.serverPid !== undefined) {
    const stat = readProcStat(probes.serverPid);
    if (stat) s.serverCpuSeconds = stat.ownTicks / probes.ticksPerSecond;
  }
  const pgCpu = probes.postgresCpu?.();
  if (pgCpu !== undefined) s.postgresCpuSeconds = pgCpu;
  const stats = await probes.serverStats?.().catch(() => undefined);
  if (stats) {
    s.transferRequests = pagesServed(stats);
    s.headerCalls = stats.rpcCalls['erigon_getHeaderByHash'] ?? 0;
  }
  return s;
}

/** Pages a run has read, through either source: getTokenTransfers requests, and eth_getLogs calls (one per page of a node source). */
export function pagesServed(stats: DevnetStats): number {
  return stats.getTokenTransfers + (stats.rpcCalls['eth_getLogs'] ?? 0);
}
