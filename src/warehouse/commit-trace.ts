import { sql, type Kysely, type Transaction } from 'kysely';
import type { Database } from './schema.ts';

/**
 * The transaction ids of one piece of work's attempts. When a connection breaks as a transaction commits, the client
 * cannot tell whether it did; PostgreSQL can (`txid_status`), given the id. Work that must not be done twice keeps a
 * trace across its retries: each attempt's transaction adds its id, and a retry first asks whether an earlier one
 * committed, and if so, reads what it did (the rows it wrote carry its id as their `xmin`).
 */
export interface CommitTrace {
  readonly xids: string[];
}

/** A trace with no attempt yet. Make it before the retries, once per piece of work. */
export function commitTrace(): CommitTrace {
  return { xids: [] };
}

/**
 * Runs `work` in one transaction whose id `trace` keeps first: committed when it resolves, rolled back when it throws.
 *
 * @example await tracedTransaction(db, trace, (trx) => trx.insertInto('export_coverage').values(row).execute());
 */
export function tracedTransaction<T>(db: Kysely<Database>, trace: CommitTrace, work: (trx: Transaction<Database>) => Promise<T>): Promise<T> {
  return db.transaction().execute(async (trx) => {
    const { rows } = await sql<{ xid: string }>`SELECT txid_current()::text AS xid`.execute(trx);
    trace.xids.push(rows[0]!.xid);
    return work(trx);
  });
}

/**
 * The earlier attempt of `trace` that committed, as its rows' `xmin` shows it (the id's low 32 bits, in decimal), or
 * undefined when none did (each rolled back, or never got an id). Asks PostgreSQL only when an attempt got an id.
 *
 * @example const earlier = await committedAttempt(db, trace); // → '7812344' once a lost COMMIT answer is known to have committed
 */
export async function committedAttempt(db: Kysely<Database>, trace: CommitTrace): Promise<string | undefined> {
  if (!trace.xids.length) return undefined;
  const { rows } = await sql<{ xid: string; status: string | null }>`
    SELECT x AS xid, txid_status(x::bigint) AS status FROM unnest(${trace.xids}::text[]) AS x`.execute(db);
  const committed = rows.find((r) => r.status === 'committed');
  return committed === undefined ? undefined : String(BigInt(committed.xid) & 0xffff_ffffn);
}
