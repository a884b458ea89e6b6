import { sql, type Kysely } from 'kysely';

/**
 * Re-runs without page records. A block two pages share is now completed by the second page: the chunk's
 * checkpoint carries the keys the first page committed in its last block (`open_hashes`, `open_log_indexes`,
 * in the same update that moves the chunk on), so the second page knows every row of that block, and
 * rows there it does not hold are recorded as missing at once. No page writes per-row records any more,
 * and export_seen goes.
 *
 * Ranges left open by the previous version keep their meaning: an unfinished chunk's keys in its lowest
 * committed block become its open keys, and every other block with seen keys (both of its pages are
 * committed) has its unseen rows recorded as missing here.
 */
export async function up(db: Kysely<unknown>): Promise<void> {
  await sql`
    ALTER TABLE export_chunks
      ADD COLUMN open_hashes text[] NOT NULL DEFAULT '{}',
      ADD COLUMN open_log_indexes integer[] NOT NULL DEFAULT '{}'`.execute(db);

  await sql`
    UPDATE export_chunks c SET open_hashes = o.hashes, open_log_indexes = o.log_indexes
    FROM (
      SELECT c.id, array_agg(s.transaction_hash ORDER BY s.transaction_hash, s.log_index) AS hashes,
        array_agg(s.log_index ORDER BY s.transaction_hash, s.log_index) AS log_indexes
      FROM export_chunks c JOIN export_seen s ON s.range_id = c.range_id AND s.block_number = c.resume_to_block
      WHERE NOT c.done
      GROUP BY c.id
    ) o
    WHERE c.id = o.id`.execute(db);

  await sql`
    INSERT INTO export_missing (range_id, transaction_hash, log_index, block_number)
    SELECT r.id, t.transaction_hash, t.log_index, t.block_number
    FROM export_ranges r
    JOIN (SELECT DISTINCT range_id, block_number FROM export_seen) b ON b.range_id = r.id
    JOIN export_chunks c ON c.range_id = r.id AND b.block_number BETWEEN c.from_block AND c.to_block
    JOIN token_transfers t ON t.contract_address = r.contract_address AND t.block_number = b.block_number
    WHERE (c.done OR b.block_number <> c.resume_to_block)
      AND NOT EXISTS (
        SELECT 1 FROM export_seen s
        WHERE s.range_id = r.id AND s.transaction_hash = t.transaction_hash AND s.log_index = t.log_index)
    ON CONFLICT DO NOTHING`.execute(db);

  await sql`DROP TABLE export_seen`.execute(db);
}

export async function down(db: Kysely<unknown>): Promise<void> {
  await sql`
    CREATE TABLE export_seen (
      range_id         bigint  NOT NULL REFERENCES export_ranges (id) ON DELETE CASCADE,
      transaction_hash text    NOT NULL,
      log_index        integer NOT NULL,
      block_number     bigint  NOT NULL,
      PRIMARY KEY (range_id, transaction_hash, log_index)
    )`.execute(db);
  await sql`ALTER TABLE export_chunks DROP COLUMN open_hashes, DROP COLUMN open_log_indexes`.execute(db);
}
