import { randomBytes } from 'node:crypto';
import pg from 'pg';
import { afterAll, beforeAll, inject } from 'vitest';

export interface FreshDatabase {
  /** Connection URL of the new database: the server's URL with the database name swapped. */
  url: string;
  name: string;
  /** Ends every session on it and drops it. Safe to call twice. */
  drop(): Promise<void>;
}

const MAX_IDENTIFIER = 63;

/**
 * A database name made of the label and a random suffix, safe unquoted in SQL: lower-case letters, digits and
 * `_`, at most 63 characters.
 *
 * @example databaseName('Reorg handling!') // 'test_reorg_handling_5f1c9a0b'
 */
export function databaseName(label: string, suffix = randomBytes(4).toString('hex')): string {
  const tail = `_${suffix}`;
  const slug = label
    .toLowerCase()
    .replace(/[^a-z0-9]+/g, '_')
    .replace(/^_+|_+$/g, '');
  const head = `test_${slug}`.slice(0, MAX_IDENTIFIER - tail.length).replace(/_+$/, '');
  return `${head}${tail}`;
}

/** `serverUrl` with its database replaced by `name` (query parameters such as sslmode are kept). */
export function databaseUrl(serverUrl: string, name: string): string {
  const url = new URL(serverUrl);
  url.pathname = `/${name}`;
  return url.toString();
}

/**
 * Creates a new, empty, uniquely named database (UTF8, C collation) on the test server and returns its URL.
 *
 * @example
 * const db = await freshDatabase('copy');
 * // db.url === 'postgres://postgres:postgres@127.0.0.1:41873/test_copy_5f1c9a0b'
 * await db.drop();
 */
export async function freshDatabase(label: string, serverUrl: string = inject('databaseServerUrl')): Promise<FreshDatabase> {
  const name = databaseName(label);
  await withServer(serverUrl, (client) => client.query(`create database ${name} template template0 encoding 'UTF8' lc_collate 'C' lc_ctype 'C'`));
  let dropped: Promise<void> | undefined;
  return {
    url: databaseUrl(serverUrl, name),
    name,
    drop: () => (dropped ??= dropDatabase(serverUrl, name)),
  };
}

/**
 * A fresh database for a describe block: created in beforeAll, dropped in afterAll. Read `url` inside tests.
 *
 * @example
 * const database = useFreshDatabase('migrate');
 * it('creates the tables', async () => { await migrate({ databaseUrl: database.url }); });
 */
export function useFreshDatabase(label: string): { readonly url: string } {
  let db: FreshDatabase | undefined;
  beforeAll(async () => {
    db = await freshDatabase(label);
  });
  afterAll(async () => {
    await db?.drop();
  });
  return {
    get url(): string {
      if (!db) throw new Error(`The fresh database "${label}" exists only once beforeAll has run: read .url inside a test or hook.`);
      return db.url;
    },
  };
}

async function dropDatabase(serverUrl: string, name: string): Promise<void> {
  await withServer(serverUrl, async (client) => {
    for (let attempt = 1; ; attempt++) {
      await client.query('select pg_terminate_backend(pid) from pg_stat_activity where datname = $1 and pid <> pg_backend_pid()', [name]);
      try {
        await client.query(`drop database if exists ${name}`);
        return;
      } catch (err) {
        // 55006: a session reconnected between the terminate and the drop
        if ((err as { code?: string }).code !== '55006' || attempt >= 5) throw err;
      }
    }
  });
}

async function withServer<T>(serverUrl: string, work: (client: pg.Client) => Promise<T>): Promise<T> {
  const client = new pg.Client({ connectionString: serverUrl, application_name: 'test-harness' });
  client.on('error', () => undefined);
  await client.connect();
  try {
    return await work(client);
  } finally {
    await client.end();
  }
}
