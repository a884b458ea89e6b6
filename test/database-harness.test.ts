import { spawn } from 'node:child_process';
import { chmod, mkdir, mkdtemp, readFile, readlink, rm, stat, writeFile } from 'node:fs/promises';
import { createServer } from 'node:net';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import pg from 'pg';
import { afterAll, beforeAll, describe, expect, inject, it } from 'vitest';
import { ConfigError } from '../src/common/errors.ts';
import { ensureTraversableParents, startEmbeddedPostgres } from '../src/local-postgres/embedded-postgres.ts';
import { freePort } from '../src/local-postgres/free-port.ts';
import { localStateDir } from '../src/local-postgres/state-dir.ts';
import { embeddedTestRoot } from './helpers/embedded-root.ts';
import { databaseName, databaseUrl, freshDatabase, useFreshDatabase } from './helpers/database.ts';

const PROJECT_DIR = fileURLToPath(new URL('..', import.meta.url));
/** In the tests' embedded folder and named after this process, so a killed run's leftovers are removed by a later run's global setup. */
const scratchDir = async (purpose: string) => {
  const { root } = await embeddedTestRoot();
  await mkdir(root, { recursive: true });
  return mkdtemp(path.join(root, `run-${process.pid}-${purpose}-`));
};

async function query<T extends pg.QueryResultRow>(url: string, sql: string, params: unknown[] = []): Promise<T[]> {
  const client = new pg.Client({ connectionString: url });
  client.on('error', () => undefined);
  await client.connect();
  try {
    return (await client.query<T>(sql, params)).rows;
  } finally {
    await client.end();
  }
}

const userTables = (url: string) => query<{ name: string }>(url, "select tablename as name from pg_tables where schemaname not in ('pg_catalog', 'information_schema')");

async function canListenOn(port: number): Promise<boolean> {
  return new Promise((resolve) => {
    const server = createServer();
    server.once('error', () => resolve(false));
    server.listen({ host: '127.0.0.1', port, exclusive: true }, () => server.close(() => resolve(true)));
  });
}

function isAlive(pid: number): boolean {
  try {
    process.kill(pid, 0);
    return true;
  } catch (err) {
    return (err as NodeJS.ErrnoException).code === 'EPERM';
  }
}

async function waitUntil(what: string, condition: () => boolean | Promise<boolean>, timeoutMs = 30_000): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  while (!(await condition())) {
    if (Date.now() > deadline) throw new Error(`still not true after ${timeoutMs} ms: ${what}`);
    await new Promise((resolve) => setTimeout(resolve, 100));
  }
}

const postmasterPid = async (dataDir: string) => Number((await readFile(path.join(dataDir, 'postmaster.pid'), 'utf8')).split('\n')[0]);

describe('the test database server', () => {
  it('answers select version()', async () => {
    const [row] = await query<{ version: string }>(inject('databaseServerUrl'), 'select version()');
    expect(row?.version).toMatch(/^PostgreSQL \d+/);
  });

  it('gives fresh databases that are distinct and empty', async () => {
    const a = await freshDatabase('harness a');
    const b = await freshDatabase('harness a');
    try {
      expect(a.name).not.toBe(b.name);
      expect(a.url).not.toBe(b.url);
      expect(await userTables(a.url)).toEqual([]);
      expect(await userTables(b.url)).toEqual([]);
      await query(a.url, 'create table only_in_a (id int)');
      expect(await userTables(a.url)).toEqual([{ name: 'only_in_a' }]);
      expect(await userTables(b.url)).toEqual([]);
      const [current] = await query<{ db: string; encoding: string }>(
        a.url,
        'select current_database() as db, pg_encoding_to_char(encoding) as encoding from pg_database where datname = current_database()',
      );
      expect(current).toEqual({ db: a.name, encoding: 'UTF8' });
    } finally {
      await Promise.all([a.drop(), b.drop()]);
    }
  });

  it('drop ends open sessions and removes the database', async () => {
    const db = await freshDatabase('harness drop');
    const session = new pg.Client({ connectionString: db.url });
    session.on('error', () => undefined);
    await session.connect();
    await db.drop();
    await db.drop(); // a second drop is harmless
    const server = inject('databaseServerUrl');
    expect(await query(server, 'select 1 from pg_database where datname = $1', [db.name])).toEqual([]);
    await expect(session.query('select 1')).rejects.toThrow();
    await expect(query(db.url, 'select 1')).rejects.toMatchObject({ code: '3D000' });
    await session.end().catch(() => undefined);
  });

  describe('useFreshDatabase', () => {
    const database = useFreshDatabase('harness holder');

    it('fills in the URL of a database that exists and is empty', async () => {
      expect(database.url).toMatch(/\/test_harness_holder_[0-9a-f]{8}$/);
      expect(await userTables(database.url)).toEqual([]);
    });
  });
});

describe('databaseName and databaseUrl', () => {
  it('turn any label into a lower-case name of letters, digits and underscores, at most 63 long', () => {
    expect(databaseName('Reorg handling!', 'abcd1234')).toBe('test_reorg_handling_abcd1234');
    expect(databaseName('ÜBER--weird  label', '00ff00ff')).toBe('test_ber_weird_label_00ff00ff');
    const long = databaseName('x'.repeat(200));
    expect(long.length).toBeLessThanOrEqual(63);
    expect(long).toMatch(/^test_x+_[0-9a-f]{8}$/);
    expect(databaseName('same')).not.toBe(databaseName('same'));
  });

  it('swap only the database of a server URL', () => {
    expect(databaseUrl('postgres://u:p@127.0.0.1:5432/postgres?sslmode=disable', 'test_a_1')).toBe('postgres://u:p@127.0.0.1:5432/test_a_1?sslmode=disable');
  });
});

describe('freePort', () => {
  it('returns a port that can be listened on', async () => {
    const port = await freePort();
    expect(port).toBeGreaterThan(0);
    expect(await canListenOn(port)).toBe(true);
  });
});

describe('startEmbeddedPostgres', () => {
  let workDir = '';
  let stateDir = '';
  beforeAll(async () => {
    workDir = await scratchDir('embedded');
    stateDir = (await embeddedTestRoot()).stateDir;
  });
  afterAll(async () => {
    if (workDir) await rm(workDir, { recursive: true, force: true });
  });

  it('starts on a free port, frees it on stop, and a second start on the same folder keeps the data', async () => {
    const dataDir = path.join(workDir, 'reuse');
    const first = await startEmbeddedPostgres({ dataDir, stateDir });
    expect(first.url).toBe(`postgres://postgres:postgres@127.0.0.1:${first.port}/postgres`);
    await query(first.url, 'create table kept (note text)');
    await query(first.url, "insert into kept values ('written before the restart')");
    const initialisedAt = (await stat(path.join(dataDir, 'PG_VERSION'))).mtimeMs;
    await first.stop();
    await first.stop(); // a second stop is harmless
    expect(await canListenOn(first.port)).toBe(true);

    const second = await startEmbeddedPostgres({ dataDir, stateDir, user: 'postgres', password: 'postgres' });
    try {
      expect(await query(second.url, 'select note from kept')).toEqual([{ note: 'written before the restart' }]);
      expect((await stat(path.join(dataDir, 'PG_VERSION'))).mtimeMs).toBe(initialisedAt);
    } finally {
      await second.stop();
    }
  });

  it('uses the user and password it is given, and refuses other credentials on the same folder later', async () => {
    const dataDir = path.join(workDir, 'credentials');
    const server = await startEmbeddedPostgres({ dataDir, stateDir, user: 'etl', password: 'p@ss word' });
    expect(server.url).toBe(`postgres://etl:p%40ss%20word@127.0.0.1:${server.port}/postgres`);
    const [row] = await query<{ user: string }>(server.url, 'select current_user as user');
    expect(row).toEqual({ user: 'etl' });
    await server.stop();
    await expect(startEmbeddedPostgres({ dataDir, stateDir, user: 'etl', password: 'other' })).rejects.toBeInstanceOf(ConfigError);
  });

  it('starts again after its server was killed and left a stale postmaster.pid, with the committed data', async () => {
    const dataDir = path.join(workDir, 'killed');
    const first = await startEmbeddedPostgres({ dataDir, stateDir });
    await query(first.url, 'create table survived (n int)');
    await query(first.url, 'insert into survived values (42)');
    const pid = await postmasterPid(dataDir);
    process.kill(pid, 'SIGKILL');
    await waitUntil('the killed postmaster is gone', () => !isAlive(pid));
    await first.stop(); // must not wait for an exit that already happened
    expect(await postmasterPid(dataDir)).toBe(pid); // stale: names a dead process

    const second = await startEmbeddedPostgres({ dataDir, stateDir });
    try {
      expect(await postmasterPid(dataDir)).not.toBe(pid);
      expect(await query(second.url, 'select n from survived')).toEqual([{ n: 42 }]);
    } finally {
      await second.stop();
    }
  });

  it('refuses to start a second server on a folder whose server is running', async () => {
    const dataDir = path.join(workDir, 'busy');
    const running = await startEmbeddedPostgres({ dataDir, stateDir });
    try {
      const pid = await postmasterPid(dataDir);
      const second = startEmbeddedPostgres({ dataDir, stateDir });
      await expect(second).rejects.toBeInstanceOf(ConfigError);
      await expect(second).rejects.toThrow(`pid ${pid}`);
      expect(await query(running.url, 'select 1 as ok')).toEqual([{ ok: 1 }]);
    } finally {
      await running.stop();
    }
  });

  it('refuses a folder that is not empty and holds no cluster', async () => {
    const dataDir = path.join(workDir, 'not-a-cluster');
    await mkdir(dataDir, { recursive: true });
    await writeFile(path.join(dataDir, 'notes.txt'), 'not a database\n');
    await expect(startEmbeddedPostgres({ dataDir, stateDir })).rejects.toThrow(/holds no PostgreSQL cluster/);
  });

  it('stops its server when the process that started it is killed', async () => {
    const dataDir = path.join(workDir, 'orphan');
    const moduleUrl = new URL('../src/local-postgres/embedded-postgres.ts', import.meta.url).href;
    const script = [
      `const { startEmbeddedPostgres } = await import(${JSON.stringify(moduleUrl)});`,
      `const server = await startEmbeddedPostgres({ dataDir: ${JSON.stringify(dataDir)}, stateDir: ${JSON.stringify(stateDir)} });`,
      'console.log(JSON.stringify({ port: server.port }));',
      'setInterval(() => {}, 1000);',
    ].join('\n');
    const parent = spawn(process.execPath, ['--import', 'tsx', '--input-type=module', '-e', script], {
      cwd: PROJECT_DIR,
      stdio: ['ignore', 'pipe', 'pipe'],
    });
    let stderr = '';
    parent.stderr.on('data', (chunk: Buffer) => (stderr += chunk.toString()));
    const exited = new Promise((resolve) => parent.once('exit', resolve));
    const port = await new Promise<number>((resolve, reject) => {
      let stdout = '';
      parent.stdout.on('data', (chunk: Buffer) => {
        stdout += chunk.toString();
        const line = stdout.split('\n').find((l) => l.startsWith('{'));
        if (line) resolve((JSON.parse(line) as { port: number }).port);
      });
      parent.once('exit', (code) => reject(new Error(`the child exited (${code}) before starting PostgreSQL: ${stderr}`)));
    });
    const pid = await postmasterPid(dataDir);
    expect(await query(`postgres://postgres:postgres@127.0.0.1:${port}/postgres`, 'select 1 as ok')).toEqual([{ ok: 1 }]);

    parent.kill('SIGKILL');
    await exited;
    await waitUntil('the orphaned postmaster has stopped', () => !isAlive(pid));
    // a clean (fast) shutdown removes postmaster.pid; a crash would leave it
    await expect(stat(path.join(dataDir, 'postmaster.pid'))).rejects.toMatchObject({ code: 'ENOENT' });
    await waitUntil('the port is free again', () => canListenOn(port));
  });
});

describe('ensureTraversableParents', () => {
  let outsideDir = '';
  let insideDir = '';
  let stateDir = '';
  beforeAll(async () => {
    outsideDir = await mkdtemp(path.join(tmpdir(), 'erc20-etl-traverse-'));
    insideDir = await scratchDir('traverse');
    stateDir = (await embeddedTestRoot()).stateDir;
  });
  afterAll(async () => {
    await rm(outsideDir, { recursive: true, force: true });
    await rm(insideDir, { recursive: true, force: true });
  });

  it('opens closed folders inside the state folder (0755)', async () => {
    const closed = path.join(insideDir, 'closed');
    await mkdir(path.join(closed, 'deeper'), { recursive: true });
    await chmod(closed, 0o700);
    await ensureTraversableParents({ path: path.join(closed, 'deeper', 'pg'), openableDir: stateDir });
    expect((await stat(closed)).mode & 0o777).toBe(0o755);
  });

  it('refuses closed folders outside the state folder, naming them and changing nothing', async () => {
    const closed = path.join(outsideDir, 'closed');
    await mkdir(closed, { recursive: true });
    await chmod(closed, 0o700);
    const attempt = ensureTraversableParents({ path: path.join(closed, 'pg'), openableDir: stateDir });
    await expect(attempt).rejects.toBeInstanceOf(ConfigError);
    await expect(attempt).rejects.toThrow(closed);
    await expect(attempt).rejects.toThrow('chmod o+x');
    expect((await stat(closed)).mode & 0o777).toBe(0o700);
  });
});

describe('a project anywhere, run by anyone', () => {
  let closedDir = '';
  let projectStateDir = '';
  afterAll(async () => {
    if (projectStateDir) await rm(projectStateDir, { recursive: true, force: true });
    if (closedDir) await rm(closedDir, { recursive: true, force: true });
  });

  it('runs the server as an unprivileged user for a project inside a folder only its owner may enter, path with a space', async () => {
    // what `mktemp -d` makes: mode 0700, so nobody but its owner can enter the project inside it
    closedDir = await mkdtemp(path.join(tmpdir(), 'erc20-etl-closed-'));
    expect((await stat(closedDir)).mode & 0o777).toBe(0o700);
    const projectDir = path.join(closedDir, 'my project');
    await mkdir(projectDir);
    projectStateDir = await localStateDir(projectDir);
    const dataDir = path.join(projectStateDir, 'demo-pg');
    const asRoot = process.getuid?.() === 0;

    const server = await startEmbeddedPostgres({ dataDir, stateDir: projectStateDir });
    try {
      expect(await query(server.url, 'select 1 as ok')).toEqual([{ ok: 1 }]);
      const status = await readFile(`/proc/${server.pid}/status`, 'utf8');
      const uid = Number(/^Uid:\s+(\d+)/m.exec(status)?.[1]);
      const exe = await readlink(`/proc/${server.pid}/exe`);
      if (asRoot) {
        // PostgreSQL may not run as root: it runs as another user, from a copy of the binaries it can reach
        expect(uid).not.toBe(0);
        expect(path.relative(closedDir, projectStateDir).startsWith('..')).toBe(true);
        expect(exe.startsWith(projectStateDir + path.sep)).toBe(true);
        expect((await stat(closedDir)).mode & 0o777).toBe(0o700); // nothing outside the project was opened
      } else {
        expect(uid).toBe(process.getuid?.());
        expect(projectStateDir).toBe(path.join(projectDir, '.data'));
      }
    } finally {
      await server.stop();
    }
    // started again, it finds its cluster and data
    const again = await startEmbeddedPostgres({ dataDir, stateDir: projectStateDir });
    try {
      expect(await query(again.url, 'select 1 as ok')).toEqual([{ ok: 1 }]);
    } finally {
      await again.stop();
    }
  });
});
