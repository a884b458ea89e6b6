import { describe, expect, it } from 'vitest';
import type { LoadFigures } from './measure-load.ts';
import { cpuCeiling, describeServer, firstLoadRows, type FirstLoadServer } from './first-load.ts';

const server = { version: '18.4', settings: { max_wal_size: '1GB', shared_buffers: '128MB', synchronous_commit: 'on', wal_level: 'replica', full_page_writes: 'on' } };
const size = (transfers: number) => ({ transfers, blocks: transfers / 10, tokens: 4 });
const compared = (transfers: number, loadSeconds: number, copySeconds: number) => ({
  ok: true as const,
  value: {
    size: size(transfers),
    load: { wallSeconds: loadSeconds } as LoadFigures,
    copy: { transfers, headers: transfers / 30, seconds: copySeconds },
    ratio: copySeconds / loadSeconds,
    pairs: [{ ratio: copySeconds / loadSeconds, loadSeconds, copySeconds, peakRssMb: 150 }],
  },
});

describe('describeServer', () => {
  it('names the version and every setting a bulk load turns on, as the server shows them', () => {
    expect(describeServer(server)).toBe('PostgreSQL 18.4; max_wal_size 1GB, shared_buffers 128MB, synchronous_commit on, wal_level replica, full_page_writes on');
  });

  it('says which setting the server did not show', () => {
    expect(describeServer({ version: '15.19', settings: { max_wal_size: '1GB' } })).toContain('shared_buffers unknown');
  });
});

describe('firstLoadRows', () => {
  const stock: FirstLoadServer = { label: 'embedded, initdb defaults', server, extra: false, sizes: [compared(200_000, 4, 2.5), compared(1_000_000, 18, 16)] };
  const tuned: FirstLoadServer = { label: 'embedded, tuned', server, extra: true, sizes: [compared(200_000, 3, 2.9)] };

  it('holds each stock figure to the target, with both times', () => {
    const rows = firstLoadRows([stock]);
    expect(rows).toEqual([
      { figure: 'first load ÷ plain COPY, 200,000 transfers (embedded, initdb defaults)', measured: '0.63 (4.0 s vs 2.5 s)', target: '≥ 0.8', ok: false },
      { figure: 'first load ÷ plain COPY, 1,000,000 transfers (embedded, initdb defaults)', measured: '0.89 (18.0 s vs 16.0 s)', target: '≥ 0.8', ok: true },
    ]);
  });

  it('shows a labelled extra server without a target', () => {
    const [row] = firstLoadRows([tuned]);
    expect(row).toEqual({ figure: 'first load ÷ plain COPY, 200,000 transfers (embedded, tuned)', measured: '0.97 (3.0 s vs 2.9 s)', target: '' });
  });

  it('prints every pair’s ratio beside the figure, in the order they ran', () => {
    const median = compared(200_000, 4, 3.4);
    const pairs = [
      { ratio: 0.9, loadSeconds: 3.5, copySeconds: 3.15, peakRssMb: 150 },
      { ratio: 0.85, loadSeconds: 4, copySeconds: 3.4, peakRssMb: 150 },
      { ratio: 0.7, loadSeconds: 4.4, copySeconds: 3.08, peakRssMb: 150 },
    ];
    const [row] = firstLoadRows([{ ...stock, sizes: [{ ok: true, value: { ...median.value, pairs } }] }]);
    expect(row).toEqual({
      figure: 'first load ÷ plain COPY, 200,000 transfers (embedded, initdb defaults)',
      measured: '0.85 (4.0 s vs 3.4 s; pairs 0.90, 0.85, 0.70)',
      target: '≥ 0.8',
      ok: true,
    });
  });

  it('fails a size that did not complete, saying why', () => {
    const failed: FirstLoadServer = { ...stock, sizes: [{ ok: false, size: size(200_000), error: 'erc20-etl backfill exited with 1\nmore' }] };
    expect(firstLoadRows([failed])).toEqual([
      { figure: 'first load ÷ plain COPY, 200,000 transfers (embedded, initdb defaults)', measured: 'failed: erc20-etl backfill exited with 1', target: 'completes', ok: false },
    ]);
  });
});

describe('cpuCeiling', () => {
  it('spreads the three processes’ CPU over the cores: the load can finish no sooner, and the ratio no higher', () => {
    const c = cpuCeiling({ exporter: 4.2, server: 1.0, postgres: 5.3 }, 3.77, 2);
    expect(c?.floorSeconds).toBeCloseTo(5.25, 10);
    expect(c?.maxRatio).toBeCloseTo(3.77 / 5.25, 10);
  });

  it('has no ceiling when a process’s CPU was not seen', () => {
    expect(cpuCeiling({ exporter: 4.2, server: 1.0 }, 3.77, 2)).toBeUndefined();
  });
});
