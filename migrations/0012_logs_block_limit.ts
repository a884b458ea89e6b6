import { sql, type Kysely } from 'kysely';

/**
 * A block limit a provider does not state (Ankr's "block range is too wide"), as a node source's run met it, kept with
 * the range it learned for the job and endpoint host: `block_limit`, the least span refused as too wide (above the
 * true limit, which no refusal states), and `block_limit_answers`, the answers since it was met or last asked again.
 * The next run keeps every call under it from its first call, instead of growing past it and being refused until it
 * learns it again, and asks it again once 100 answers have passed, counted across runs; a run that finds it gone
 * keeps none. Rows of runs before this migration have none.
 */
export async function up(db: Kysely<unknown>): Promise<void> {
  await sql`ALTER TABLE logs_ranges ADD COLUMN IF NOT EXISTS block_limit integer CHECK (block_limit > 0)`.execute(db);
  await sql`ALTER TABLE logs_ranges ADD COLUMN IF NOT EXISTS block_limit_answers integer NOT NULL DEFAULT 0 CHECK (block_limit_answers >= 0)`.execute(db);
}

export async function down(db: Kysely<unknown>): Promise<void> {
  await sql`ALTER TABLE logs_ranges DROP COLUMN IF EXISTS block_limit_answers`.execute(db);
  await sql`ALTER TABLE logs_ranges DROP COLUMN IF EXISTS block_limit`.execute(db);
}
