import { describe, expect, it } from 'vitest';
import { ConfigError } from '../common/errors.ts';
import { checkAll } from './check-all.ts';

const fail = (error: Error) => () => {
  throw error;
};

describe('checkAll', () => {
  it('gives what every check returned, in order, awaiting those that are promises', async () => {
    const [a, b, c] = await checkAll([() => 1, async () => 'two', () => undefined]);
    expect([a, b, c]).toEqual([1, 'two', undefined]);
  });

  it('throws the one failed check’s own error as it is', async () => {
    const only = new ConfigError('--days: expected a whole number from 1 to 999999, got "0".');
    await expect(checkAll([() => 1, fail(only)])).rejects.toBe(only);
  });

  it('lists the problems of every failed check in one error: each one’s list, or its headline, then each distinct hint', async () => {
    const job = new ConfigError('Invalid job file a.json (2 problems):', ['a.json: name: expected text', 'a.json: pageSize: expected 1 to 1000'], 'Fix the job file.');
    const settings = new ConfigError('Missing or invalid settings (1 problem):', ['DATABASE_URL is not a URL'], 'Set them in the environment.');
    const flag = new ConfigError('--metrics-port: expected a port number from 0 to 65535, got "abc".');
    const again = new ConfigError('--runs: expected a whole number', [], 'Fix the job file.');
    const err = await checkAll([fail(job), () => 3, async () => Promise.reject(settings), fail(flag), fail(again)]).catch((e: unknown) => e);
    expect(err).toBeInstanceOf(ConfigError);
    const e = err as ConfigError;
    expect(e.exitCode).toBe(2);
    expect(e.problems).toEqual([
      'a.json: name: expected text',
      'a.json: pageSize: expected 1 to 1000',
      'DATABASE_URL is not a URL',
      '--metrics-port: expected a port number from 0 to 65535, got "abc".',
      '--runs: expected a whole number',
    ]);
    expect(e.headline).toBe('5 problems with what the command was given (its flags, settings and job file):');
    expect(e.hint).toBe('Fix the job file.\nSet them in the environment.');
  });

  it('throws an error that is not a usage error at once, running no later check', async () => {
    const bug = new TypeError('cannot read x of undefined');
    let later = false;
    await expect(
      checkAll([
        fail(new ConfigError('--days: bad')),
        fail(bug),
        () => {
          later = true;
        },
      ]),
    ).rejects.toBe(bug);
    expect(later).toBe(false);
  });
});
