import { sql, type Insertable, type Kysely } from 'kysely';
import { commitTrace, tracedTransaction } from './commit-trace.ts';
import type { Database, ExportRunSkippedLogsTable } from './schema.ts';

/** Logs with the Transfer topic that are not ERC-20 transfers: ERC-721 (4 topics), and other shapes. */
export interface SkippedCounts {
  erc721: number;
  other: number;
}

/**
 * Adds what a run (or one of its queued tasks) skipped to the run's ledger, per contract, in one statement:
 * tasks of one run end on many machines, so each adds its share. Contracts with nothing skipped write nothing. `trace`
 * keeps the transaction's id, so a caller whose write failed can ask whether it committed (`committedAttempt`).
 *
 * @example await recordSkippedLogs(db, runId, source.skippedLogs()); // Map { '0xabc…' => { erc721: 12, other: 0 } }
 */
export async function recordSkippedLogs(db: Kysely<Database>, runId: string, counts: ReadonlyMap<string, SkippedCounts>, trace = commitTrace()): Promise<void> {
  const rows: Insertable<ExportRunSkippedLogsTable>[] = [];
  for (const [contract, { erc721, other }] of counts) {
    if (!(erc721 > 0 || other > 0)) continue;
    if (!isCount(erc721) || !isCount(other)) throw new RangeError(`skipped-log counts must be integers ≥ 0, got ${erc721} and ${other} for ${contract.toLowerCase()}`);
    rows.push({ run_id: runId, contract_address: contract.toLowerCase(), erc721: String(erc721), other: String(other) });
  }
  if (!rows.length) return;
  await tracedTransaction(db, trace, (trx) =>
    trx
      .insertInto('export_run_skipped_logs')
      .values(rows)
      .onConflict((oc) =>
        oc.columns(['run_id', 'contract_address']).doUpdateSet({
          erc721: sql<string>`export_run_skipped_logs.erc721 + excluded.erc721`,
          other: sql<string>`export_run_skipped_logs.other + excluded.other`,
        }),
      )
      .execute(),
  );
}

/** A count the ledger takes: an integer ≥ 0 that `String()` writes in digits (below 10^21, where it turns to `1e+21`). */
function isCount(n: number): boolean {
  return Number.isInteger(n) && n >= 0 && n < 1e21;
}

/**
 * What one run skipped, per contract (only contracts with something skipped).
 *
 * @example await skippedLogsOfRun(db, '7') // → Map { '0xabc…' => { erc721: 12, other: 1 } }
 */
export async function skippedLogsOfRun(db: Kysely<Database>, runId: string): Promise<Map<string, SkippedCounts>> {
  const rows = await db.selectFrom('export_run_skipped_logs').select(['contract_address', 'erc721', 'other']).where('run_id', '=', runId).execute();
  return new Map(rows.map((r) => [r.contract_address, { erc721: Number(r.erc721), other: Number(r.other) }]));
}
