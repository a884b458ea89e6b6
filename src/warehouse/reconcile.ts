import { sql, type Kysely } from 'kysely';
import type { Database } from './schema.ts';
import type { RangeState } from './ranges.ts';
import { mergeSpans, type Span } from '../common/spans.ts';

export interface ReconcileResult {
  removed: number;
  rows: number;
}

/**
 * Closes finished ranges in one transaction: rows of each range's contract and blocks that the API no
 * longer returned move to token_transfers_removed with the run that removed them (never a delete without a
 * copy). Those are the rows its pages found missing from the blocks each completed (export_missing); a
 * row that has moved to another block since it was found missing stays. A coverage row records the range, and its
 * page records are dropped. Called only when every chunk of every range of the run is done, so nothing
 * moves after a failure.
 */
export async function reconcileRanges(
  db: Kysely<Database>,
  ranges: readonly RangeState[],
  runId: string,
  /** Rows of these ranges may have moved to other blocks (the run updated rows, or an earlier run read some). */
  rowsMoved = true,
): Promise<Map<string, ReconcileResult>> {
  return db.transaction().execute(async (trx) => {
    const results = new Map<string, ReconcileResult>();
    const claimed: RangeState[] = [];
    const removedOf = new Map<string, number>();
    for (const range of ranges) {
      // claim the range first: a range another run already closed is never reconciled twice
      const claim = await trx
        .updateTable('export_ranges')
        .set({ status: 'complete', completed_at: sql`now()` })
        .where('id', '=', range.id)
        .where('status', '=', 'open')
        .executeTakeFirst();
      if (Number(claim.numUpdatedRows) === 0) continue;
      claimed.push(range);
      // a first load's range found nothing missing: no statement to plan (with the joins below it costs tens of ms)
      const missing = await trx.selectFrom('export_missing').select(sql<number>`1`.as('one')).where('range_id', '=', range.id).limit(1).executeTakeFirst();
      removedOf.set(range.id, missing ? await removeMissing(trx, range, runId) : 0);
    }
    const counts = await countRows(trx, claimed);
    for (const [i, range] of claimed.entries()) results.set(range.id, { removed: removedOf.get(range.id) ?? 0, rows: counts[i] ?? 0 });
    if (claimed.length) {
      await trx
        .insertInto('export_coverage')
        .values(
          claimed.map((r, i) => ({
            chain_id: r.chainId,
            job: r.job,
            contract_address: r.contract,
            from_block: r.fromBlock,
            to_block: r.toBlock,
            row_count: counts[i] ?? 0,
            run_id: runId,
          })),
        )
        .execute();
    }
    const ids = claimed.map((r) => r.id);
    if (ids.length) {
      await trx.deleteFrom('export_missing').where('range_id', 'in', ids).execute();
      await trx.deleteFrom('export_chunks').where('range_id', 'in', ids).execute();
    }
    // once per block, however many contracts' ranges cover it; a header's state can only change where a row
    // left its block (removed, or moved by an update), or where one came back to a header marked orphaned
    const removedAny = [...results.values()].some((r) => r.removed > 0);
    for (const chainId of new Set(claimed.map((s) => s.chainId))) {
      for (const span of mergeSpans(claimed.filter((s) => s.chainId === chainId))) {
        if (rowsMoved || removedAny || (await hasOrphanedHeader(trx, chainId, span))) await markCanonical(trx, chainId, span);
      }
    }
    return results;
  });
}

/** Ranges counted by one statement: each adds a condition and an aggregate to it. */
const COUNTED_TOGETHER = 64;

/**
 * The rows token_transfers holds in each range (its chain, contract and blocks), in the ranges' order: one pass
 * over the table for up to `COUNTED_TOGETHER` ranges, not one per range. A first load's ranges cover the whole
 * table between them, so each count alone was a scan of all of it (three contracts, 1,000,000 rows: about 0.5 s
 * apiece); a few ranges of a large table are still found through the (contract, block) index.
 */
async function countRows(trx: Kysely<Database>, ranges: readonly RangeState[]): Promise<number[]> {
  const counts: number[] = [];
  for (let at = 0; at < ranges.length; at += COUNTED_TOGETHER) {
    const some = ranges.slice(at, at + COUNTED_TOGETHER);
    const inRange = (r: RangeState) =>
      sql`(chain_id = ${r.chainId} AND contract_address = ${r.contract} AND block_number BETWEEN ${r.fromBlock} AND ${r.toBlock})`;
    const aggregates = some.map((r) => sql`count(*) FILTER (WHERE ${inRange(r)})`);
    const { rows } = await sql<{ counts: number[] }>`
      SELECT ARRAY[${sql.join(aggregates)}]::int[] AS counts FROM token_transfers WHERE ${sql.join(some.map(inRange), sql` OR `)}`.execute(trx);
    const found = rows[0]?.counts ?? [];
    for (const [i] of some.entries()) counts.push(found[i] ?? 0);
  }
  return counts;
}

/** Moves the rows a range's pages found missing (export_missing) to token_transfers_removed; resolves to how many. */
async function removeMissing(trx: Kysely<Database>, range: RangeState, runId: string): Promise<number> {
  // export_missing grew since the planner last sampled it: with stale statistics it may think it empty
  // and scan it once per row (seconds for tens of thousands of keys). Joins by hash are linear whatever
  // the statistics say.
  await sql`SET LOCAL enable_nestloop = off; SET LOCAL jit = off`.execute(trx);
  const moved = await sql<{ removed: number }>`
    WITH doomed AS (
      SELECT m.transaction_hash, m.log_index, m.block_number FROM export_missing m WHERE m.range_id = ${range.id}
    ), gone AS (
      DELETE FROM token_transfers t
      USING doomed d
      WHERE t.chain_id = ${range.chainId} AND t.transaction_hash = d.transaction_hash AND t.log_index = d.log_index AND t.block_number = d.block_number
        AND t.contract_address = ${range.contract}
        AND t.block_number BETWEEN ${range.fromBlock} AND ${range.toBlock}
      RETURNING t.*
    ), kept AS (
      INSERT INTO token_transfers_removed (
        chain_id, transaction_hash, log_index, contract_address, from_address, to_address, value, block_number,
        block_hash, block_timestamp, transaction_index, inserted_by_run, updated_by_run, removed_by_run)
      SELECT chain_id, transaction_hash, log_index, contract_address, from_address, to_address, value, block_number,
        block_hash, block_timestamp, transaction_index, inserted_by_run, updated_by_run, ${runId}
      FROM gone
      RETURNING 1
    )
    SELECT count(*)::int AS removed FROM kept`.execute(trx);
  await sql`SET LOCAL enable_nestloop = on`.execute(trx);
  return moved.rows[0]?.removed ?? 0;
}

async function hasOrphanedHeader(trx: Kysely<Database>, chainId: number, span: Span): Promise<boolean> {
  const found = await trx
    .selectFrom('block_headers')
    .select('hash')
    .where('chain_id', '=', String(chainId))
    .where('number', '>=', String(span.fromBlock))
    .where('number', '<=', String(span.toBlock))
    .where('canonical', '=', false)
    .limit(1)
    .executeTakeFirst();
  return found !== undefined;
}

/**
 * Headers stay (analytics may want them) but say whether they are on the chain the warehouse now holds (of their chain id):
 * in a reconciled range, a header that no transfer points at any more belongs to an orphaned block (a
 * header is only ever fetched because transfers pointed at it); one that transfers point at is canonical.
 */
async function markCanonical(trx: Kysely<Database>, chainId: number, range: Span): Promise<void> {
  await sql`
    UPDATE block_headers h SET canonical = EXISTS (SELECT 1 FROM token_transfers t WHERE t.chain_id = h.chain_id AND t.block_hash = h.hash)
    WHERE h.chain_id = ${chainId} AND h.number BETWEEN ${range.fromBlock} AND ${range.toBlock}
      AND h.canonical IS DISTINCT FROM EXISTS (SELECT 1 FROM token_transfers t WHERE t.chain_id = h.chain_id AND t.block_hash = h.hash)`.execute(trx);
}
