import { sql, type Kysely } from 'kysely';
import type { Database } from './schema.ts';

/**
 * The `eth_getLogs` range (blocks per call) a node source learned for a job of a chain from an endpoint host, or
 * undefined when no run of the job has read that host yet.
 *
 * @example await learnedLogsRange(db, 1, 'nightly', 'mainnet.infura.io') // → 1500
 */
export async function learnedLogsRange(db: Kysely<Database>, chainId: number, job: string, endpointHost: string): Promise<number | undefined> {
  const row = await db
    .selectFrom('logs_ranges')
    .select('blocks')
    .where('chain_id', '=', String(chainId))
    .where('job', '=', job)
    .where('endpoint_host', '=', endpointHost)
    .executeTakeFirst();
  return row?.blocks;
}

/**
 * Keeps the range a run learned for the job and endpoint host, in place of the one before. The host only
 * (`mainnet.infura.io`, `127.0.0.1:8545`): never the URL, whose path may hold a key.
 *
 * @example await saveLogsRange(db, { chainId: 1, job: 'nightly', endpointHost: 'mainnet.infura.io', blocks: 1500, runId: '42' });
 */
export async function saveLogsRange(
  db: Kysely<Database>,
  learned: { chainId: number; job: string; endpointHost: string; blocks: number; runId?: string | undefined },
): Promise<void> {
  if (!Number.isSafeInteger(learned.blocks) || learned.blocks < 1 || learned.blocks > 2_147_483_647) {
    throw new RangeError(`a learned eth_getLogs range must be a positive integer of blocks, got ${learned.blocks}`);
  }
  await db
    .insertInto('logs_ranges')
    .values({ chain_id: learned.chainId, job: learned.job, endpoint_host: learned.endpointHost, blocks: learned.blocks, run_id: learned.runId ?? null })
    .onConflict((oc) => oc.columns(['chain_id', 'job', 'endpoint_host']).doUpdateSet({ blocks: learned.blocks, run_id: learned.runId ?? null, updated_at: sql<Date>`now()` }))
    .execute();
}
