import { sql } from 'kysely';
import type pg from 'pg';
import { FatalError } from '../common/errors.ts';
import type { Warehouse } from './db.ts';
import { LOCK_ID_OF_PARAM_1, lockKeys } from './lock-keys.ts';

/**
 * Whether a session holds the job lock of the run row's job exclusively (`column`: `export_runs.job` as the query
 * names it): a `run` or `backfill` of it is working now. Workers' tasks and `enqueue` hold it shared, and do not count.
 * pg_locks shows a bigint advisory key as its two halves.
 */
export const jobLockHeld = (column: 'export_runs.job' | 'r.job') => sql<boolean>`EXISTS (
  SELECT 1 FROM pg_locks l JOIN pg_database d ON d.oid = l.database
  WHERE l.locktype = 'advisory' AND l.granted AND l.mode = 'ExclusiveLock' AND l.objsubid = 1 AND d.datname = current_database()
    AND ((l.classid::bigint << 32) | l.objid::bigint) = hashtextextended(${lockKeys.job('')}::text || ${sql.ref(column)}, 0))`;

const LOCK_SQL = `SELECT pg_try_advisory_lock(${LOCK_ID_OF_PARAM_1}) AS ok`;
const UNLOCK_SQL = `SELECT pg_advisory_unlock(${LOCK_ID_OF_PARAM_1})`;
const RETAKE_EVERY_MS = 500;
const RETAKE_FOR_MS = 120_000;

export interface JobLock {
  /**
   * Resolves once the lock is held again after a lost connection (PostgreSQL restarted); rejects with
   * JobLockLostError if another run took it meanwhile, or if PostgreSQL stayed away too long.
   */
  ensure(): Promise<void>;
  /** Called once if the lock is lost for good: the run must stop. */
  onLost(listener: (err: JobLockLostError) => void): void;
  release(): Promise<void>;
}

/** The job lock went with its connection and could not be taken back: this run must not go on. */
export class JobLockLostError extends FatalError {
  constructor(job: string, why: string) {
    super(`Lost the lock of job "${job}" when its PostgreSQL connection dropped, and ${why}; this run stopped. Its committed pages are kept; the next run finishes the work.`);
  }
}

/**
 * A PostgreSQL advisory lock keyed by the job's name, held on one connection for the whole run: a
 * second run of the same job finds it taken and stops at once. The lock goes with the connection, so a
 * killed run never leaves it behind; if the connection drops under a live run (PostgreSQL restarted),
 * the lock is taken back at once on a new connection, or the run learns that it must stop.
 *
 * @example const lock = await tryJobLock(warehouse, 'nightly'); if (!lock) process.exitCode = 75;
 */
export async function tryJobLock(warehouse: Warehouse, job: string): Promise<JobLock | undefined> {
  let client: pg.PoolClient | undefined;
  let retaking: Promise<void> | undefined;
  let lostFor: JobLockLostError | undefined;
  let released = false;
  const listeners: ((err: JobLockLostError) => void)[] = [];

  const onError = () => {
    // a checked-out client has no pool listener: this one keeps a dropped connection from crashing the process
    if (!client || released) return;
    const dead = client;
    client = undefined;
    dead.removeListener('error', onError);
    dead.release(new Error('job lock connection lost'));
    retaking ??= retake().finally(() => {
      retaking = undefined;
    });
  };

  async function take(): Promise<boolean> {
    const c = await warehouse.pool.connect();
    try {
      const { rows } = await c.query<{ ok: boolean }>(LOCK_SQL, [lockKeys.job(job)]);
      if (!rows[0]?.ok) {
        c.release();
        return false;
      }
    } catch (err) {
      c.release(err as Error);
      throw err;
    }
    c.on('error', onError);
    client = c;
    return true;
  }

  async function retake(): Promise<void> {
    const deadline = Date.now() + RETAKE_FOR_MS;
    for (;;) {
      // a run that ends (stopped by a signal, or failing) releases the lock: it is not taken back for it
      if (released) return;
      try {
        if (await take()) return;
        lostFor = new JobLockLostError(job, 'another run took it meanwhile');
      } catch {
        if (Date.now() < deadline) {
          await new Promise((r) => setTimeout(r, RETAKE_EVERY_MS));
          continue;
        }
        lostFor = new JobLockLostError(job, `PostgreSQL did not come back within ${RETAKE_FOR_MS / 1000} s`);
      }
      for (const listener of listeners) listener(lostFor);
      return;
    }
  }

  if (!(await take())) return undefined;
  return {
    async ensure() {
      if (!retaking && client) {
        // a connection can also die quietly: ask it
        await client.query('SELECT 1').catch(() => onError());
      }
      await retaking;
      if (lostFor) throw lostFor;
    },
    onLost(listener) {
      listeners.push(listener);
    },
    async release() {
      if (released) return;
      released = true;
      await retaking?.catch(() => undefined);
      const c = client;
      client = undefined;
      if (!c) return;
      c.removeListener('error', onError);
      try {
        await c.query(UNLOCK_SQL, [lockKeys.job(job)]);
        c.release();
      } catch (err) {
        c.release(err as Error);
      }
    },
  };
}
