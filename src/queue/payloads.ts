import { z } from 'zod';
import { FatalError } from '../common/errors.ts';
import { jobSchema, type JobConfig } from '../config/job-schema.ts';

/** The graphile-worker task names this tool adds and runs: chain 1's, and the start of every chain's ({@link chainTasks}). */
export const TASKS = { chunk: 'erc20_etl_chunk', enqueue: 'erc20_etl_enqueue' } as const;

/** What every task name of this tool starts with. */
export const TASK_PREFIX = 'erc20_etl_';

/**
 * The task names of a chain's jobs: chain 1's as they always were, another chain's with its id. A worker registers
 * those of its endpoint's chain only, so graphile-worker never hands it another chain's task.
 *
 * @example chainTasks(8453) // → { chunk: 'erc20_etl_chunk_8453', enqueue: 'erc20_etl_enqueue_8453' }
 */
export function chainTasks(chain: number): { chunk: string; enqueue: string } {
  return chain === 1 ? { ...TASKS } : { chunk: `${TASKS.chunk}_${chain}`, enqueue: `${TASKS.enqueue}_${chain}` };
}

/**
 * The chain a task name of this tool is for (`chainTasks` backwards), or undefined for a name it never gives.
 *
 * @example chainOfTask('erc20_etl_chunk_8453') // → 8453
 * chainOfTask('erc20_etl_enqueue') // → 1
 */
export function chainOfTask(name: string): number | undefined {
  const m = /^erc20_etl_(?:chunk|enqueue)(?:_(\d+))?$/.exec(name);
  if (!m) return undefined;
  return m[1] === undefined ? 1 : Number(m[1]);
}

const id = z.string().regex(/^\d+$/, { error: 'expected an id of digits' });

/**
 * A task's job as it was queued: a validated job, so a node job holds the `pageSize` every job is given (a job file
 * of a node job may not state one). Read again without it.
 */
const queuedJob = z.preprocess((value) => {
  if (value === null || typeof value !== 'object' || (value as { source?: unknown }).source !== 'node') return value;
  const { pageSize: _given, ...job } = value as Record<string, unknown>;
  return job;
}, jobSchema);

/**
 * One chunk of a range to read. The job travels whole (it holds no secret); the chain API's URL never
 * does: each worker reads its own `CHAIN_API_URL`.
 */
export const chunkPayload = z.strictObject({ job: queuedJob, runId: id, rangeId: id, chunkId: id, head: z.number().int().nonnegative() });
export type ChunkPayload = { job: Readonly<JobConfig>; runId: string; rangeId: string; chunkId: string; head: number };

/**
 * A scheduled job to plan and enqueue (what `erc20-etl enqueue` does), fired by the crontab; graphile-worker
 * adds `_cron` (the entry's time).
 */
export const enqueuePayload = z.strictObject({ job: queuedJob, _cron: z.unknown().optional() });

/** A payload this version cannot read: retrying cannot help. */
export class TaskPayloadError extends FatalError {}

/**
 * Reads a task's payload, or says what is wrong with it.
 *
 * @example parsePayload(chunkPayload, helpers.job.payload, 'erc20_etl_chunk') // → { job, runId, rangeId, chunkId, head }
 */
export function parsePayload<T extends z.ZodType>(schema: T, payload: unknown, task: string): z.output<T> {
  const parsed = schema.safeParse(payload);
  if (parsed.success) return parsed.data;
  const problems = parsed.error.issues.map((i) => `${i.path.join('.') || '(payload)'}: ${i.message}`).join('; ');
  throw new TaskPayloadError(
    `A ${task} task has a payload this version cannot read (${problems}). It was probably queued by another version of erc20-etl: run \`erc20-etl enqueue\` for its job again.`,
  );
}

/** The job key of a chunk's task: one task per chunk, however often its job is enqueued. */
export const chunkJobKey = (chunkId: string): string => `erc20-etl:chunk:${chunkId}`;
