import type pg from 'pg';
import type { Clock } from '../common/clock.ts';
import { beginPageSession, endPageSession, type BackendSession } from './load-page.ts';
import { endLostBackend } from './lost-backend.ts';
import { classifyPgError } from './pg-errors.ts';

/**
 * A pool connection a writer holds across pages, idle while the API answers between them: a drop meanwhile is
 * noted (without a listener it would crash the process), and the connection goes back to the pool with its page
 * session reset (`synchronous_commit = off` and the planner settings of `load-page.ts` must not reach the ledger's
 * statements), or is destroyed when it broke or cannot be reset.
 */
export interface HeldConnection {
  /** The held connection; when none is held, a new one with its page session begun (a failure comes classified). */
  get(): Promise<pg.PoolClient>;
  /** The held connection, if any, without connecting. */
  current(): pg.PoolClient | undefined;
  /** Whether the held connection reported an error while idle. */
  broken(): boolean;
  /** Lets go of the held connection: destroyed when `err` is given, else back to the pool as it is. */
  release(err?: Error): void;
  /**
   * Lets go of a held connection that broke (destroyed), and ends its backend if the server still runs it
   * (`endLostBackend`): what its transaction did is then settled, and none of its locks is left behind.
   */
  drop(err: Error): Promise<void>;
  /** Gives the held connection back with its session reset; destroys it when it broke or the reset fails. */
  close(): Promise<void>;
}

/**
 * @example const held = holdConnection(warehouse.pool, clock);
 * const client = await held.get(); // page session begun
 * await held.close(); // RESET ALL, back to the pool
 */
export function holdConnection(pool: pg.Pool, clock: Clock): HeldConnection {
  let client: pg.PoolClient | undefined;
  let backend: BackendSession | undefined;
  let broken = false;
  const noteBroken = () => {
    broken = true;
  };
  const release = (err?: Error) => {
    client?.removeListener('error', noteBroken);
    client?.release(err);
    client = undefined;
    backend = undefined;
    broken = false;
  };
  return {
    async get() {
      if (client) return client;
      const c = await pool.connect().catch((err: unknown) => {
        throw classifyPgError(err);
      });
      c.on('error', noteBroken);
      client = c;
      try {
        backend = await beginPageSession(c);
      } catch (err) {
        release(err instanceof Error ? err : new Error(String(err)));
        throw classifyPgError(err);
      }
      return c;
    },
    current: () => client,
    broken: () => broken,
    release,
    async drop(err) {
      const lost = backend;
      release(err);
      if (lost) await endLostBackend(pool, lost, clock);
    },
    async close() {
      if (!client) return;
      if (broken) return release(new Error('connection lost'));
      // a connection whose settings cannot be reset is not given back for reuse
      const reset = await endPageSession(client).then(
        () => undefined,
        (err: unknown) => (err instanceof Error ? err : new Error(String(err))),
      );
      release(reset);
    },
  };
}
