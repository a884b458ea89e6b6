import { describe, expect, it } from 'vitest';
import { ConfigError } from '../common/errors.ts';
import { resolveSettings, type SettingsInput } from './settings.ts';

const both = { database: true, api: true };

function problemsOf(input: SettingsInput): readonly string[] {
  try {
    resolveSettings(input);
  } catch (e) {
    expect(e).toBeInstanceOf(ConfigError);
    expect((e as ConfigError).exitCode).toBe(2);
    return (e as ConfigError).problems;
  }
  throw new Error('expected a ConfigError');
}

describe('resolveSettings', () => {
  it('takes the environment when no flag is given', () => {
    const s = resolveSettings({ flags: {}, env: { DATABASE_URL: 'postgres://u:p@db:5432/etl', CHAIN_API_URL: 'https://eth.example/v1/env-id' }, needs: both });
    expect(s.databaseUrl).toBe('postgres://u:p@db:5432/etl');
    expect(s.api?.base).toBe('https://eth.example/v1/env-id');
    expect(s.api?.redacted).toBe('https://eth.example/v1/<redacted>');
    expect(Object.isFrozen(s)).toBe(true);
  });

  it('lets a flag win over the environment', () => {
    const s = resolveSettings({
      flags: { databaseUrl: 'postgresql://flag@localhost/etl', apiUrl: 'http://127.0.0.1:8545/flag-id' },
      env: { DATABASE_URL: 'postgres://env@db/etl', CHAIN_API_URL: 'https://eth.example/env-id' },
      needs: both,
    });
    expect(s.databaseUrl).toBe('postgresql://flag@localhost/etl');
    expect(s.api?.base).toBe('http://127.0.0.1:8545/flag-id');
  });

  it('treats a blank flag or variable as not set', () => {
    const s = resolveSettings({ flags: { databaseUrl: '  ' }, env: { DATABASE_URL: 'postgres://env@db/etl' }, needs: { database: true, api: false } });
    expect(s.databaseUrl).toBe('postgres://env@db/etl');
    expect(problemsOf({ flags: { apiUrl: '' }, env: { CHAIN_API_URL: ' ' }, needs: { database: false, api: true } })).toHaveLength(1);
  });

  it('names both the flag and the variable of each missing setting, all at once', () => {
    expect(problemsOf({ flags: {}, env: {}, needs: both })).toEqual([
      'no database: set DATABASE_URL or pass --database-url, e.g. postgres://user:password@localhost:5432/erc20',
      'no chain API: set CHAIN_API_URL or pass --api-url, the base URL including your project id, e.g. https://<network>.<provider>/<project-id>',
    ]);
  });

  it('reads only what the command needs', () => {
    const s = resolveSettings({ flags: {}, env: { DATABASE_URL: 'not a url', CHAIN_API_URL: 'https://eth.example/id' }, needs: { database: false, api: true } });
    expect(s).toEqual({ api: expect.objectContaining({ base: 'https://eth.example/id' }) });
    expect(resolveSettings({ flags: {}, env: {}, needs: { database: false, api: false } })).toEqual({});
  });

  it('refuses a database URL that is not postgres, naming where it came from and never echoing it', () => {
    const problems = problemsOf({
      flags: { apiUrl: 'https://eth.example/?key=hunter2' },
      env: { DATABASE_URL: 'mysql://admin:hunter2@db/etl' },
      needs: both,
    });
    expect(problems).toHaveLength(2);
    expect(problems[0]).toBe('DATABASE_URL must be a postgres:// or postgresql:// URL, got the scheme mysql:: expected a URL like postgres://user:password@host:5432/database');
    expect(problems[1]).toMatch(/^--api-url /);
    expect(problems.join('\n')).not.toContain('hunter2');

    const notUrl = problemsOf({ flags: { databaseUrl: 'host=db password=hunter2' }, env: {}, needs: { database: true, api: false } });
    expect(notUrl).toEqual(['--database-url is not a URL: expected a URL like postgres://user:password@host:5432/database']);
  });

  it("reads a node source's URL as the node's, and says so when it is missing", () => {
    const s = resolveSettings({ flags: {}, env: { CHAIN_API_URL: 'http://127.0.0.1:8545' }, needs: { database: false, api: true }, source: 'node' });
    expect(s.api?.base).toBe('http://127.0.0.1:8545');
    expect(s.api?.host).toBe('127.0.0.1:8545');
    // the builder API needs its project id
    expect(problemsOf({ flags: {}, env: { CHAIN_API_URL: 'http://127.0.0.1:8545' }, needs: { database: false, api: true } })).toEqual([
      'CHAIN_API_URL has no project id: expected a base URL that ends in it, like https://<network>.<provider>/<project-id>',
    ]);
    expect(problemsOf({ flags: {}, env: {}, needs: { database: false, api: true }, source: 'node' })).toEqual([
      "no node: set CHAIN_API_URL or pass --api-url, the node's JSON-RPC URL (with your key where the provider gives one), e.g. https://<provider>/<key> or http://127.0.0.1:8545",
    ]);
    // either kind (a worker's, status without a job): read as a node's, the whole path redacted
    const any = resolveSettings({ flags: { apiUrl: 'https://eth.example/v3/k3y-id' }, env: {}, needs: { database: false, api: true }, source: 'any' });
    expect(any.api?.redacted).toBe('https://eth.example/<redacted>');
    expect(problemsOf({ flags: {}, env: {}, needs: { database: false, api: true }, source: 'any' })[0]).toMatch(/^no chain API: .*or a node's JSON-RPC URL$/);
  });
});
