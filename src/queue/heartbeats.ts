import { hostname } from 'node:os';
import type pg from 'pg';
import type { Logger } from 'pino';

// Every id this process works under says it is alive, in one statement.
const BEAT = `
  INSERT INTO worker_heartbeats (worker_id, host, pid, seen_at)
  SELECT id, $2, $3, now() FROM unnest($1::text[]) AS id
  ON CONFLICT (worker_id) DO UPDATE SET host = excluded.host, pid = excluded.pid, seen_at = now()`;

// Workers holding a task for longer than the lease with no heartbeat within it: their process is gone
// (killed, or its machine is). A task locked less than a lease ago is never taken, however new its worker.
const DEAD = `
  SELECT DISTINCT j.locked_by AS worker_id FROM graphile_worker.jobs j
  WHERE j.locked_by IS NOT NULL AND j.locked_at < now() - make_interval(secs => $1)
    AND NOT EXISTS (
      SELECT 1 FROM worker_heartbeats h WHERE h.worker_id = j.locked_by AND h.seen_at >= now() - make_interval(secs => $1))`;
const UNLOCK = 'SELECT graphile_worker.force_unlock_workers($1::text[])';
const FORGET = 'DELETE FROM worker_heartbeats WHERE worker_id = ANY($1::text[]) OR seen_at < now() - make_interval(secs => $2 * 10)';

export interface Heartbeats {
  /** A graphile-worker worker (or pool) id that this process runs tasks under. */
  add(workerId: string): void;
  /**
   * Stops beating, and hands back to the queue any task still locked under this process's ids: called once
   * the runner has stopped, when none of them runs any more (graphile-worker does not always record a task
   * it stopped before its own shutdown ends).
   */
  stop(): Promise<void>;
}

/**
 * Keeps this process's workers alive in `worker_heartbeats` every `leaseSeconds / 4`, and hands back to the
 * queue the tasks of workers not heard from in `leaseSeconds`, so another worker finishes what a killed one
 * started (graphile-worker alone waits four hours). PostgreSQL's clock judges, so machines' clocks may differ.
 * A worker that is only slow loses nothing by this: its chunk's lock (task-lock.ts) makes the second
 * taker wait until the first lets go.
 */
export function startHeartbeats(deps: { pool: pg.Pool; logger: Logger; leaseSeconds: number }): Heartbeats {
  const ids = new Set<string>();
  const host = hostname();
  let running: Promise<string[]> | undefined;
  const tick = (): Promise<string[]> =>
    (running ??= (async () => {
      try {
        if (ids.size) await deps.pool.query(BEAT, [[...ids], host, process.pid]);
        const { rows } = await deps.pool.query<{ worker_id: string }>(DEAD, [deps.leaseSeconds]);
        const dead = rows.map((r) => r.worker_id);
        if (dead.length) {
          await deps.pool.query(UNLOCK, [dead]);
          deps.logger.warn({ msg: 'workers not heard from: their tasks go back to the queue', workers: dead, leaseSeconds: deps.leaseSeconds });
        }
        await deps.pool.query(FORGET, [dead, deps.leaseSeconds]);
        return dead;
      } catch (err) {
        deps.logger.warn({ msg: 'heartbeat failed; trying again', err: (err as Error).message });
        return [];
      } finally {
        running = undefined;
      }
    })());
  const timer = setInterval(() => void tick(), (deps.leaseSeconds * 1000) / 4);
  timer.unref();
  return {
    add: (id) => {
      ids.add(id);
      void tick();
    },
    async stop() {
      clearInterval(timer);
      await running;
      const gone = [...ids];
      ids.clear();
      if (!gone.length) return;
      await deps.pool.query(UNLOCK, [gone]).catch((err: unknown) =>
        deps.logger.warn({ msg: 'could not hand back this worker\'s tasks; other workers take them after the lease', err: (err as Error).message }),
      );
      await deps.pool.query(FORGET, [gone, deps.leaseSeconds]).catch(() => undefined);
    },
  };
}
