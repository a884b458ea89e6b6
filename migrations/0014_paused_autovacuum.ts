import { sql, type Kysely } from 'kysely';

/**
 * Autovacuum a first load paused on a table while its lookup indexes (0013) are dropped (`autovacuum_enabled = false`,
 * set in the same transaction as the drop, and only where the table had no setting of its own): one row per table,
 * written with the setting and deleted in the transaction that resets it, once the indexes are built again. A load
 * that was killed leaves it for the next run, a queued task or `migrate`, as it leaves the indexes. A table of its
 * own, not a column of deferred_indexes: code older than this migration deletes those rows as it builds the indexes,
 * and would leave the pause behind with no trace of it.
 */
export async function up(db: Kysely<unknown>): Promise<void> {
  await sql`
    CREATE TABLE IF NOT EXISTS paused_autovacuum (
      table_name text PRIMARY KEY,
      run_id bigint,
      paused_at timestamptz NOT NULL DEFAULT now()
    )`.execute(db);
}

export async function down(db: Kysely<unknown>): Promise<void> {
  // a pause still recorded is resumed first: without the table, nothing would tell it from a setting of the user's
  await sql`
    DO $$ BEGIN
      IF to_regclass('paused_autovacuum') IS NOT NULL THEN
        IF EXISTS (SELECT 1 FROM paused_autovacuum WHERE table_name = 'token_transfers') THEN
          ALTER TABLE token_transfers RESET (autovacuum_enabled);
        END IF;
      END IF;
    END $$`.execute(db);
  await sql`DROP TABLE IF EXISTS paused_autovacuum`.execute(db);
}
