import { sql, type Kysely } from 'kysely';
import type { Database } from './schema.ts';

/** A block limit the provider does not state, as a run kept it: the least span refused as too wide, and the answers since it was met or last asked again. */
export interface KeptBlockLimit {
  blocks: number;
  answers: number;
}

/**
 * What a node source learned for a job of a chain from an endpoint host, as the job's last run from there kept it:
 * the `eth_getLogs` range (blocks per call) that worked, and a block limit the provider does not state; each
 * undefined when none is kept.
 *
 * @example await learnedLogsStart(db, 1, 'nightly', 'rpc.ankr.com') // → { blocks: 281, blockLimit: { blocks: 312, answers: 40 } }
 */
export async function learnedLogsStart(
  db: Kysely<Database>,
  chainId: number,
  job: string,
  endpointHost: string,
): Promise<{ blocks: number | undefined; blockLimit: KeptBlockLimit | undefined }> {
  const row = await db
    .selectFrom('logs_ranges')
    .select(['blocks', 'block_limit', 'block_limit_answers'])
    .where('chain_id', '=', String(chainId))
    .where('job', '=', job)
    .where('endpoint_host', '=', endpointHost)
    .executeTakeFirst();
  const limit = row?.block_limit;
  return { blocks: row?.blocks, blockLimit: limit === null || limit === undefined ? undefined : { blocks: limit, answers: row!.block_limit_answers } };
}

/**
 * Keeps the range a run learned for the job and endpoint host, in place of the one before, with what became of a block
 * limit: one that holds (kept, with its answers), `gone` (a call answered over it: none is kept), or undefined (the run
 * knew of none, as a task started before another stored one: the one stored stays). The host only
 * (`mainnet.infura.io`, `127.0.0.1:8545`): never the URL, whose path may hold a key.
 *
 * @example await saveLogsRange(db, { chainId: 1, job: 'nightly', endpointHost: 'mainnet.infura.io', blocks: 1500, runId: '42' });
 */
export async function saveLogsRange(
  db: Kysely<Database>,
  learned: { chainId: number; job: string; endpointHost: string; blocks: number; blockLimit?: KeptBlockLimit | 'gone' | undefined; runId?: string | undefined },
): Promise<void> {
  const limit = typeof learned.blockLimit === 'object' ? learned.blockLimit : undefined;
  for (const [what, n, least] of [
    ['range', learned.blocks, 1],
    ['block limit', limit?.blocks ?? 1, 1],
    ["block limit's answers", limit?.answers ?? 0, 0],
  ] as const) {
    if (!Number.isSafeInteger(n) || n < least || n > 2_147_483_647) throw new RangeError(`a learned eth_getLogs ${what} must be an integer from ${least} to 2147483647, got ${n}`);
  }
  const kept = {
    blocks: learned.blocks,
    run_id: learned.runId ?? null,
    ...(learned.blockLimit !== undefined && { block_limit: limit?.blocks ?? null, block_limit_answers: limit?.answers ?? 0 }),
  };
  await db
    .insertInto('logs_ranges')
    .values({ chain_id: learned.chainId, job: learned.job, endpoint_host: learned.endpointHost, ...kept })
    .onConflict((oc) => oc.columns(['chain_id', 'job', 'endpoint_host']).doUpdateSet({ ...kept, updated_at: sql<Date>`now()` }))
    .execute();
}
