import { sql, type Kysely } from 'kysely';
import type { Database } from './schema.ts';
import type { RangeState } from './ranges.ts';
import { mergeSpans, type Span } from '../common/spans.ts';
import { committedAttempt, commitTrace, tracedTransaction, type CommitTrace } from './commit-trace.ts';
import { EtlError } from '../common/errors.ts';

/**
 * What `reconcileRanges` throws, its transaction rolled back, when told that token_transfers' lookup indexes are still
 * being built and it comes to a statement that needs them: the close is tried again once they stand.
 */
export class LookupIndexesPending extends EtlError {
  constructor() {
    super("closing these ranges moves rows or marks headers, which needs token_transfers' lookup indexes: close them once the indexes are built");
  }
}

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
 * moves after a failure. Retried with its `trace` after a lost answer whose COMMIT went through, it resolves to what
 * that attempt closed.
 */
export async function reconcileRanges(
  db: Kysely<Database>,
  ranges: readonly RangeState[],
  runId: string,
  /** Rows of these ranges may have moved to other blocks (the run updated rows, or an earlier run read some). */
  rowsMoved = true,
  /**
   * The attempts of this close so far (made once, before its retries): when one of them committed while its answer was
   * lost, this call resolves to what that one closed, and closes nothing more. A range another call closed (another
   * task of the run too) is not this call's.
   */
  trace: CommitTrace = commitTrace(),
  /**
   * The lookup indexes are being built meanwhile (a first load builds them while its ranges close): the close throws
   * `LookupIndexesPending` before its first write to token_transfers (rows that went missing move out) and before it
   * marks headers through `token_transfers_block_hash`. The builds' SHARE lock lets the counts read beside them, but a
   * write would wait for the builds (or they for it), and without the index each header marked would scan the table.
   */
  indexesPending = false,
): Promise<Map<string, ReconcileResult>> {
  const earlier = await committedAttempt(db, trace);
  if (earlier !== undefined) return closedBy(db, ranges, earlier);
  // rows that may have moved mark headers whatever the ranges hold: no transaction to roll back
  if (indexesPending && rowsMoved) throw new LookupIndexesPending();
  return tracedTransaction(db, trace, async (trx) => {
    const results = new Map<string, ReconcileResult>();
    const claimedSpans: (Span & { chainId: number })[] = [];
    for (const range of ranges) {
      // claim the range first: a range another run already closed is never reconciled twice
      const claimed = await trx
        .updateTable('export_ranges')
        .set({ status: 'complete', completed_at: sql`now()` })
        .where('id', '=', range.id)
        .where('status', '=', 'open')
        .executeTakeFirst();
      if (Number(claimed.numUpdatedRows) === 0) continue;
      claimedSpans.push(range);
      // a first load's range found nothing missing: no statement to plan (with the joins below it costs tens of ms)
      const missing = await trx.selectFrom('export_missing').select(sql<number>`1`.as('one')).where('range_id', '=', range.id).limit(1).executeTakeFirst();
      if (missing && indexesPending) throw new LookupIndexesPending();
      const removed = missing ? await removeMissing(trx, range, runId) : 0;
      const count = await sql<{ rows: number }>`
        SELECT count(*)::int AS rows FROM token_transfers
        WHERE chain_id = ${range.chainId} AND contract_address = ${range.contract} AND block_number BETWEEN ${range.fromBlock} AND ${range.toBlock}`.execute(trx);
      const rows = count.rows[0]?.rows ?? 0;
      await trx
        .insertInto('export_coverage')
        .values({ chain_id: range.chainId, job: range.job, contract_address: range.contract, from_block: range.fromBlock, to_block: range.toBlock, row_count: rows, run_id: runId })
        .execute();
      await trx.deleteFrom('export_missing').where('range_id', '=', range.id).execute();
      await trx.deleteFrom('export_chunks').where('range_id', '=', range.id).execute();
      results.set(range.id, { removed, rows });
    }
    // once per block, however many contracts' ranges cover it; a header's state can only change where a row
    // left its block (removed, or moved by an update), or where one came back to a header marked orphaned
    const removedAny = [...results.values()].some((r) => r.removed > 0);
    for (const chainId of new Set(claimedSpans.map((s) => s.chainId))) {
      for (const span of mergeSpans(claimedSpans.filter((s) => s.chainId === chainId))) {
        if (!(rowsMoved || removedAny || (await hasOrphanedHeader(trx, chainId, span)))) continue;
        if (indexesPending) throw new LookupIndexesPending();
        await markCanonical(trx, chainId, span);
      }
    }
    return results;
  });
}

/**
 * What the transaction `xid` (as `xmin` shows it) closed of `ranges`: each range's coverage row it wrote, with the rows
 * it moved to token_transfers_removed in the range's contract and blocks. A range it did not close is left out.
 */
async function closedBy(db: Kysely<Database>, ranges: readonly RangeState[], xid: string): Promise<Map<string, ReconcileResult>> {
  const results = new Map<string, ReconcileResult>();
  for (const range of ranges) {
    const { rows } = await sql<{ rows: string; removed: string }>`
      SELECT c.row_count::text AS rows,
        (SELECT count(*) FROM token_transfers_removed r
         WHERE r.xmin::text = ${xid} AND r.chain_id = ${range.chainId} AND r.contract_address = ${range.contract}
           AND r.block_number BETWEEN ${range.fromBlock} AND ${range.toBlock})::text AS removed
      FROM export_coverage c
      WHERE c.xmin::text = ${xid} AND c.chain_id = ${range.chainId} AND c.job = ${range.job} AND c.contract_address = ${range.contract}
        AND c.from_block = ${range.fromBlock} AND c.to_block = ${range.toBlock}`.execute(db);
    const closed = rows[0];
    if (closed) results.set(range.id, { rows: Number(closed.rows), removed: Number(closed.removed) });
  }
  return results;
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

/** Heights of a chain where transfers of two forks stand side by side: each block number with two canonical headers. */
export interface ForkedBlocks {
  /** How many heights. */
  blocks: number;
  first: number;
  last: number;
}

/**
 * The heights in `span` of `chainId` that hold two canonical headers (headers transfers point at), or undefined when
 * none does. A header is canonical while a transfer points at it, so two at one height mean the warehouse holds
 * transfers of two forks there: rows committed before a reorg deeper than the blocks a run reads again (`finality`),
 * beside rows another contract's chunk read after it. Asked of the blocks a run just closed, through the index on
 * (number, chain_id).
 *
 * @example await forkedBlocks(db, 10, { fromBlock: 18_000_000, toBlock: 18_002_000 }) // → { blocks: 163, first: 18000503, last: 18001096 }
 */
export async function forkedBlocks(db: Kysely<Database>, chainId: number, span: Span): Promise<ForkedBlocks | undefined> {
  const { rows } = await sql<{ blocks: number; first: string | null; last: string | null }>`
    SELECT count(*)::int AS blocks, min(number)::text AS first, max(number)::text AS last FROM (
      SELECT number FROM block_headers
      WHERE chain_id = ${chainId} AND number BETWEEN ${span.fromBlock} AND ${span.toBlock} AND canonical
      GROUP BY number HAVING count(*) > 1) AS forked`.execute(db);
  const row = rows[0];
  return row && row.blocks > 0 ? { blocks: row.blocks, first: Number(row.first), last: Number(row.last) } : undefined;
}

/** The contracts of `chainId` with transfers in `span`, in order: at most `limit`, and how many there are in all. */
export async function contractsWithTransfers(db: Kysely<Database>, chainId: number, span: Span, limit: number): Promise<{ contracts: string[]; total: number }> {
  const { rows } = await sql<{ contract: string }>`
    SELECT DISTINCT contract_address AS contract FROM token_transfers
    WHERE chain_id = ${chainId} AND block_number BETWEEN ${span.fromBlock} AND ${span.toBlock} ORDER BY 1`.execute(db);
  return { contracts: rows.slice(0, limit).map((r) => r.contract), total: rows.length };
}
