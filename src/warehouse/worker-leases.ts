import type { Warehouse } from './db.ts';

// Every id of one process says it is alive, with its lease, in one statement.
const BEAT = `
  INSERT INTO worker_heartbeats (worker_id, host, pid, seen_at, lease_seconds)
  SELECT id, $2, $3, now(), $4::integer FROM unnest($1::text[]) AS id
  ON CONFLICT (worker_id) DO UPDATE SET host = excluded.host, pid = excluded.pid, seen_at = now(), lease_seconds = excluded.lease_seconds`;

// Workers holding a task for longer than their own lease (the sweeper's, $1, for one that never said) with no
// heartbeat within it. A task locked less than a lease ago is never counted, however new its worker.
const EXPIRED = `
  SELECT DISTINCT j.locked_by AS worker_id FROM graphile_worker.jobs j
  LEFT JOIN worker_heartbeats h ON h.worker_id = j.locked_by
  WHERE j.locked_by IS NOT NULL AND j.locked_at < now() - make_interval(secs => coalesce(h.lease_seconds, $1::integer))
    AND (h.seen_at IS NULL OR h.seen_at < now() - make_interval(secs => coalesce(h.lease_seconds, $1::integer)))`;
const UNLOCK = 'SELECT graphile_worker.force_unlock_workers($1::text[])';
const FORGET = 'DELETE FROM worker_heartbeats WHERE worker_id = ANY($1::text[]) OR seen_at < now() - make_interval(secs => greatest(coalesce(lease_seconds, $2), $2) * 10)';

/** Records that the graphile-worker workers (or pools) `workerIds` of process `pid` on `host`, judged by `leaseSeconds`, are alive now. */
export async function recordHeartbeats(warehouse: Warehouse, beat: { workerIds: readonly string[]; host: string; pid: number; leaseSeconds: number }): Promise<void> {
  await warehouse.pool.query(BEAT, [[...beat.workerIds], beat.host, beat.pid, beat.leaseSeconds]);
}

/**
 * The workers whose lease ran out: they have held a task for longer than their own lease (`leaseSeconds` for one
 * that never said) without a heartbeat within it, so their process is gone (killed, or its machine is).
 * PostgreSQL's clock judges.
 */
export async function expiredWorkers(warehouse: Warehouse, leaseSeconds: number): Promise<string[]> {
  const { rows } = await warehouse.pool.query<{ worker_id: string }>(EXPIRED, [leaseSeconds]);
  return rows.map((r) => r.worker_id);
}

/** Hands every task locked under `workerIds` back to the queue, for any worker to take. */
export async function unlockTasksOf(warehouse: Warehouse, workerIds: readonly string[]): Promise<void> {
  await warehouse.pool.query(UNLOCK, [[...workerIds]]);
}

/** Forgets the heartbeats of `workerIds`, and any not renewed for ten leases. */
export async function forgetHeartbeats(warehouse: Warehouse, workerIds: readonly string[], leaseSeconds: number): Promise<void> {
  await warehouse.pool.query(FORGET, [[...workerIds], leaseSeconds]);
}
