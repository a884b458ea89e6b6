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
 * The block limit a provider does not state, as the last run of the job from the endpoint host met it (kept by
 * `saveLogsRange`), or undefined when it met none, or none still held at its end.
 *
 * @example await learnedBlockLimit(db, 1, 'nightly', 'rpc.ankr.com') // → 2500
 */
export async function learnedBlockLimit(db: Kysely<Database>, chainId: number, job: string, endpointHost: string): Promise<number | undefined> {
  const row = await db
    .selectFrom('logs_ranges')
    .select('block_limit')
    .where('chain_id', '=', String(chainId))
    .where('job', '=', job)
    .where('endpoint_host', '=', endpointHost)
    .executeTakeFirst();
  return row?.block_limit ?? undefined;
}

/**
 * Keeps the range a run learned for the job and endpoint host, in place of the one before, with the block limit it
 * met (a run that met none, or found it gone, keeps none). The host only (`mainnet.infura.io`, `127.0.0.1:8545`):
 * never the URL, whose path may hold a key.
 *
 * @example await saveLogsRange(db, { chainId: 1, job: 'nightly', endpointHost: 'mainnet.infura.io', blocks: 1500, runId: '42' });
 */
export async function saveLogsRange(
  db: Kysely<Database>,
  learned: { chainId: number; job: string; endpointHost: string; blocks: number; blockLimit?: number | undefined; runId?: string | undefined },
): Promise<void> {
  for (const [what, n] of [
    ['range', learned.blocks],
    ['block limit', learned.blockLimit ?? 1],
  ] as const) {
    if (!Number.isSafeInteger(n) || n < 1 || n > 2_147_483_647) throw new RangeError(`a learned eth_getLogs ${what} must be a positive integer of blocks, got ${n}`);
  }
  const kept = { blocks: learned.blocks, block_limit: learned.blockLimit ?? null, run_id: learned.runId ?? null };
  await db
    .insertInto('logs_ranges')
    .values({ chain_id: learned.chainId, job: learned.job, endpoint_host: learned.endpointHost, ...kept })
    .onConflict((oc) => oc.columns(['chain_id', 'job', 'endpoint_host']).doUpdateSet({ ...kept, updated_at: sql<Date>`now()` }))
    .execute();
}
