import { sql, type RawBuilder } from 'kysely';

/**
 * Every advisory lock erc20-etl takes, in one place. A named lock is keyed by the 64-bit hash of a text
 * (`hashtextextended(text, 0)`); the texts must never change, or a new version and an old one running side
 * by side would stop seeing each other's locks.
 */
export const lockKeys = {
  /** A job: `run` holds it exclusively for the whole run; workers' chunks and `enqueue` take it shared. */
  job: (name: string) => `erc20-etl job ${name}`,
  /** A chunk: the worker task that reads it holds it exclusively. */
  chunk: (chunkId: string) => `erc20-etl chunk ${chunkId}`,
  /** Enqueues of one job take turns under it. */
  enqueue: (name: string) => `erc20-etl enqueue ${name}`,
  /** Dropping token_transfers' lookup indexes for a first load, and building them again, take turns under it (migration 0013's down takes it by its text). */
  indexes: () => 'erc20-etl deferred indexes',
};

/** The lock `erc20-etl migrate` and the queue's install take turns under (a session lock). */
export const MIGRATE_LOCK = 0x65726332;

/** The lock id of the key text passed as a statement's `$1`, for pg's query text. */
export const LOCK_ID_OF_PARAM_1 = 'hashtextextended($1::text, 0)';

/** The lock id of a key text, inside kysely's sql. */
export function lockId(key: string): RawBuilder<string> {
  return sql<string>`hashtextextended(${key}::text, 0)`;
}
