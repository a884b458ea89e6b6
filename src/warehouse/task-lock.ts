import type { Warehouse } from './db.ts';
import { LOCK_ID_OF_PARAM_1, lockKeys } from './lock-keys.ts';

// The job's key is the one `run` takes exclusively (job-lock.ts): a worker's chunk takes it shared, so a
// `run` of the job and its workers never read at once, while any number of workers do.
const TAKE_JOB = `SELECT pg_try_advisory_lock_shared(${LOCK_ID_OF_PARAM_1}) AS ok`;
const TAKE_CHUNK = `SELECT pg_try_advisory_lock(${LOCK_ID_OF_PARAM_1}) AS ok`;
const UNLOCK_ALL = 'SELECT pg_advisory_unlock_all()';

export interface TaskLock {
  /** Aborted if the lock's connection drops: the chunk must stop, since another worker may take it. */
  readonly signal: AbortSignal;
  release(): Promise<void>;
}

/**
 * Holds a chunk for one worker task, on one connection for the task's length: the chunk exclusively (a
 * task handed to a second worker while the first still reads it waits its turn) and its job shared
 * (`erc20-etl run` of the same job waits for the workers, and they for it). Resolves to undefined when
 * either is taken. The locks go with the connection, so a worker that dies leaves none behind.
 */
export async function tryTaskLock(warehouse: Warehouse, job: string, chunkId: string): Promise<TaskLock | undefined> {
  const client = await warehouse.pool.connect();
  const lost = new AbortController();
  const onError = (err: Error) => lost.abort(err);
  client.on('error', onError);
  const free = async (broken?: Error) => {
    client.removeListener('error', onError);
    if (!broken) {
      try {
        await client.query(UNLOCK_ALL);
      } catch (err) {
        broken = err as Error;
      }
    }
    client.release(broken ?? lost.signal.aborted);
  };
  try {
    const jobLock = await client.query<{ ok: boolean }>(TAKE_JOB, [lockKeys.job(job)]);
    const chunkLock = jobLock.rows[0]?.ok ? await client.query<{ ok: boolean }>(TAKE_CHUNK, [lockKeys.chunk(chunkId)]) : undefined;
    if (!chunkLock?.rows[0]?.ok) {
      await free();
      return undefined;
    }
  } catch (err) {
    await free(err as Error);
    throw err;
  }
  let released: Promise<void> | undefined;
  return { signal: lost.signal, release: () => (released ??= free(lost.signal.aborted ? (lost.signal.reason as Error) : undefined)) };
}
