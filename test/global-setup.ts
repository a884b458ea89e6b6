import { spawn } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import { mkdir, readdir, rm } from 'node:fs/promises';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import pg from 'pg';
import type { TestProject } from 'vitest/node';
import { ConfigError } from '../src/common/errors.ts';
import { createLogger, type Logger } from '../src/common/logger.ts';
import { startEmbeddedPostgres } from '../src/local-postgres/embedded-postgres.ts';
import { embeddedTestRoot } from './helpers/embedded-root.ts';

declare module 'vitest' {
  export interface ProvidedContext {
    /** A PostgreSQL server for the tests: each test file makes its own databases on it (test/helpers/database.ts). */
    databaseServerUrl: string;
  }
}

const PROJECT_DIR = fileURLToPath(new URL('..', import.meta.url));
const CONTAINER_IMAGE = 'postgres:16-alpine';
const RUNTIME_PROBE_MS = 5_000;

interface TestServer {
  url: string;
  kind: 'DATABASE_URL' | 'testcontainers' | 'embedded';
  where: string;
  stop(): Promise<void>;
}

/**
 * Picks the PostgreSQL server the tests use: `DATABASE_URL` if set, else a testcontainers PostgreSQL when a
 * container runtime answers, else an embedded PostgreSQL under `.data/test-pg`. Tests read its URL with
 * `inject('databaseServerUrl')`.
 */
export default async function setup(project: TestProject): Promise<() => Promise<void>> {
  const logger = createLogger({ name: 'test-database' });
  const server = await chooseServer(logger);
  project.provide('databaseServerUrl', server.url);
  logger.info({ msg: 'test database server', kind: server.kind, where: server.where });
  return () => server.stop();
}

async function chooseServer(logger: Logger): Promise<TestServer> {
  const fromEnv = process.env.DATABASE_URL?.trim();
  if (fromEnv) return useDatabaseUrl(fromEnv);
  if (await containerRuntimeAnswers()) {
    try {
      return await startContainer();
    } catch (err) {
      logger.warn({ msg: 'testcontainers PostgreSQL did not start; using embedded PostgreSQL', err: firstLine(err) });
    }
  }
  return startEmbedded(logger);
}

async function useDatabaseUrl(url: string): Promise<TestServer> {
  const where = redact(url);
  const client = new pg.Client({ connectionString: url, connectionTimeoutMillis: 10_000 });
  client.on('error', () => undefined);
  try {
    await client.connect();
    await client.query('select version()');
  } catch (err) {
    throw new ConfigError(
      `DATABASE_URL (${where}) does not answer: ${firstLine(err)}.`,
      [],
      'Start that server (e.g. `docker compose up -d postgres`), fix the URL, or unset DATABASE_URL to let the tests start their own.',
    );
  } finally {
    await client.end().catch(() => undefined);
  }
  return { url, kind: 'DATABASE_URL', where, stop: async () => undefined };
}

/**
 * Whether a Docker-compatible runtime answers, asked the way testcontainers asks (its own discovery: DOCKER_HOST,
 * ~/.testcontainers.properties, the usual sockets). It runs in a child process that is killed after a few
 * seconds, so a socket that never answers leaves nothing behind here, and it prints nothing either way.
 */
function containerRuntimeAnswers(): Promise<boolean> {
  const probe = "const { getContainerRuntimeClient } = await import('testcontainers'); await getContainerRuntimeClient();";
  return new Promise((resolve) => {
    const child = spawn(process.execPath, ['--input-type=module', '-e', probe], { cwd: PROJECT_DIR, stdio: 'ignore' });
    const timer = setTimeout(() => child.kill('SIGKILL'), RUNTIME_PROBE_MS);
    child.once('error', () => resolve(false));
    child.once('exit', (code) => {
      clearTimeout(timer);
      resolve(code === 0);
    });
  });
}

async function startContainer(): Promise<TestServer> {
  const { PostgreSqlContainer } = await import('@testcontainers/postgresql');
  const container = await new PostgreSqlContainer(CONTAINER_IMAGE).start();
  const url = container.getConnectionUri();
  return {
    url,
    kind: 'testcontainers',
    where: `${CONTAINER_IMAGE} on ${container.getHost()}:${container.getPort()}`,
    stop: async () => {
      await container.stop();
    },
  };
}

async function startEmbedded(logger: Logger): Promise<TestServer> {
  const { stateDir, root } = await embeddedTestRoot();
  await mkdir(root, { recursive: true });
  await removeFoldersOfDeadRuns(root);
  const dataDir = path.join(root, `run-${process.pid}-${randomBytes(4).toString('hex')}`);
  const server = await startEmbeddedPostgres({
    dataDir,
    stateDir,
    // its own events are not worth a line per run; LOG_LEVEL=debug shows them and the server's output
    logger: logger.child({}, { level: process.env.LOG_LEVEL ?? 'warn' }),
    // a throw-away cluster: durability against power loss buys nothing here
    settings: { fsync: 'off', synchronous_commit: 'off', full_page_writes: 'off', max_connections: '200' },
  });
  return {
    url: server.url,
    kind: 'embedded',
    where: `127.0.0.1:${server.port}, data in ${dataDir}`,
    stop: async () => {
      await server.stop();
      await rm(dataDir, { recursive: true, force: true });
    },
  };
}

/** Several runs may share the tree at once, so only folders whose vitest process is gone are removed. */
async function removeFoldersOfDeadRuns(root: string): Promise<void> {
  for (const name of await readdir(root)) {
    const pid = Number(/^run-(\d+)-/.exec(name)?.[1]);
    if (!pid || isAlive(pid)) continue;
    await rm(path.join(root, name), { recursive: true, force: true });
  }
}

function isAlive(pid: number): boolean {
  try {
    process.kill(pid, 0);
    return true;
  } catch (err) {
    return (err as NodeJS.ErrnoException).code === 'EPERM';
  }
}

/** The URL without its password, for logs. */
function redact(url: string): string {
  try {
    const parsed = new URL(url);
    if (parsed.password) parsed.password = '***';
    return parsed.toString();
  } catch {
    return '(a URL that does not parse)';
  }
}

function firstLine(err: unknown): string {
  const text = err instanceof Error ? err.message : String(err);
  return text.split('\n')[0] ?? text;
}
