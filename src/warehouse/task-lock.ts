import type pg from 'pg';

// The job's key is the one `run` takes exclusively (job-lock.ts): a worker's chunk takes it shared, so a
// `run` of the job and its workers never read at once, while any number of workers do.
const TAKE_JOB = `SELECT pg_try_advisory_lock_shared(hashtextextended('erc20-etl job ' || $1, 0)) AS ok`;
const TAKE_CHUNK = `SELECT pg_try_advisory_lock(hashtextextended('erc20-etl chunk ' || $1, 0)) AS ok`;
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
export async function tryTaskLock(pool: pg.Pool, job: string, chunkId: string): Promise<TaskLock | undefined> {
  const client = await pool.connect();
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
    const jobLock = await client.query<{ ok: boolean }>(TAKE_JOB, [job]);
    const chunkLock = jobLock.rows[0]?.ok ? await client.query<{ ok: boolean }>(TAKE_CHUNK, [chunkId]) : undefined;
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
