import type pg from 'pg';

/**
 * A PostgreSQL advisory lock keyed by the job's name, held on one connection for the whole run: a
 * second run of the same job finds it taken and stops at once. The lock goes with the connection, so a
 * killed run never leaves it behind.
 *
 * @example const lock = await tryJobLock(pool, 'nightly'); if (!lock) process.exitCode = 75;
 */
export async function tryJobLock(pool: pg.Pool, job: string): Promise<{ release(): Promise<void> } | undefined> {
  const client = await pool.connect();
  try {
    const { rows } = await client.query<{ ok: boolean }>(
      `SELECT pg_try_advisory_lock(hashtextextended('erc20-etl job ' || $1, 0)) AS ok`,
      [job],
    );
    if (!rows[0]?.ok) {
      client.release();
      return undefined;
    }
  } catch (err) {
    client.release();
    throw err;
  }
  let released = false;
  return {
    async release() {
      if (released) return;
      released = true;
      try {
        await client.query(`SELECT pg_advisory_unlock(hashtextextended('erc20-etl job ' || $1, 0))`, [job]);
      } finally {
        client.release();
      }
    },
  };
}
