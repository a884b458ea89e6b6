import type pg from 'pg';

/** Tuples a table has had written, from `pg_stat_user_tables` (cumulative since the database was made). */
export interface TableWrites {
  inserted: number;
  updated: number;
  deleted: number;
}

export type WriteSnapshot = Record<string, TableWrites>;

/**
 * What was written between two snapshots, per table that changed (tables absent from `before` count from 0).
 *
 * @example diffWrites({ t: { inserted: 5, updated: 0, deleted: 0 } }, { t: { inserted: 9, updated: 1, deleted: 0 } })
 * // → { t: { inserted: 4, updated: 1, deleted: 0 } }
 */
export function diffWrites(before: WriteSnapshot, after: WriteSnapshot): WriteSnapshot {
  const out: WriteSnapshot = {};
  for (const [table, a] of Object.entries(after)) {
    const b = before[table] ?? { inserted: 0, updated: 0, deleted: 0 };
    const d = { inserted: a.inserted - b.inserted, updated: a.updated - b.updated, deleted: a.deleted - b.deleted };
    if (d.inserted || d.updated || d.deleted) out[table] = d;
  }
  return out;
}

const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

/**
 * A snapshot of every user table's write counters once they have settled. Backends publish their counters
 * when they end (and now and then while idle), not at each commit: this waits until no other client
 * session is connected to the database (the exporter has closed its pool), then reads until two reads,
 * `settleMs` apart, agree.
 *
 * @example const before = await settledWrites(client); // … run … diffWrites(before, await settledWrites(client))
 */
export async function settledWrites(client: pg.Client, options: { timeoutMs?: number; settleMs?: number } = {}): Promise<WriteSnapshot> {
  const deadline = Date.now() + (options.timeoutMs ?? 20_000);
  const settleMs = options.settleMs ?? 500;
  while (Date.now() < deadline) {
    const { rows } = await client.query<{ n: number }>(
      `SELECT count(*)::int AS n FROM pg_stat_activity
       WHERE datname = current_database() AND backend_type = 'client backend' AND pid <> pg_backend_pid()`,
    );
    if (rows[0]!.n === 0) break;
    await sleep(100);
  }
  let last = await readWrites(client);
  while (Date.now() < deadline) {
    await sleep(settleMs);
    const next = await readWrites(client);
    if (JSON.stringify(next) === JSON.stringify(last)) return next;
    last = next;
  }
  return last;
}

async function readWrites(client: pg.Client): Promise<WriteSnapshot> {
  // a fresh snapshot: the statistics read in a session are otherwise cached until its transaction ends
  await client.query('SELECT pg_stat_clear_snapshot()');
  const { rows } = await client.query<{ relname: string; ins: string; upd: string; del: string }>(
    'SELECT relname, n_tup_ins::text AS ins, n_tup_upd::text AS upd, n_tup_del::text AS del FROM pg_stat_user_tables ORDER BY relname',
  );
  return Object.fromEntries(rows.map((r) => [r.relname, { inserted: Number(r.ins), updated: Number(r.upd), deleted: Number(r.del) }]));
}
