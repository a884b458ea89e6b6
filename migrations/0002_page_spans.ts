import { sql, type Kysely } from 'kysely';

/**
 * Cheaper loads and re-runs. A chunk whose blocks held no transfer of its contract when it started is
 * `fresh`: its pages COPY straight into token_transfers. Reconciliation no longer keeps every key a range
 * saw: each page checks the blocks it alone covers at once (rows there that the page lacks go to
 * export_missing), and only the keys of the blocks a page shares with its neighbour go to export_seen,
 * now with their block number.
 *
 * Ranges left open by an older version hold every key they saw: each of their blocks with a seen key is
 * checked as a shared block, and rows in blocks their committed pages covered without a seen key are
 * recorded as missing here, so they reconcile exactly as before.
 */
export async function up(db: Kysely<unknown>): Promise<void> {
  await sql`ALTER TABLE export_chunks ADD COLUMN fresh boolean`.execute(db);

  await sql`ALTER TABLE export_seen ADD COLUMN block_number bigint`.execute(db);
  await sql`
    UPDATE export_seen s SET block_number = t.block_number
    FROM token_transfers t
    WHERE t.transaction_hash = s.transaction_hash AND t.log_index = s.log_index`.execute(db);
  // a key whose row is gone already (moved by another job's reconciliation) has nothing left to check
  await sql`DELETE FROM export_seen WHERE block_number IS NULL`.execute(db);
  await sql`ALTER TABLE export_seen ALTER COLUMN block_number SET NOT NULL`.execute(db);

  await sql`
    CREATE TABLE export_missing (
      range_id         bigint  NOT NULL REFERENCES export_ranges (id) ON DELETE CASCADE,
      transaction_hash text    NOT NULL,
      log_index        integer NOT NULL,
      block_number     bigint  NOT NULL,
      PRIMARY KEY (range_id, transaction_hash, log_index)
    )`.execute(db);

  // committed whole by an older version's pages: a done chunk entirely, an unfinished one above its lowest
  // committed block (that block may go on in the next page)
  await sql`
    INSERT INTO export_missing (range_id, transaction_hash, log_index, block_number)
    SELECT r.id, t.transaction_hash, t.log_index, t.block_number
    FROM export_ranges r
    JOIN export_chunks c ON c.range_id = r.id
    JOIN token_transfers t ON t.contract_address = r.contract_address
      AND t.block_number BETWEEN CASE WHEN c.done THEN c.from_block ELSE c.resume_to_block + 1 END AND c.to_block
    WHERE r.status = 'open' AND (c.done OR c.resume_to_block IS NOT NULL)
      AND NOT EXISTS (SELECT 1 FROM export_seen s WHERE s.range_id = r.id AND s.block_number = t.block_number)
    ON CONFLICT DO NOTHING`.execute(db);
}

export async function down(db: Kysely<unknown>): Promise<void> {
  await sql`DROP TABLE IF EXISTS export_missing`.execute(db);
  await sql`ALTER TABLE export_seen DROP COLUMN IF EXISTS block_number`.execute(db);
  await sql`ALTER TABLE export_chunks DROP COLUMN IF EXISTS fresh`.execute(db);
}
