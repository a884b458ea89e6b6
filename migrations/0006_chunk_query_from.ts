import { sql, type Kysely } from 'kysely';

/**
 * A running chunk may give its lower, unread blocks to a new chunk, so that the last chunks of a run keep
 * every connection busy. The chunk's own blocks then start higher than the query its page key belongs to:
 * `query_from_block` keeps the query's first block (null: the chunk's `from_block`), so a resumed chunk
 * goes on with the same query and drops the rows below its blocks.
 */
export async function up(db: Kysely<unknown>): Promise<void> {
  await sql`ALTER TABLE export_chunks ADD COLUMN query_from_block bigint`.execute(db);
}

export async function down(db: Kysely<unknown>): Promise<void> {
  await sql`ALTER TABLE export_chunks DROP COLUMN query_from_block`.execute(db);
}
