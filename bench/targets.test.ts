import { describe, expect, it } from 'vitest';
import type { ApiUse } from './api-efficiency.ts';
import type { ExporterBenchResult } from './exporter-bench.ts';
import type { LoadFigures } from './measure-load.ts';
import type { NodeBenchResult, NodeRun } from './node-bench.ts';
import { formatTable, nodeTargetRows, targetRows, type TargetRow } from './targets.ts';

const api = (over: Partial<ApiUse> = {}): ApiUse => ({
  transferRequests: 1005,
  transferRequestsBound: 1018,
  pagesNeeded: 1000,
  headerCalls: 90_000,
  headerCallsExpected: 90_000,
  headerPosts: 900,
  headerPostsExpected: 900,
  headerBatchSize: 100,
  rpcPosts: 901,
  errors: {},
  ...over,
});

const load = (over: Partial<LoadFigures> = {}): LoadFigures => ({
  rows: 1_000_000,
  wallSeconds: 50,
  rowsPerSecond: 20_000,
  peakRssMb: 150,
  peakAtSeconds: 10,
  cpuSeconds: {},
  phases: [{ name: 'read pages', seconds: 40 }],
  api: api(),
  ledger: { runId: '1', inserted: 1_000_000, updated: 0, unchanged: 0, headersFetched: 90_000 },
  exact: true,
  ...over,
});

const chain = { transfers: 1_000_000, blocks: 100_000, tokens: 3, distinctBlocks: 90_000, serverStartupSeconds: 10 };

const result = (
  over: { firstLoadVsCopy?: number; speedup?: number; written?: number; peakRssMb?: number; timeRatio?: number; latencyRowsPerSecond?: number } = {},
): ExporterBenchResult => ({
  baseline: { ok: true, value: { wallSeconds: 1, cpuSeconds: 1, peakRssMb: 100 } },
  dense: {
    ok: true,
    value: {
      chain,
      copy: { rows: 1_000_000, seconds: 40, rowsPerSecond: 25_000 },
      first: load({ peakRssMb: over.peakRssMb ?? 150 }),
      firstLoadVsCopy: over.firstLoadVsCopy ?? 0.8,
      rerun: {
        ...load({ api: api({ headerCalls: 0, headerCallsExpected: 0, headerPosts: 0, headerPostsExpected: 0 }) }),
        speedup: over.speedup ?? 2,
        tokenTransfersWritten: over.written ?? 0,
        rowsTouched: 0,
        otherTablesWritten: { export_missing: { inserted: 1_000_000, updated: 0, deleted: 1_000_000 } },
      },
    },
  },
  growth: { ok: true, value: { chain: { ...chain, transfers: 100_000 }, load: load({ rows: 100_000 }), timeRatio: over.timeRatio ?? 11 } },
  sparse: {
    ok: true,
    value: { chain: { ...chain, transfers: 20_000 }, load: load({ rows: 20_000, api: api({ transferRequests: 30, transferRequestsBound: 28.2, pagesNeeded: 20 }) }) },
  },
  latency: {
    ok: true,
    value: {
      chain: { ...chain, transfers: 200_000 },
      load: load({ rows: 200_000, rowsPerSecond: 12_000 }),
      latencyMs: 50,
      rateLimit: 20,
      headerBatchSize: 1000,
      targetRowsPerSecond: 18_000,
      requests: 210,
      runRowsPerSecond: over.latencyRowsPerSecond ?? 18_000,
      fill: 0.95,
      readPhaseRowsPerSecond: 19_000,
    },
  },
});

const verdict = (rows: TargetRow[], start: string) => rows.find((r) => r.figure.startsWith(start))?.ok;

describe('targetRows', () => {
  it('passes each target exactly at its threshold', () => {
    const rows = targetRows({ exporter: result(), pageSize: 1000, concurrency: 4 });
    expect(verdict(rows, 'first load ÷ plain COPY')).toBe(true);
    expect(verdict(rows, 're-run: time of first load')).toBe(true);
    expect(verdict(rows, 're-run: token_transfers tuples written')).toBe(true);
    expect(verdict(rows, 'memory:')).toBe(true);
    expect(verdict(rows, 'growth:')).toBe(true);
    expect(verdict(rows, 'latency-bound (50 ms, R = 20/s, 200,000 transfers): rows / s over the run')).toBe(true);
  });

  it('fails each target just past its threshold', () => {
    const rows = targetRows({
      exporter: result({ firstLoadVsCopy: 0.79, speedup: 1.99, written: 1, peakRssMb: 201, timeRatio: 11.01, latencyRowsPerSecond: 17_999 }),
      pageSize: 1000,
      concurrency: 4,
    });
    for (const start of [
      'first load ÷ plain COPY',
      're-run: time of first load',
      're-run: token_transfers tuples written',
      'memory:',
      'growth:',
      'latency-bound (50 ms, R = 20/s, 200,000 transfers): rows / s over the run',
    ]) {
      expect(verdict(rows, start), start).toBe(false);
    }
  });

  it('checks the API bounds of the dense and the sparse run separately', () => {
    const rows = targetRows({ exporter: result(), pageSize: 1000, concurrency: 4 });
    expect(verdict(rows, 'API dense: getTokenTransfers requests')).toBe(true);
    expect(verdict(rows, 'API sparse (20,000 over 100,000 blocks): getTokenTransfers requests')).toBe(false);
    expect(verdict(rows, 'API re-run: header calls')).toBe(true);
    expect(verdict(rows, 'API latency-bound: header calls')).toBe(true);
  });

  it('checks the API use of the latency-bound run too: a header asked for twice fails it', () => {
    const exporter = result();
    if (!exporter.latency.ok) throw new Error('fixture');
    exporter.latency.value.load.api = api({ headerCalls: 12_245, headerCallsExpected: 12_235, headerPosts: 13, headerPostsExpected: 13, headerBatchSize: 1000 });
    const rows = targetRows({ exporter, pageSize: 1000, concurrency: 4 });
    expect(verdict(rows, 'API latency-bound: header calls')).toBe(false);
    expect(rows.find((r) => r.figure === 'API latency-bound: header POSTs')).toMatchObject({ target: '= 13 (calls ÷ 1000, up)', ok: true });
  });

  it('adds the CPU ratios, which have no target of their own, when every process was measured', () => {
    const exporter = result();
    if (!exporter.dense.ok || !exporter.growth.ok) throw new Error('fixture');
    exporter.dense.value.first.cpuSeconds = { exporter: 20, server: 10, postgres: 90 };
    exporter.dense.value.copy.postgresCpuSeconds = 30;
    exporter.growth.value.load.cpuSeconds = { exporter: 4, server: 1, postgres: 10 };
    const rows = targetRows({ exporter, pageSize: 1000, concurrency: 4 });
    expect(rows.find((r) => r.figure.startsWith('PostgreSQL CPU: first load ÷ plain COPY'))).toMatchObject({ measured: '3' });
    expect(rows.find((r) => r.figure.startsWith('growth by CPU seconds'))).toMatchObject({ measured: '8' });
    expect(rows.filter((r) => r.figure.includes('CPU')).every((r) => r.ok === undefined)).toBe(true);
  });

  it('reports a failed scenario as a failed row that says why, and still checks the others', () => {
    // without the dense time, the bench has no growth ratio
    const exporter = { ...result({ timeRatio: Number.NaN }), dense: { ok: false, error: 'erc20-etl backfill exited with 1\nmore' } } as const;
    const rows = targetRows({ exporter, pageSize: 1000, concurrency: 4 });
    expect(rows.find((r) => r.figure.startsWith('dense'))).toMatchObject({ measured: 'erc20-etl backfill exited with 1', ok: false });
    expect(rows.some((r) => r.figure.startsWith('first load'))).toBe(false);
    expect(verdict(rows, 'growth')).toBe(false);
    expect(verdict(rows, 'API sparse')).toBe(false);
  });
});

const nodeRun = (over: { calls?: number; refused?: number; logs?: number; serverCalls?: number; peakRssMb?: number } = {}): NodeRun => {
  const calls = over.calls ?? 40;
  const refused = over.refused ?? 0;
  const logs = over.logs ?? 200_000;
  return {
    load: load({ rows: 200_000, peakRssMb: over.peakRssMb ?? 150 }),
    logs: { calls, refused, refusedBy: refused ? { '-32005': refused } : {}, answered: calls - refused, logs, meanLogs: logs / (calls - refused), maxLogs: 9000, byContract: {} },
    serverCalls: over.serverCalls ?? calls,
    learnedRange: 2000,
  };
};

const wholeCopy = { rows: 1_000_000, seconds: 40, rowsPerSecond: 25_000 };
const wholeFirst = { ...load({ peakRssMb: 180 }), logs: { calls: 150, refused: 15, errors: { '-32005': 15 } } };

const node = (first: NodeRun = nodeRun(), second: NodeRun = nodeRun()): NodeBenchResult => ({
  maxResults: 10_000,
  full: {
    ok: true,
    value: {
      style: 'infura',
      chain,
      copy: wholeCopy,
      first: wholeFirst,
      firstLoadVsCopy: 0.8,
      pairs: [{ copy: wholeCopy, first: wholeFirst, ratio: 0.8 }],
      learnedRange: 2000,
      second: { ...load(), logs: { calls: 140, refused: 2, errors: { '-32005': 2 } } },
    },
  },
  styles: [
    {
      style: 'infura',
      result: { ok: true, value: { style: 'infura', maxResults: 10_000, span: { fromBlock: 80_001, toBlock: 100_000, transfers: 200_000, distinctBlocks: 6000 }, first, second } },
    },
    { style: 'ankr', result: { ok: false, error: 'erc20-etl backfill exited with 1\nmore' } },
  ],
});

describe('nodeTargetRows', () => {
  it('holds the whole chain’s ratio to its median pair, and its ceilings and floors to every pair’s first load', () => {
    const base = node();
    const full = base.full!.ok ? base.full!.value : undefined;
    const logs = (calls: number, refused: number) => ({ calls, refused, errors: { '-32005': refused } });
    // the first pair has the most refusals (17) but not the largest share of them (5.7 %), and the most calls answered
    const pairs = [
      { copy: wholeCopy, ratio: 0.98, first: { ...wholeFirst, peakRssMb: 205, logs: logs(300, 17) } },
      { copy: wholeCopy, ratio: 0.95, first: { ...wholeFirst, peakRssMb: 180, logs: logs(150, 2) } },
      { copy: wholeCopy, ratio: 0.7, first: { ...wholeFirst, peakRssMb: 170, logs: logs(150, 16) } },
    ];
    const rows = nodeTargetRows({ ...base, full: { ok: true, value: { ...full!, first: pairs[1]!.first, firstLoadVsCopy: 0.95, pairs } } });
    const whole = 'node infura, whole chain (1,000,000 transfers)';
    expect(rows.find((r) => r.figure === `${whole}: first load ÷ plain COPY`)).toMatchObject({ measured: '0.95 (pairs 0.98, 0.95, 0.70)', ok: true });
    // the first pair's 205 MB and the third's 16 ÷ 150 fail, though the median pair's 180 MB and 2 ÷ 150 would pass
    expect(rows.find((r) => r.figure === `${whole}: exporter peak RSS, MB`)).toMatchObject({ measured: '205', ok: false });
    expect(rows.find((r) => r.figure === `${whole}, server's count: eth_getLogs refused for size ÷ calls`)).toMatchObject({ measured: '16 ÷ 150 = 10.7 %', ok: false });
    // the fewest rows per answered call: the first pair's 1,000,000 ÷ 283 (the median's 148 answered calls hold more each)
    expect(rows.find((r) => r.figure === `${whole}: rows ÷ eth_getLogs calls answered ÷ cap`)).toMatchObject({ measured: '3,534 = 35.3 %', ok: false });
    // the second run follows the last pair's load (20.6 s in the third pair against 50 s in the median one)
    const timed = { ...full!, first: pairs[1]!.first, firstLoadVsCopy: 0.95, pairs: pairs.map((p, k) => (k === 2 ? { ...p, first: { ...p.first, wallSeconds: 20 } } : p)) };
    expect(nodeTargetRows({ ...base, full: { ok: true, value: timed } }).find((r) => r.figure === `${whole}: second run ÷ the first load before it, time`)?.measured).toBe('2.5');
  });

  it('passes each node target exactly at its threshold: 10 % refused, a mean of half the cap, 2 refusals in the second run', () => {
    const rows = nodeTargetRows(node(nodeRun({ calls: 40, refused: 4, logs: 180_000 }), nodeRun({ refused: 2 })));
    expect(rows.find((r) => r.figure === 'node infura: eth_getLogs refused for size ÷ calls')).toMatchObject({ measured: '4 ÷ 40 = 10 %', target: '≤ 10 %', ok: true });
    expect(rows.find((r) => r.figure === 'node infura: logs per answered call, mean ÷ cap')).toMatchObject({ measured: '5,000 = 50 %', target: '≥ 50 % of 10,000', ok: true });
    expect(rows.find((r) => r.figure === 'node infura: second run, eth_getLogs refused')).toMatchObject({ measured: '2 of 40 calls', ok: true });
    expect(verdict(rows, 'node infura: exporter peak RSS')).toBe(true);
    const whole = 'node infura, whole chain (1,000,000 transfers)';
    expect(verdict(rows, `${whole}: first load ÷ plain COPY`)).toBe(true);
    expect(rows.find((r) => r.figure === `${whole}, server's count: eth_getLogs refused for size ÷ calls`)).toMatchObject({ measured: '15 ÷ 150 = 10 %', ok: true });
    expect(rows.find((r) => r.figure === `${whole}: rows ÷ eth_getLogs calls answered ÷ cap`)).toMatchObject({ measured: '7,407 = 74.1 %', ok: true });
    expect(verdict(rows, `${whole}: second run, eth_getLogs refused`)).toBe(true);
    expect(verdict(rows, `${whole}: exporter peak RSS`)).toBe(true);
    expect(rows.some((r) => r.figure.includes('node, each style: blocks 80001–100000 (200,000 transfers)'))).toBe(true);
  });

  it('fails each node target just past its threshold, and says which style failed to run', () => {
    const rows = nodeTargetRows(node(nodeRun({ calls: 40, refused: 5, logs: 174_965, peakRssMb: 201 }), nodeRun({ refused: 3 })));
    for (const start of ['node infura: eth_getLogs refused', 'node infura: logs per answered call', 'node infura: second run', 'node infura: exporter peak RSS']) {
      expect(verdict(rows, start), start).toBe(false);
    }
    expect(rows.find((r) => r.figure === 'node ankr: failed')).toMatchObject({ measured: 'erc20-etl backfill exited with 1', ok: false });
  });

  it('fails a run whose tap counted other eth_getLogs calls than the server did', () => {
    const rows = nodeTargetRows(node(nodeRun({ serverCalls: 41 })));
    expect(rows.find((r) => r.figure === 'node infura, first run: eth_getLogs calls, tap = server')).toMatchObject({ measured: '40 ≠ 41', ok: false });
  });
});

describe('formatTable', () => {
  it('aligns the columns and marks only the rows that have a target', () => {
    const text = formatTable([
      { figure: 'a figure', measured: '1,234', target: '≥ 1,000', ok: true },
      { figure: 'b', measured: '5', target: '' },
      { figure: 'c', measured: '0.5', target: '≥ 0.8', ok: false },
    ]);
    expect(text.split('\n')).toEqual(['figure    measured  target', 'a figure     1,234  ≥ 1,000  ✓', 'b                5', 'c              0.5  ≥ 0.8    ✗', '']);
  });
});
