import { sql, type Kysely } from 'kysely';
import type { Database } from './schema.ts';
import type { RangeState } from './ranges.ts';

export interface ReconcileResult {
  removed: number;
  rows: number;
}

/**
 * Closes finished ranges in one transaction: rows of each range's contract and blocks that the API no
 * longer returned (no key in export_seen) move to token_transfers_removed with the run that removed them
 * (never a delete without a copy); a coverage row records the range; its seen keys are dropped.
 * Called only when every chunk of every range of the run is done, so nothing moves after a failure.
 */
export async function reconcileRanges(
  db: Kysely<Database>,
  ranges: readonly RangeState[],
  runId: string,
): Promise<Map<string, ReconcileResult>> {
  return db.transaction().execute(async (trx) => {
    const results = new Map<string, ReconcileResult>();
    for (const range of ranges) {
      // claim the range first: a range another run already closed is never reconciled twice
      const claimed = await trx
        .updateTable('export_ranges')
        .set({ status: 'complete', completed_at: sql`now()` })
        .where('id', '=', range.id)
        .where('status', '=', 'open')
        .executeTakeFirst();
      if (Number(claimed.numUpdatedRows) === 0) continue;
      // export_seen grew by every row of the range since the planner last sampled it: with stale statistics
      // it may think the table empty and nest a scan of it per row (hours for a million rows). An anti-join
      // by hash is linear whatever the statistics say.
      await sql`SET LOCAL enable_nestloop = off; SET LOCAL jit = off`.execute(trx);
      const moved = await sql<{ removed: number }>`
        WITH gone AS (
          DELETE FROM token_transfers t
          WHERE t.contract_address = ${range.contract}
            AND t.block_number BETWEEN ${range.fromBlock} AND ${range.toBlock}
            AND NOT EXISTS (
              SELECT 1 FROM export_seen s
              WHERE s.range_id = ${range.id} AND s.transaction_hash = t.transaction_hash AND s.log_index = t.log_index)
          RETURNING t.*
        ), kept AS (
          INSERT INTO token_transfers_removed (
            transaction_hash, log_index, contract_address, from_address, to_address, value, block_number,
            block_hash, block_timestamp, transaction_index, inserted_by_run, updated_by_run, removed_by_run)
          SELECT transaction_hash, log_index, contract_address, from_address, to_address, value, block_number,
            block_hash, block_timestamp, transaction_index, inserted_by_run, updated_by_run, ${runId}
          FROM gone
          RETURNING 1
        )
        SELECT count(*)::int AS removed FROM kept`.execute(trx);
      await sql`SET LOCAL enable_nestloop = on`.execute(trx);
      await markCanonical(trx, range);
      const count = await sql<{ rows: number }>`
        SELECT count(*)::int AS rows FROM token_transfers
        WHERE contract_address = ${range.contract} AND block_number BETWEEN ${range.fromBlock} AND ${range.toBlock}`.execute(trx);
      const rows = count.rows[0]?.rows ?? 0;
      await trx
        .insertInto('export_coverage')
        .values({ job: range.job, contract_address: range.contract, from_block: range.fromBlock, to_block: range.toBlock, row_count: rows, run_id: runId })
        .execute();
      await trx.deleteFrom('export_seen').where('range_id', '=', range.id).execute();
      await trx.deleteFrom('export_chunks').where('range_id', '=', range.id).execute();
      results.set(range.id, { removed: moved.rows[0]?.removed ?? 0, rows });
    }
    return results;
  });
}

/**
 * Headers stay (analytics may want them) but say whether they are on the chain the warehouse now holds:
 * in a reconciled range, a header that no transfer points at any more belongs to an orphaned block (a
 * header is only ever fetched because transfers pointed at it); one that transfers point at is canonical.
 */
async function markCanonical(trx: Kysely<Database>, range: RangeState): Promise<void> {
  await sql`
    UPDATE block_headers h SET canonical = EXISTS (SELECT 1 FROM token_transfers t WHERE t.block_hash = h.hash)
    WHERE h.number BETWEEN ${range.fromBlock} AND ${range.toBlock}
      AND h.canonical IS DISTINCT FROM EXISTS (SELECT 1 FROM token_transfers t WHERE t.block_hash = h.hash)`.execute(trx);
}
