import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { ConfigError } from '../common/errors.ts';
import { workerSettings } from './worker-flags.ts';

const USDC = '0xa0b86991c6218b36c1d19d4a2e9eb0ce3606eb48';

describe('workerSettings', () => {
  let dir: string | undefined;
  afterEach(async () => {
    if (dir) await rm(dir, { recursive: true, force: true });
    dir = undefined;
  });

  const refusal = async (flags: Parameters<typeof workerSettings>[0]): Promise<ConfigError> => {
    const err = await workerSettings(flags).then(
      () => undefined,
      (e: unknown) => e,
    );
    expect(err).toBeInstanceOf(ConfigError);
    return err as ConfigError;
  };

  it('refuses --jobs without --schedule, which alone reads it', async () => {
    const err = await refusal({ jobs: 'jobs' });
    expect(err.problems).toEqual(['--jobs jobs: read only with --schedule (the job files whose "schedule" the worker fires); add --schedule, or leave --jobs out']);
  });

  it('counts in its heading every problem of every job file, one line each', async () => {
    dir = await mkdtemp(join(tmpdir(), 'erc20-etl-worker-flags-'));
    await writeFile(join(dir, 'broken.json'), '{"name": "broken",');
    await writeFile(join(dir, 'bad.json'), JSON.stringify({ name: 'bad', contracts: [{ address: 'nope', fromBlock: -1 }], schedule: 'whenever' }));
    await writeFile(join(dir, 'good.json'), JSON.stringify({ name: 'good', contracts: [{ address: USDC, fromBlock: 0 }], schedule: '0 2 * * *' }));
    const err = await refusal({ schedule: true, jobs: dir, concurrency: '0' });
    const lines = err.message.split('\n').filter((l) => l.startsWith('  '));
    expect(lines).toHaveLength(err.problems.length);
    expect(err.problems.length).toBeGreaterThanOrEqual(4);
    expect(err.message.split('\n')[0]).toBe(`Cannot start the worker (${err.problems.length} problem(s)):`);
    expect(err.problems.every((p) => !p.includes('\n'))).toBe(true);
    expect(err.problems[0]).toMatch(/^--concurrency: /);
  });

  it('reads the scheduled job files of --jobs', async () => {
    dir = await mkdtemp(join(tmpdir(), 'erc20-etl-worker-flags-'));
    await writeFile(join(dir, 'nightly.json'), JSON.stringify({ name: 'nightly', contracts: [{ address: USDC, fromBlock: 0 }], schedule: '0 2 * * *' }));
    await writeFile(join(dir, 'adhoc.json'), JSON.stringify({ name: 'adhoc', contracts: [{ address: USDC, fromBlock: 0 }] }));
    const settings = await workerSettings({ schedule: true, jobs: dir });
    expect(settings.scheduled.map((j) => j.name)).toEqual(['nightly']);
  });
});
