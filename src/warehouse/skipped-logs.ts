import { sql, type Kysely } from 'kysely';
import type { Database } from './schema.ts';

/** Logs with the Transfer topic that are not ERC-20 transfers: ERC-721 (4 topics), and other shapes. */
export interface SkippedCounts {
  erc721: number;
  other: number;
}

/**
 * Adds what a run (or one of its queued tasks) skipped to the run's ledger, per contract, in one statement:
 * tasks of one run end on many machines, so each adds its share. Contracts with nothing skipped write nothing.
 *
 * @example await recordSkippedLogs(db, runId, source.skippedLogs()); // Map { '0xabc…' => { erc721: 12, other: 0 } }
 */
export async function recordSkippedLogs(db: Kysely<Database>, runId: string, counts: ReadonlyMap<string, SkippedCounts>): Promise<void> {
  const rows = [...counts]
    .filter(([, c]) => c.erc721 > 0 || c.other > 0)
    .map(([contract, c]) => ({ run_id: runId, contract_address: contract.toLowerCase(), erc721: String(c.erc721), other: String(c.other) }));
  if (!rows.length) return;
  for (const r of rows) {
    if (!/^\d+$/.test(r.erc721) || !/^\d+$/.test(r.other))
      throw new RangeError(`skipped-log counts must be integers ≥ 0, got ${r.erc721} and ${r.other} for ${r.contract_address}`);
  }
  await db
    .insertInto('export_run_skipped_logs')
    .values(rows)
    .onConflict((oc) =>
      oc.columns(['run_id', 'contract_address']).doUpdateSet({
        erc721: sql<string>`export_run_skipped_logs.erc721 + excluded.erc721`,
        other: sql<string>`export_run_skipped_logs.other + excluded.other`,
      }),
    )
    .execute();
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
