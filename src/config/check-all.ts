import { ConfigError } from '../common/errors.ts';

/** One part of a command's configuration to check: what it gives when it passes, or a ConfigError saying what is wrong. */
export type ConfigCheck<T> = () => T | Promise<T>;

/**
 * Runs every check of a command's configuration (its job file, its settings, its flags) and gives what each
 * returned; when any fails, throws one ConfigError listing the problems of all of them, so a user fixes
 * everything in one go instead of meeting the problems one round at a time. A check that fails alone throws its
 * own error as it is; an error that is not a ConfigError (a bug) is thrown as soon as it is met.
 *
 * @example
 * const [job, settings] = await checkAll([() => loadJobFile(file), () => resolveSettings(input)] as const);
 * // ConfigError: 3 problems with what the command was given (its flags, settings and job file):
 * //   jobs/a.json: contracts[0].address: expected …
 * //   DATABASE_URL is not a URL: …
 * //   --metrics-port: expected a port number from 0 to 65535, got "abc".
 */
export async function checkAll<const T extends readonly unknown[]>(checks: { readonly [K in keyof T]: ConfigCheck<T[K]> }): Promise<T> {
  const values: unknown[] = [];
  const failed: ConfigError[] = [];
  for (const check of checks as readonly ConfigCheck<unknown>[]) {
    try {
      values.push(await check());
    } catch (err) {
      if (!(err instanceof ConfigError)) throw err;
      failed.push(err);
      values.push(undefined);
    }
  }
  if (failed.length === 1) throw failed[0];
  if (failed.length > 1) throw combined(failed);
  return values as unknown as T;
}

/** The problems of several failed checks as one error: each one's list (or its headline when it has none), then each distinct hint. */
function combined(failed: readonly ConfigError[]): ConfigError {
  const problems = failed.flatMap((e) => (e.problems.length ? e.problems : [e.headline]));
  const hints = [...new Set(failed.map((e) => e.hint).filter((h): h is string => Boolean(h)))];
  return new ConfigError(`${problems.length} problems with what the command was given (its flags, settings and job file):`, problems, hints.join('\n'));
}
