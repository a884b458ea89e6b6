import { BUILT_LOOKUP_INDEXES } from '../src/pipeline/lookup-indexes.ts';
import type { Sample } from './exporter-process.ts';

/** A stretch of one exporter run, and the CPU each process spent in it. */
export interface Phase {
  name: string;
  seconds: number;
  exporterCpuSeconds?: number;
  serverCpuSeconds?: number;
  postgresCpuSeconds?: number;
  /** The exporter's largest resident memory sampled in the phase. */
  exporterRssMb?: number;
}

export interface PhaseMarks {
  /** `Date.now()` of the spawn and of the exit. */
  spawnedAt: number;
  exitedAt: number;
  /** From export_runs and export_coverage (undefined when the run did not get there). */
  runStartedAt?: number;
  reconcileStartedAt?: number;
  /** When the run began building the lookup indexes its first load dropped (`indexBuildStart` of its log). */
  indexBuildStartedAt?: number;
  runFinishedAt?: number;
  /** The server's final counters for the run. */
  transferRequests: number;
  headerCalls: number;
}

type CpuKey = 'exporterCpuSeconds' | 'serverCpuSeconds' | 'postgresCpuSeconds';
const CPU_KEYS: readonly CpuKey[] = ['exporterCpuSeconds', 'serverCpuSeconds', 'postgresCpuSeconds'];

/**
 * Splits a run into phases at the marks it left: start-up (spawn → run row written), reading pages
 * (→ the server has served the last page), finding the missing headers (→ the first header call),
 * fetching headers (→ the builds, or the reconciliation transaction, start), reconciling (→ the run row is closed),
 * and exit. When the first header call comes before the last page, headers were fetched alongside the pages:
 * the phases are then reading pages and fetching headers, and fetching the last headers. A first load that built
 * its lookup indexes after its rows (`indexBuildStartedAt`) closes its ranges meanwhile: the builds and the
 * reconciliation are one phase, from the builds' start (any wait for the indexes' lock counted in it). A mark
 * that is missing merges its two phases; the page and header marks come from the samples, so they are as fine as the
 * sampling interval, and never later than the builds (which begin once every page and header is in). CPU per phase
 * is interpolated between samples; memory is the largest sample in the phase.
 *
 * @example splitPhases(marks, samples) // → [{ name: 'start-up', seconds: 1.2, exporterCpuSeconds: 1.4, … }, { name: 'read pages', … }, …]
 */
export function splitPhases(marks: PhaseMarks, samples: readonly Sample[]): Phase[] {
  const firstAt = (reached: (s: Sample) => boolean) => samples.find(reached)?.at;
  const lastPageAt = marks.transferRequests > 0 ? firstAt((s) => (s.transferRequests ?? -1) >= marks.transferRequests) : undefined;
  const firstHeaderAt = marks.headerCalls > 0 ? firstAt((s) => (s.headerCalls ?? 0) > 0) : undefined;
  // headers fetched while pages are read (the exporter does that for the ranges it plans) share the phase
  const alongside = firstHeaderAt !== undefined && lastPageAt !== undefined && firstHeaderAt < lastPageAt;
  const built = marks.indexBuildStartedAt;
  // a sample that first showed the last page (or a header call) after the builds began came late: the builds' mark,
  // from the run's own log, is exact
  const notAfterBuilds = (at: number | undefined) => (at === undefined || built === undefined ? at : Math.min(at, built));
  // the headers' last phase ends where the builds begin, when the run built the indexes
  const headersEnd = built ?? marks.reconcileStartedAt;
  const cuts: { name: string; at: number | undefined }[] = [
    { name: 'start-up', at: marks.runStartedAt },
    ...(alongside
      ? [
          { name: 'read pages and fetch headers', at: notAfterBuilds(lastPageAt) },
          { name: 'fetch the last headers', at: headersEnd },
        ]
      : [
          { name: 'read pages', at: notAfterBuilds(lastPageAt) },
          { name: 'find missing headers', at: notAfterBuilds(firstHeaderAt) },
          { name: 'fetch headers', at: headersEnd },
        ]),
    // a first load closes its ranges while it builds the indexes: one phase
    { name: built === undefined ? 'reconcile' : 'build the lookup indexes and reconcile', at: marks.runFinishedAt },
    { name: 'exit', at: marks.exitedAt },
  ];
  const phases: Phase[] = [];
  let from = marks.spawnedAt;
  let names: string[] = [];
  for (const cut of cuts) {
    names.push(cut.name);
    if (cut.at === undefined) continue;
    const to = Math.min(Math.max(cut.at, from), marks.exitedAt);
    const phase: Phase = { name: names.join(' + '), seconds: (to - from) / 1000 };
    for (const key of CPU_KEYS) {
      const a = cpuAt(samples, key, from);
      const b = cpuAt(samples, key, to);
      if (a !== undefined && b !== undefined) phase[key] = Math.max(0, b - a);
    }
    const rss = samples.filter((s) => s.at > from && s.at <= to && s.exporterRssMb !== undefined).map((s) => s.exporterRssMb!);
    if (rss.length) phase.exporterRssMb = Math.max(...rss);
    phases.push(phase);
    from = to;
    names = [];
  }
  return phases;
}

/** The value of a cumulative CPU counter at time `at`, interpolated linearly between the samples around it. */
export function cpuAt(samples: readonly Sample[], key: CpuKey, at: number): number | undefined {
  let before: Sample | undefined;
  let after: Sample | undefined;
  for (const s of samples) {
    if (s[key] === undefined) continue;
    if (s.at <= at) before = s;
    else {
      after = s;
      break;
    }
  }
  // before its first sample the exporter did not exist yet; the servers had spent what they had
  if (!before) return after === undefined ? undefined : key === 'exporterCpuSeconds' ? 0 : after[key];
  if (!after) return before[key];
  const a = before[key]!;
  const b = after[key]!;
  return a + ((b - a) * (at - before.at)) / (after.at - before.at);
}

/**
 * When a run began building the lookup indexes its first load deferred, from its log (pino's JSON lines, as much of
 * them as was kept): the time of its last `built the lookup indexes` line less the `ms` the builds took. Undefined when
 * no such line is there: no build, the line no longer in the part of the log kept, or a log not in JSON.
 *
 * @example indexBuildStart('{"time":1700000005000,"msg":"built the lookup indexes","ms":800}\n') // → 1700000004200
 */
export function indexBuildStart(log: string): number | undefined {
  let start: number | undefined;
  for (const line of log.split('\n')) {
    if (!line.includes(BUILT_LOOKUP_INDEXES)) continue;
    try {
      const entry = JSON.parse(line) as { msg?: unknown; time?: unknown; ms?: unknown };
      if (entry.msg === BUILT_LOOKUP_INDEXES && typeof entry.time === 'number' && typeof entry.ms === 'number') start = entry.time - entry.ms;
    } catch {
      // not a JSON line: cut where the kept part of the log begins, or text that only mentions the builds
    }
  }
  return start;
}
