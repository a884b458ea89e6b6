import { describe, expect, it } from 'vitest';
import type { Sample } from './exporter-process.ts';
import { cpuAt, splitPhases } from './phases.ts';

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

  it('merges what follows the last mark a failed run left into one phase ending at the exit', () => {
    const phases = splitPhases({ spawnedAt: 1000, runStartedAt: 2000, exitedAt: 6000, transferRequests: 11, headerCalls: 0 }, samples);
    expect(phases.map((p) => [p.name, p.seconds])).toEqual([
      ['start-up', 1],
      ['read pages + find missing headers + fetch headers + reconcile + exit', 4],
    ]);
  });
});

describe('cpuAt', () => {
  it('interpolates between samples and holds the last value after them', () => {
    expect(cpuAt(samples, 'postgresCpuSeconds', 3000)).toBe(102);
    expect(cpuAt(samples, 'exporterCpuSeconds', 9000)).toBe(2.5);
    expect(cpuAt([], 'serverCpuSeconds', 1)).toBeUndefined();
  });
});
