import { sql } from 'kysely';
import { lockId, lockKeys } from './lock-keys.ts';
import type { WarehouseTransaction } from './transaction.ts';

/**
 * Takes an enqueue's turn for `job` until `trx` ends: waits for other enqueues of the job to commit, then
 * holds the job's lock shared, so `erc20-etl run` of the job cannot start meanwhile. Resolves to false
 * (holding only the enqueue turn) when a `run` of the job holds it now.
 */
export async function takeEnqueueTurn(trx: WarehouseTransaction, job: string): Promise<boolean> {
  await sql`SELECT pg_advisory_xact_lock(${lockId(lockKeys.enqueue(job))})`.execute(trx);
  const free = await sql<{ ok: boolean }>`SELECT pg_try_advisory_xact_lock_shared(${lockId(lockKeys.job(job))}) AS ok`.execute(trx);
  return free.rows[0]?.ok === true;
}
