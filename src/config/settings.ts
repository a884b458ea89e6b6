/**
 * The two settings that are not in a job file because they hold credentials: where the warehouse is
 * (`DATABASE_URL` / `--database-url`) and the chain API's base URL, or a node source's JSON-RPC URL
 * (`CHAIN_API_URL` / `--api-url`).
 * A flag wins over the environment. Values are never echoed in messages: both may hold secrets.
 */
import { ConfigError } from '../common/errors.ts';
import { parseApiUrl, type ApiEndpoint } from './api-url.ts';
import type { SourceKind } from './job-schema.ts';

export interface SettingsInput {
  flags: { databaseUrl?: string; apiUrl?: string };
  env: NodeJS.ProcessEnv;
  /** What the command needs; a setting it does not need is not read (so a stale variable cannot break it). */
  needs: { database: boolean; api: boolean };
  /**
   * What the API URL is read as: the builder API's base URL (the default), a node's JSON-RPC URL, or either
   * (`any`: read as a node's, which takes every builder URL too and redacts its whole path).
   */
  source?: SourceKind | 'any' | undefined;
}

export interface Settings {
  /** A postgres:// or postgresql:// URL. Secret (it may hold a password). */
  databaseUrl?: string;
  api?: ApiEndpoint;
}

/**
 * Resolves the settings a command needs; every missing or invalid one is listed in one ConfigError.
 *
 * @example resolveSettings({ flags: {}, env: process.env, needs: { database: true, api: true } })
 * // ConfigError: Missing or invalid settings (2 problems):
 * //   no database: set DATABASE_URL or pass --database-url, e.g. postgres://user:password@localhost:5432/erc20
 * //   no chain API: set CHAIN_API_URL or pass --api-url, …
 */
export function resolveSettings(input: SettingsInput): Readonly<Settings> {
  const problems: string[] = [];
  const settings: Settings = {};

  if (input.needs.database) {
    const chosen = pick(input.flags.databaseUrl, '--database-url', input.env['DATABASE_URL'], 'DATABASE_URL');
    if (!chosen) {
      problems.push('no database: set DATABASE_URL or pass --database-url, e.g. postgres://user:password@localhost:5432/erc20');
    } else {
      const problem = postgresUrlProblem(chosen.value);
      if (problem) problems.push(`${chosen.source} ${problem}`);
      else settings.databaseUrl = chosen.value;
    }
  }

  if (input.needs.api) {
    const chosen = pick(input.flags.apiUrl, '--api-url', input.env['CHAIN_API_URL'], 'CHAIN_API_URL');
    if (!chosen) {
      problems.push(MISSING_API[input.source ?? 'builder']);
    } else {
      try {
        settings.api = parseApiUrl(chosen.value, chosen.source, input.source === 'builder' || input.source === undefined ? 'builder' : 'node');
      } catch (e) {
        if (!(e instanceof ConfigError)) throw e;
        problems.push(e.message);
      }
    }
  }

  if (problems.length) {
    throw new ConfigError(
      `Missing or invalid settings (${problems.length === 1 ? '1 problem' : `${problems.length} problems`}):`,
      problems,
      'Set them in the environment or pass the flags; see erc20-etl --help.',
    );
  }
  return Object.freeze(settings);
}

const MISSING_API = {
  builder: 'no chain API: set CHAIN_API_URL or pass --api-url, the base URL including your project id, e.g. https://<network>.<provider>/<project-id>',
  node: "no node: set CHAIN_API_URL or pass --api-url, the node's JSON-RPC URL (with your key where the provider gives one), e.g. https://<provider>/<key> or http://127.0.0.1:8545",
  any: "no chain API: set CHAIN_API_URL or pass --api-url, the builder API's base URL including your project id, or a node's JSON-RPC URL",
} as const;

/** The flag if given, else the variable; blank counts as not given. */
function pick(flag: string | undefined, flagName: string, env: string | undefined, envName: string): { value: string; source: string } | undefined {
  if (flag !== undefined && flag.trim() !== '') return { value: flag.trim(), source: flagName };
  if (env !== undefined && env.trim() !== '') return { value: env.trim(), source: envName };
  return undefined;
}

/** Why the text is not a PostgreSQL URL, without repeating any of it but the scheme; undefined if it is one. */
function postgresUrlProblem(text: string): string | undefined {
  const expected = 'expected a URL like postgres://user:password@host:5432/database';
  let url: URL;
  try {
    url = new URL(text);
  } catch {
    return `is not a URL: ${expected}`;
  }
  if (url.protocol !== 'postgres:' && url.protocol !== 'postgresql:') {
    return `must be a postgres:// or postgresql:// URL, got the scheme ${/^[a-z][a-z0-9+.-]*:$/i.test(url.protocol) ? url.protocol : '(unreadable)'}: ${expected}`;
  }
  return undefined;
}
