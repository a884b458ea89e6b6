import pg from 'pg';
import { Kysely, PostgresDialect } from 'kysely';
import type { Logger } from 'pino';
import { ConfigError, RetryableError } from '../common/errors.ts';
import type { Database } from './schema.ts';

export interface Warehouse {
  db: Kysely<Database>;
  /** The pool under `db`, for COPY and for sessions that must hold one connection (locks). */
  pool: pg.Pool;
  close(): Promise<void>;
}

// BIGINT and NUMERIC come back as text: exact, and never squeezed through a JS number.
const TEXT = (value: string) => value;

/** How long a warehouse connection may be idle before the kernel starts probing whether its server is still there. */
export const KEEPALIVE_IDLE_MS = 30_000;

/**
 * Opens the warehouse: a pg pool and kysely over it. BIGINT (20), NUMERIC (1700) and BIGINT[] stay text.
 *
 * @example const { db, close } = createWarehouse({ databaseUrl, logger, maxConnections: 8 });
 */
export function createWarehouse(options: { databaseUrl: string; logger: Logger; maxConnections?: number; applicationName?: string }): Warehouse {
  const types = {
    getTypeParser(oid: number, format?: 'text' | 'binary') {
      if (oid === 20 || oid === 1700) return TEXT;
      return pg.types.getTypeParser(oid, format as 'text');
    },
  };
  const pool = new pg.Pool({
    ...connectionOptions(options.databaseUrl),
    max: options.maxConnections ?? 10,
    application_name: options.applicationName ?? 'erc20-etl',
    types: types as pg.CustomTypesConfig,
    connectionTimeoutMillis: 15_000,
  });
  // every connection has a listener of its own for its whole life, idle or in use: one in use can fail between its
  // statements (PostgreSQL restarting or ending it: 57P01), and pg emits that on the client, which has no listener of
  // the pool's then, so the process would die of an unhandled 'error' event. Its next statement fails as a lost
  // connection, and the retry policy decides. The pool's own event (an idle connection's failure) is logged here too.
  pool.on('error', () => undefined);
  pool.on('connect', (client) =>
    client.on('error', (err) => options.logger.warn({ msg: 'a PostgreSQL connection failed; a statement on it fails and is retried where it can be', err: err.message })),
  );
  const db = new Kysely<Database>({ dialect: new PostgresDialect({ pool }) });
  return { db, pool, close: () => db.destroy() };
}

/** What every connection of the tool to the warehouse is opened with. */
function connectionOptions(databaseUrl: string): pg.PoolConfig {
  return {
    connectionString: databaseUrl,
    // a server or network that vanishes without closing the connection (a host that died, a NAT or firewall that
    // dropped an idle flow) would leave a query waiting for its answer forever: the kernel probes an idle
    // connection after this long and fails it when the probes go unanswered (about 11 more minutes with Linux's
    // default interval and count), so the statement fails as a lost connection and the run's retry policy decides
    keepAlive: true,
    keepAliveInitialDelayMillis: KEEPALIVE_IDLE_MS,
  };
}

/**
 * The pool graphile-worker runs a worker's queue on (`pgPool`: it would make one from the URL without keepalive): a
 * worker waits on its queue for days, so its connections are probed as the warehouse's are. An idle connection that
 * fails, or one in use, is logged, and pg drops it. The caller ends the pool once the runner has stopped.
 *
 * @example const pgPool = createQueuePool({ databaseUrl, logger, maxConnections: concurrency + 3 }); // run({ pgPool, … }); … await pgPool.end();
 */
export function createQueuePool(options: { databaseUrl: string; logger: Logger; maxConnections: number }): pg.Pool {
  const pool = new pg.Pool({ ...connectionOptions(options.databaseUrl), max: options.maxConnections, application_name: 'erc20-etl queue' });
  const failed = (err: Error) => options.logger.warn({ msg: 'a queue connection to PostgreSQL failed', err: err.message });
  pool.on('error', failed);
  pool.on('connect', (client) => client.on('error', failed));
  return pool;
}

/** Turns a connection failure into an error that says what to check, without the URL (it may hold a password). */
export function describeConnectionError(err: unknown): Error {
  const e = err as { code?: string; message?: string };
  const codes: Record<string, string> = {
    ECONNREFUSED: 'nothing listens at the host and port of DATABASE_URL: start PostgreSQL or fix the URL',
    ENOTFOUND: 'the host of DATABASE_URL does not resolve: fix the URL',
    '28P01': 'PostgreSQL refused the password of DATABASE_URL',
    '28000': 'PostgreSQL refused the role of DATABASE_URL (check pg_hba.conf and the user name)',
    '3D000': 'the database named in DATABASE_URL does not exist: create it (createdb) or fix the URL',
  };
  // `sslmode=require` (or verify-*) in DATABASE_URL against a server that accepts no SSL
  if (/does not support SSL/i.test(e.message ?? '')) {
    return new ConfigError(
      'Cannot use the database: DATABASE_URL asks for SSL (sslmode=require, verify-ca or verify-full) and the server does not accept SSL connections: drop sslmode from the URL, or turn SSL on in the server.',
    );
  }
  const hint = e.code ? codes[e.code] : undefined;
  if (hint && (e.code === '3D000' || e.code === '28P01' || e.code === '28000' || e.code === 'ENOTFOUND')) {
    return new ConfigError(`Cannot use the database: ${hint}.`);
  }
  if (hint) return new RetryableError(`Cannot reach the database: ${hint}.`, undefined, { cause: err });
  return err instanceof Error ? err : new Error(String(err));
}
