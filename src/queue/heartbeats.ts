import { hostname } from 'node:os';
import type { Logger } from 'pino';
import type { Warehouse } from '../warehouse/db.ts';
import { expiredWorkers, forgetHeartbeats, recordHeartbeats, unlockTasksOf } from '../warehouse/worker-leases.ts';

export interface Heartbeats {
  /** A graphile-worker worker (or pool) id that this process runs tasks under. */
  add(workerId: string): void;
  /** The ids this process runs tasks under. */
  ids(): string[];
  /** Beats now, and hands back the tasks of workers not heard from in the lease; resolves once done. */
  sweep(): Promise<void>;
  /**
   * Stops beating, and hands back to the queue any task still locked under this process's ids: called once
   * the runner has stopped, when none of them runs any more (graphile-worker does not always record a task
   * it stopped before its own shutdown ends).
   */
  stop(): Promise<void>;
}

/**
 * Keeps this process's workers alive in `worker_heartbeats` every `leaseSeconds / 4`, and hands back to the
 * queue the tasks of workers not heard from in their own lease (each worker's beats say it), so another worker
 * finishes what a killed one started (graphile-worker alone waits four hours). PostgreSQL's clock judges, so machines' clocks may differ.
 * A worker that is only slow loses nothing by this: its chunk's lock (task-lock.ts) makes the second
 * taker wait until the first lets go.
 */
export function startHeartbeats(deps: { warehouse: Warehouse; logger: Logger; leaseSeconds: number }): Heartbeats {
  const ids = new Set<string>();
  const host = hostname();
  let running: Promise<string[]> | undefined;
  const tick = (): Promise<string[]> =>
    (running ??= (async () => {
      try {
        if (ids.size) await recordHeartbeats(deps.warehouse, { workerIds: [...ids], host, pid: process.pid, leaseSeconds: deps.leaseSeconds });
        const dead = await expiredWorkers(deps.warehouse, deps.leaseSeconds);
        if (dead.length) {
          await unlockTasksOf(deps.warehouse, dead);
          deps.logger.warn({ msg: 'workers not heard from: their tasks go back to the queue', workers: dead, leaseSeconds: deps.leaseSeconds });
        }
        await forgetHeartbeats(deps.warehouse, dead, deps.leaseSeconds);
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
    ids: () => [...ids],
    async sweep() {
      // one under way may have begun before a later change: wait for it, then beat again
      await running;
      await tick();
    },
    async stop() {
      clearInterval(timer);
      await running;
      const gone = [...ids];
      ids.clear();
      if (!gone.length) return;
      await unlockTasksOf(deps.warehouse, gone).catch((err: unknown) =>
        deps.logger.warn({ msg: "could not hand back this worker's tasks; other workers take them after the lease", err: (err as Error).message }),
      );
      await forgetHeartbeats(deps.warehouse, gone, deps.leaseSeconds).catch(() => undefined);
    },
  };
}
