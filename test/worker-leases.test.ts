import { sql } from 'kysely';
import pino from 'pino';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { installQueue } from '../src/queue/install.ts';
import { expiredWorkers, recordHeartbeats } from '../src/warehouse/worker-leases.ts';
import { migratedWarehouse } from './helpers/exporter.ts';

/** Each worker is judged dead by its own --dead-after, whatever the lease of the worker that sweeps. */
describe('worker leases', () => {
  let target: Awaited<ReturnType<typeof migratedWarehouse>>;
  beforeAll(async () => {
    target = await migratedWarehouse('worker_leases');
    await installQueue(target.url, pino({ level: 'silent' }));
  });
  afterAll(async () => {
    await target.drop();
  });

  /** A task locked by `worker` `lockedAgo` seconds ago, its last heartbeat `seenAgo` seconds ago (none when null). */
  const held = async (worker: string, lockedAgo: number, seenAgo: number | null, leaseSeconds: number | null) => {
    const { rows } = await sql<{ id: string }>`SELECT (graphile_worker.add_job('erc20_etl_chunk', '{}'::json, job_key => ${worker})).id::text AS id`.execute(target.warehouse.db);
    await sql`UPDATE graphile_worker._private_jobs SET locked_by = ${worker}, locked_at = now() - make_interval(secs => ${lockedAgo}) WHERE id = ${rows[0]!.id}::bigint`.execute(
      target.warehouse.db,
    );
    if (seenAgo === null) return;
    if (leaseSeconds === null) {
      // as a worker started before migration 0011 left its row
      await sql`INSERT INTO worker_heartbeats (worker_id, host, pid, seen_at) VALUES (${worker}, 'h', 1, now() - make_interval(secs => ${seenAgo}))`.execute(target.warehouse.db);
      return;
    }
    await recordHeartbeats(target.warehouse, { workerIds: [worker], host: 'h', pid: 1, leaseSeconds });
    await sql`UPDATE worker_heartbeats SET seen_at = now() - make_interval(secs => ${seenAgo}) WHERE worker_id = ${worker}`.execute(target.warehouse.db);
  };

  it("hands back only the tasks of workers silent for longer than their own lease, a sweeper's shorter one notwithstanding", async () => {
    // beats every 15 s under its 60-s lease: last heard 12 s ago, its task taken 40 s ago
    await held('on-time', 40, 12, 60);
    // a 60-s lease, silent for 90 s: gone
    await held('silent', 120, 90, 60);
    // a 5-s lease, silent for 8 s: gone, though the sweeper's own lease is longer
    await held('short', 30, 8, 5);
    // no heartbeat row at all, and one from before leases were kept: judged by the sweeper's lease
    await held('never-heard', 30, null, null);
    await held('old-row', 30, 12, null);
    expect((await expiredWorkers(target.warehouse, 5)).sort()).toEqual(['never-heard', 'old-row', 'short', 'silent']);
    expect((await expiredWorkers(target.warehouse, 60)).sort()).toEqual(['short', 'silent']);
  });
});
