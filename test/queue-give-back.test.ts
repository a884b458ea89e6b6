import { sql } from 'kysely';
import pino from 'pino';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { installQueue } from '../src/queue/install.ts';
import { giveBackTasks } from '../src/warehouse/queue-tasks.ts';
import { migratedWarehouse } from './helpers/exporter.ts';

/** What a worker whose endpoint turned to another chain gives back: only the tasks still as it left them. */
describe('giving back tasks a worker left unread', () => {
  let target: Awaited<ReturnType<typeof migratedWarehouse>>;
  beforeAll(async () => {
    target = await migratedWarehouse('queue_give_back');
    await installQueue(target.url, pino({ level: 'silent' }));
  });
  afterAll(async () => {
    await target.drop();
  });

  const add = async (key: string) =>
    (await sql<{ id: string }>`SELECT (graphile_worker.add_job('erc20_etl_chunk', '{}'::json, job_key => ${key})).id::text AS id`.execute(target.warehouse.db)).rows[0]!.id;
  const state = async (id: string) =>
    (
      await sql<{ attempts: number; revision: number; wait_ms: number }>`
        SELECT attempts, revision, greatest(0, extract(epoch FROM run_at - now()) * 1000)::int AS wait_ms FROM graphile_worker.jobs WHERE id = ${id}::bigint`.execute(
        target.warehouse.db,
      )
    ).rows[0];
  // as graphile-worker leaves a task it took and whose failure it recorded: an attempt counted, a back-off
  const takenAndFailed = (id: string, attempts: number) =>
    sql`SELECT graphile_worker.reschedule_jobs(ARRAY[${id}::bigint], run_at => now() + interval '1 minute', attempts => ${attempts})`.execute(target.warehouse.db);

  it('gives back a task as this worker left it, and leaves one another worker took, enqueue replaced, a worker holds, or that is gone', async () => {
    const mine = await add('give-back:mine');
    const takenSince = await add('give-back:taken-since');
    const replaced = await add('give-back:replaced');
    const held = await add('give-back:held');
    const gone = await add('give-back:gone');
    const lastTry = await add('give-back:last-try');
    for (const id of [mine, takenSince, replaced, held, gone]) await takenAndFailed(id, 1);
    // taken on its last attempt, and replaced by enqueue while it ran: graphile-worker takes its key away and leaves its
    // attempts and revision as they were; then its failure is recorded
    await sql`UPDATE graphile_worker._private_jobs SET attempts = max_attempts, locked_at = now(), locked_by = 'this' WHERE id = ${lastTry}::bigint`.execute(target.warehouse.db);
    await add('give-back:last-try');
    await sql`UPDATE graphile_worker._private_jobs SET locked_at = NULL, locked_by = NULL WHERE id = ${lastTry}::bigint`.execute(target.warehouse.db);
    const lastTryState = (
      await sql<{
        attempts: number;
        revision: number;
        key: string | null;
      }>`SELECT attempts, revision, key FROM graphile_worker._private_jobs WHERE id = ${lastTry}::bigint`.execute(target.warehouse.db)
    ).rows[0]!;
    expect(lastTryState).toEqual({ attempts: 25, revision: 0, key: null });
    // since this worker left them: another worker took and failed one, enqueue replaced one, a worker holds one,
    // and one was read to its end
    await takenAndFailed(takenSince, 2);
    await add('give-back:replaced');
    await sql`UPDATE graphile_worker._private_jobs SET locked_at = now(), locked_by = 'another' WHERE id = ${held}::bigint`.execute(target.warehouse.db);
    await sql`SELECT graphile_worker.complete_jobs(ARRAY[${gone}::bigint])`.execute(target.warehouse.db);

    const names = new Map([
      [mine, 'mine'],
      [takenSince, 'taken-since'],
      [replaced, 'replaced'],
      [held, 'held'],
      [gone, 'gone'],
    ]);
    const left = [...names].map(([id, name]) => ({ id, attempts: 1, revision: 0, key: `give-back:${name}`, restore: 0 }));
    left.push({ id: lastTry, attempts: 25, revision: 0, key: 'give-back:last-try', restore: 24 });
    expect(await giveBackTasks(target.warehouse.db, left)).toEqual([mine]);
    // the replaced one on its last attempt stays given up: its replacement reads the chunk
    expect(await state(lastTry)).toMatchObject({ attempts: 25 });
    expect(await state(mine)).toEqual({ attempts: 0, revision: 0, wait_ms: 0 });
    expect(await state(takenSince)).toMatchObject({ attempts: 2 });
    expect((await state(takenSince))!.wait_ms).toBeGreaterThan(0);
    expect(await state(replaced)).toMatchObject({ attempts: 0, revision: 1 });
    expect(await state(held)).toMatchObject({ attempts: 1 });
    expect(await state(gone)).toBeUndefined();
  });
});
