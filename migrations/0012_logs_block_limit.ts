import { sql, type Kysely } from 'kysely';

/**
 * A block limit a provider does not state (Ankr's "block range is too wide"), as a node source's run met it, kept with
 * the range it learned for the job and endpoint host: the next run keeps every call below it from its first call,
 * instead of growing past it once and being refused. It is asked again as within a run (a call over it every 100
 * answers), and a run that finds it gone keeps none. Rows of runs before this migration have none.
 */
export async function up(db: Kysely<unknown>): Promise<void> {
  await sql`ALTER TABLE logs_ranges ADD COLUMN IF NOT EXISTS block_limit integer CHECK (block_limit > 0)`.execute(db);
}

export async function down(db: Kysely<unknown>): Promise<void> {
  await sql`ALTER TABLE logs_ranges DROP COLUMN IF EXISTS block_limit`.execute(db);
}
