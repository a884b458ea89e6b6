import type pg from 'pg';
import type { Clock } from '../common/clock.ts';
import type { BackendSession } from './load-page.ts';

/** How long a lost connection's backend is given to end once told to (it ends in milliseconds when it can). */
const END_WITHIN_MS = 10_000;
const POLL_MS = 50;

// the exporter's role may end its own backends (pg_terminate_backend checks it); the start time makes sure the id
// still names that backend
const TERMINATE = 'SELECT pg_terminate_backend(pid) FROM pg_stat_activity WHERE pid = $1 AND backend_start = $2::timestamptz';
const ALIVE = 'SELECT EXISTS (SELECT 1 FROM pg_stat_activity WHERE pid = $1 AND backend_start = $2::timestamptz) AS alive';

/**
 * Ends the server side of a connection the exporter lost, and waits until it is gone; resolves to whether it is.
 * The client's side of a connection can break while the server's lives on (a network that drops one direction, a
 * proxy or NAT that forgets it): the backend keeps its transaction open, with the locks of the rows it wrote and of
 * its chunks' rows, until TCP gives up on it, hours later; and a COMMIT on its way may still arrive. Ended, the
 * transaction has committed or never will, so whether it did can be read from another connection, and writing its
 * pages again waits on no lock of it. A backend already gone (the usual case) costs one query.
 *
 * @example await endLostBackend(warehouse.pool, { pid: 4242, started: '2026-11-29 00:01:02.345678+00' }, clock) // → true
 */
export async function endLostBackend(pool: pg.Pool, backend: BackendSession, clock: Clock): Promise<boolean> {
  const params = [backend.pid, backend.started];
  const deadline = clock.now() + END_WITHIN_MS;
  try {
    await pool.query(TERMINATE, params);
    for (;;) {
      const { rows } = await pool.query<{ alive: boolean }>(ALIVE, params);
      if (!rows[0]?.alive) return true;
      if (clock.now() >= deadline) return false;
      await clock.sleep(POLL_MS);
    }
  } catch {
    // the warehouse cannot be asked now: whoever writes next retries, as for any lost connection
    return false;
  }
}
