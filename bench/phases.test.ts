import { describe, expect, it } from 'vitest';
import type { Sample } from './exporter-process.ts';
import { cpuAt, indexBuildStart, splitPhases } from './phases.ts';

const samples: Sample[] = [
  { at: 1000, serverCpuSeconds: 10, postgresCpuSeconds: 100, transferRequests: 0, headerCalls: 0 },
  { at: 1500, exporterCpuSeconds: 0.5, serverCpuSeconds: 10, postgresCpuSeconds: 100, transferRequests: 0, headerCalls: 0 },
  { at: 2500, exporterCpuSeconds: 1.0, exporterRssMb: 120, serverCpuSeconds: 10.5, postgresCpuSeconds: 101, transferRequests: 5, headerCalls: 0 },
  { at: 3500, exporterCpuSeconds: 2.0, exporterRssMb: 150, serverCpuSeconds: 11, postgresCpuSeconds: 103, transferRequests: 10, headerCalls: 0 },
  { at: 4500, exporterCpuSeconds: 2.5, serverCpuSeconds: 11.5, postgresCpuSeconds: 104, transferRequests: 10, headerCalls: 200 },
  { at: 6000, serverCpuSeconds: 11.5, postgresCpuSeconds: 106, transferRequests: 10, headerCalls: 300 },
];

describe('splitPhases', () => {
  it('cuts a first load at the run row, the last page, the first header call, the reconciliation and the run close', () => {
    const phases = splitPhases(
      { spawnedAt: 1000, runStartedAt: 2000, reconcileStartedAt: 5000, runFinishedAt: 5500, exitedAt: 6000, transferRequests: 10, headerCalls: 300 },
      samples,
    );
    expect(phases.map((p) => [p.name, p.seconds])).toEqual([
      ['start-up', 1],
      ['read pages', 1.5],
      ['find missing headers', 1],
      ['fetch headers', 0.5],
      ['reconcile', 0.5],
      ['exit', 0.5],
    ]);
    // the exporter did not exist before its first sample; the server had spent 10 s before the run
    expect(phases[0]).toMatchObject({ exporterCpuSeconds: 0.75, serverCpuSeconds: 0.25, postgresCpuSeconds: 0.5 });
    expect(phases[1]!.exporterCpuSeconds).toBeCloseTo(1.25);
    expect(phases.map((p) => p.exporterRssMb)).toEqual([undefined, 150, undefined, undefined, undefined, undefined]);
  });

  it('merges the header phases of a run that fetched no header', () => {
    const phases = splitPhases(
      { spawnedAt: 1000, runStartedAt: 2000, reconcileStartedAt: 5000, runFinishedAt: 5500, exitedAt: 6000, transferRequests: 10, headerCalls: 0 },
      samples,
    );
    expect(phases.map((p) => p.name)).toEqual(['start-up', 'read pages', 'find missing headers + fetch headers', 'reconcile', 'exit']);
    expect(phases.reduce((sum, p) => sum + p.seconds, 0)).toBeCloseTo(5);
  });

  it('shows headers fetched alongside the pages as one phase, and the last ones after it', () => {
    const early: Sample[] = samples.map((x) => (x.at === 2500 ? { ...x, headerCalls: 100 } : x.at === 3500 ? { ...x, headerCalls: 200 } : x));
    const phases = splitPhases(
      { spawnedAt: 1000, runStartedAt: 2000, reconcileStartedAt: 5000, runFinishedAt: 5500, exitedAt: 6000, transferRequests: 10, headerCalls: 300 },
      early,
    );
    expect(phases.map((p) => [p.name, p.seconds])).toEqual([
      ['start-up', 1],
      ['read pages and fetch headers', 1.5],
      ['fetch the last headers', 1.5],
      ['reconcile', 0.5],
      ['exit', 0.5],
    ]);
  });

  it('shows a first load’s build of its lookup indexes and its reconciliation, which go on side by side, as one phase after the last headers', () => {
    const early: Sample[] = samples.map((x) => (x.at === 2500 ? { ...x, headerCalls: 100 } : x.at === 3500 ? { ...x, headerCalls: 200 } : x));
    const marks = { spawnedAt: 1000, runStartedAt: 2000, reconcileStartedAt: 5000, runFinishedAt: 5500, exitedAt: 6000, transferRequests: 10, headerCalls: 300 };
    expect(splitPhases({ ...marks, indexBuildStartedAt: 4200 }, early).map((p) => [p.name, p.seconds])).toEqual([
      ['start-up', 1],
      ['read pages and fetch headers', 1.5],
      ['fetch the last headers', 0.7],
      ['build the lookup indexes and reconcile', 1.3],
      ['exit', 0.5],
    ]);
    // headers fetched after the pages, the builds begun once the last of them came
    const late: Sample[] = samples.map((x) => (x.at === 6000 ? { ...x, headerCalls: 200 } : x));
    const builds = splitPhases({ ...marks, headerCalls: 200, indexBuildStartedAt: 4800 }, late);
    expect(builds.map((p) => [p.name, p.seconds])).toEqual([
      ['start-up', 1],
      ['read pages', 1.5],
      ['find missing headers', 1],
      ['fetch headers', 0.3],
      ['build the lookup indexes and reconcile', 0.7],
      ['exit', 0.5],
    ]);
    expect(builds[4]!.postgresCpuSeconds).toBeCloseTo(14 / 15);
  });

  it('ends the page and header phases at the builds’ start when the samples showed the last page and headers after it', () => {
    const marks = { spawnedAt: 1000, runStartedAt: 2000, reconcileStartedAt: 5000, runFinishedAt: 5500, exitedAt: 6000, transferRequests: 10, headerCalls: 300 };
    // the sample showing the last page came at 3500 and the first header call at 4500; the builds began at 3200
    expect(splitPhases({ ...marks, indexBuildStartedAt: 3200 }, samples).map((p) => [p.name, p.seconds])).toEqual([
      ['start-up', 1],
      ['read pages', 1.2],
      ['find missing headers', 0],
      ['fetch headers', 0],
      ['build the lookup indexes and reconcile', 2.3],
      ['exit', 0.5],
    ]);
  });

  it('merges what follows the last mark a failed run left into one phase ending at the exit', () => {
    const phases = splitPhases({ spawnedAt: 1000, runStartedAt: 2000, exitedAt: 6000, transferRequests: 11, headerCalls: 0 }, samples);
    expect(phases.map((p) => [p.name, p.seconds])).toEqual([
      ['start-up', 1],
      ['read pages + find missing headers + fetch headers + reconcile + exit', 4],
    ]);
  });
});

describe('indexBuildStart', () => {
  it('takes the builds’ start from the run’s log line that says they are built, ignoring other lines and a cut one', () => {
    const log = [
      '"msg":"built the lookup indexes","ms":5}',
      JSON.stringify({ level: 40, time: 1_700_000_000_000, msg: 'built the lookup indexes a first load had dropped', ms: 50 }),
      'not json, built the lookup indexes',
      JSON.stringify({ level: 30, time: 1_700_000_005_000, msg: 'built the lookup indexes', job: 'j', ms: 800, autovacuum: 'resumed' }),
      JSON.stringify({ level: 30, time: 1_700_000_005_100, msg: 'run finished', ms: 9000 }),
      '',
    ].join('\n');
    expect(indexBuildStart(log)).toBe(1_700_000_004_200);
    // the builds of indexes a stopped first load had left, at a run's start, are not this run's builds
    expect(indexBuildStart(JSON.stringify({ time: 1_700_000_000_000, msg: 'built the lookup indexes a first load had dropped', ms: 50 }))).toBeUndefined();
    // the last such line is the run's own
    const twice = [JSON.stringify({ time: 1_000, msg: 'built the lookup indexes', ms: 100 }), JSON.stringify({ time: 9_000, msg: 'built the lookup indexes', ms: 300 })].join('\n');
    expect(indexBuildStart(twice)).toBe(8_700);
    expect(indexBuildStart(JSON.stringify({ time: 1, msg: 'built the lookup indexes' }))).toBeUndefined();
    expect(indexBuildStart('')).toBeUndefined();
  });
});

describe('cpuAt', () => {
  it('interpolates between samples and holds the last value after them', () => {
    expect(cpuAt(samples, 'postgresCpuSeconds', 3000)).toBe(102);
    expect(cpuAt(samples, 'exporterCpuSeconds', 9000)).toBe(2.5);
    expect(cpuAt([], 'serverCpuSeconds', 1)).toBeUndefined();
  });
});
