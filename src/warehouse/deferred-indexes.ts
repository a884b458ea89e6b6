import { sql, type Kysely } from 'kysely';
import { lockId, lockKeys } from './lock-keys.ts';
import type { Database } from './schema.ts';

/**
 * The indexes of token_transfers a first load may build after its rows instead of row by row, each with the statements
 * that drop it and build it as its migration did (0001, 0009). No statement of a load reads through them: a chunk's
 * freshness, its missing headers and its range's closing count read by contract and block
 * (`token_transfers_contract_block`, kept), and a COPY meets a row already stored through the primary key (kept: it is
 * what makes a load exact). They are for the user's queries, and for the reconciliation that follows the load. Built
 * by one sort each after 1,000,000 rows, they cost PostgreSQL less than kept up row by row (bench/NOTES.md).
 */
const LOOKUP_INDEXES = [
  {
    name: 'token_transfers_block_hash',
    columns: 'block_hash, chain_id',
    drop: 'DROP INDEX token_transfers_block_hash',
    build: 'CREATE INDEX token_transfers_block_hash ON token_transfers (block_hash, chain_id)',
  },
  { name: 'token_transfers_from', columns: 'from_address', drop: 'DROP INDEX token_transfers_from', build: 'CREATE INDEX token_transfers_from ON token_transfers (from_address)' },
  { name: 'token_transfers_to', columns: 'to_address', drop: 'DROP INDEX token_transfers_to', build: 'CREATE INDEX token_transfers_to ON token_transfers (to_address)' },
] as const;

/** The names of the indexes a first load may build after its rows. */
export const DEFERRABLE_INDEXES: readonly string[] = LOOKUP_INDEXES.map((i) => i.name);

/**
 * A first load pauses autovacuum on token_transfers while it fills the table, as it defers the lookup indexes: a stock
 * server's autovacuum (on by default) vacuums a table that many inserts have changed, which it sees as the load
 * commits, where a plain COPY commits once. Measured on PostgreSQL 15 with autovacuum on, 1,000,000 transfers,
 * nine pairs: autovacuum had vacuumed the table after six of the nine loads without the pause; those nine took
 * 15.42 s on average (PostgreSQL's CPU 13.19 s), the paused ones 15.04 s (12.69 s) (bench/NOTES.md, "An eighteenth
 * day"). The pause is recorded in paused_autovacuum with the setting; the build that forgets the indexes resumes it
 * (`RESUME_AUTOVACUUM`: the table's own setting is gone again, so the server's applies), and autovacuum then visits
 * the loaded table once. A table with an `autovacuum_enabled` setting of its own is left as it is.
 */
const PAUSE_AUTOVACUUM = 'ALTER TABLE token_transfers SET (autovacuum_enabled = false)';
const RESUME_AUTOVACUUM = 'ALTER TABLE token_transfers RESET (autovacuum_enabled)';

/**
 * How long dropping the indexes waits for another session's lock on token_transfers before the load keeps them (its
 * request for the table's exclusive lock holds up that table's readers and writers meanwhile).
 */
const DROP_LOCK_TIMEOUT = '2s';

/** What a run did with the lookup indexes before it read its chunks. */
export interface IndexPlan {
  /** Indexes the run builds once its chunks are read (dropped now, or left dropped by a first load still going). */
  deferred: string[];
  /** Indexes a first load had dropped (one that was stopped, or one still going), built now. */
  rebuilt: string[];
  /**
   * Why a first load keeps them: the role does not own token_transfers, or another session held it (then any that a
   * first load stopped before its first row had dropped are `deferred` all the same, and `keptUp` names the others).
   */
  kept?: string;
  /** When another session held token_transfers: the lookup indexes the load keeps up, those it found. */
  keptUp?: string[];
  /** Indexes a first load dropped that this role cannot build (it does not own token_transfers), when it may read which. */
  unbuilt?: string[];
  /** Autovacuum on token_transfers is paused till the deferred indexes are built (`PAUSE_AUTOVACUUM`). */
  autovacuumPaused?: true;
  /** A pause a first load left (stopped, or built by code older than the pause) was resumed now. */
  autovacuumResumed?: true;
}

/**
 * Before a run reads its chunks: with `defer`, a token_transfers that holds no row at all (a first load) has its
 * lookup indexes (`DEFERRABLE_INDEXES`) dropped, each recorded in deferred_indexes with its definition in the same
 * transaction, so the run can build them after its rows (`rebuildDeferredIndexes`), and autovacuum on the table
 * paused till then unless the table has a setting of its own (`PAUSE_AUTOVACUUM`). Otherwise indexes a stopped first
 * load left unbuilt are built now. A role that does not own token_transfers (README "Database privileges") can do
 * neither: the run keeps the indexes as they are; `migrate`, as the owner, builds any left unbuilt. Dropping and building
 * take turns under one lock: `onWait` hears when this one has waited `WAIT_NOTICE_MS` for another session to let go of it.
 *
 * @example await prepareIndexes(db, { defer: true, runId: '7' }) // → { deferred: ['token_transfers_block_hash', …], rebuilt: [] }
 */
export async function prepareIndexes(db: Kysely<Database>, o: { defer: boolean; runId: string; onWait?: () => void }): Promise<IndexPlan> {
  if (!(await ownsTransfers(db))) {
    const unbuilt = (await unbuiltIndexes(db))?.map((i) => i.name);
    return {
      deferred: [],
      rebuilt: [],
      // said only of a first load: every later run keeps them anyway
      ...(o.defer && (await holdsNoRow(db)) && { kept: 'the role of DATABASE_URL does not own token_transfers' }),
      ...(unbuilt?.length && { unbuilt }),
    };
  }
  let dropping = false;
  try {
    return await db.transaction().execute(async (trx) => {
      const left = await lockedRecords(trx, o.onWait);
      if (!o.defer || !(await holdsNoRow(trx))) {
        const resumed = await buildAll(trx, left);
        return { deferred: [], rebuilt: left, ...(resumed && { autovacuumResumed: true as const }) };
      }
      const present = await definitions(trx);
      dropping = true;
      let droppedHere = false;
      await sql.raw(`SET LOCAL lock_timeout = '${DROP_LOCK_TIMEOUT}'`).execute(trx);
      for (const index of LOOKUP_INDEXES) {
        const definition = present.get(index.name);
        // one a user changed (other columns, another method) is left as it is: it is built again only as migrated
        if (definition === undefined || !isAsMigrated(index, definition)) continue;
        // recorded already by a first load that was stopped before its first row (built by hand since)
        await trx
          .insertInto('deferred_indexes')
          .values({ name: index.name, definition, run_id: o.runId })
          .onConflict((oc) => oc.column('name').doNothing())
          .execute();
        await sql.raw(index.drop).execute(trx);
        droppedHere = true;
      }
      const deferred = await recordedNames(trx);
      // none to build after the rows (each changed by a user, say): a pause left from before is not kept for the load
      if (!deferred.length) return { deferred: [], rebuilt: [], ...((await buildAll(trx, [])) && { autovacuumResumed: true as const }) };
      // paused by a first load stopped before its first row, or by this one: the exclusive lock its drops took is
      // held, so the setting waits for no one
      let paused = (await pauseRecord(trx)) !== undefined;
      if (droppedHere && !paused && (await autovacuumSetting(trx)) === undefined) {
        await trx.insertInto('paused_autovacuum').values({ table_name: 'token_transfers', run_id: o.runId }).execute();
        await sql.raw(PAUSE_AUTOVACUUM).execute(trx);
        paused = true;
      }
      return { deferred, rebuilt: [], ...(paused && { autovacuumPaused: true as const }) };
    });
  } catch (err) {
    // 55P03 lock_not_available while dropping: a session holds token_transfers (a long query, say); the load keeps up
    // those it found, and builds after its rows any that a first load stopped before its first row had dropped
    if (dropping && (err as { code?: string }).code === '55P03') {
      const deferred = await recordedNames(db);
      const present = await definitions(db);
      const keptUp = DEFERRABLE_INDEXES.filter((name) => present.has(name) && !deferred.includes(name));
      // a pause a stopped load recorded lasts till this load builds its indexes, as it would have paused
      const paused = deferred.length > 0 && (await pauseRecord(db)) !== undefined;
      return {
        deferred,
        rebuilt: [],
        ...(keptUp.length && { kept: `another session held token_transfers for more than ${DROP_LOCK_TIMEOUT}`, keptUp }),
        ...(paused && { autovacuumPaused: true as const }),
      };
    }
    throw err;
  }
}

/**
 * Builds every index deferred_indexes lists (a first load's, once its chunks are read; or one a stopped load left)
 * and forgets it, each in the same transaction as its build, then resumes autovacuum a first load paused. Resolves to
 * the names built and whether a pause was resumed. `o.onWait`: as for `prepareIndexes`.
 *
 * @example await rebuildDeferredIndexes(db) // → { built: ['token_transfers_block_hash', 'token_transfers_from', 'token_transfers_to'], resumed: true }
 */
export async function rebuildDeferredIndexes(db: Kysely<Database>, o: { onWait?: () => void } = {}): Promise<{ built: string[]; resumed: boolean }> {
  return db.transaction().execute(async (trx) => {
    const left = await lockedRecords(trx, o.onWait);
    const resumed = await buildAll(trx, left);
    return { built: left, resumed };
  });
}

/**
 * The indexes a first load left unbuilt, for `status`: undefined when this role cannot read deferred_indexes (or the
 * warehouse predates it).
 */
export async function unbuiltIndexes(db: Kysely<Database>): Promise<{ name: string; runId: string | null; droppedAt: Date }[] | undefined> {
  if (!(await readable(db, 'deferred_indexes'))) return undefined;
  const left = await db.selectFrom('deferred_indexes').select(['name', 'run_id', 'dropped_at']).orderBy('name').execute();
  return left.map((i) => ({ name: i.name, runId: i.run_id, droppedAt: i.dropped_at }));
}

/**
 * The pause of autovacuum on token_transfers a first load recorded, for `status`: null when there is none, undefined
 * when this role cannot read paused_autovacuum.
 */
export async function pausedAutovacuum(db: Kysely<Database>): Promise<{ runId: string | null; pausedAt: Date } | null | undefined> {
  if (!(await readable(db, 'paused_autovacuum'))) return undefined;
  const row = await pauseRecord(db);
  return row ? { runId: row.run_id, pausedAt: row.paused_at } : null;
}

/** Whether this role may read `table` (false where it is missing: a warehouse older than its migration). */
async function readable(db: Kysely<Database>, table: 'deferred_indexes' | 'paused_autovacuum'): Promise<boolean> {
  const { rows } = await sql<{ readable: boolean | null }>`SELECT has_table_privilege(to_regclass(${table}), 'SELECT') AS readable`.execute(db);
  return rows[0]?.readable === true;
}

/**
 * Whether `definition` (as `pg_get_indexdef` prints it) is the lookup index as its migration made it: a plain btree
 * of its columns on token_transfers, of any schema.
 *
 * @example isAsMigrated({ name: 'token_transfers_from', columns: 'from_address' }, 'CREATE INDEX token_transfers_from ON public.token_transfers USING btree (from_address)') // → true
 */
export function isAsMigrated(index: { name: string; columns: string }, definition: string): boolean {
  const m = /^CREATE INDEX ([a-z_][a-z0-9_]*) ON (?:[a-z_][a-z0-9_]*\.)?token_transfers USING btree \(([a-z0-9_, ]+)\)$/.exec(definition);
  return m?.[1] === index.name && m[2] === index.columns;
}

/** The lookup index deferred_indexes names: one of `LOOKUP_INDEXES`, or an error that says what to do. */
export function lookupIndex(name: string): (typeof LOOKUP_INDEXES)[number] {
  const index = LOOKUP_INDEXES.find((i) => i.name === name);
  if (!index) {
    throw new Error(
      `deferred_indexes names ${JSON.stringify(name)}, which is not an index a first load drops (${DEFERRABLE_INDEXES.join(', ')}); ` +
        "build it by hand as its row's definition says, if it should exist, then delete its row from deferred_indexes",
    );
  }
  return index;
}

/**
 * How long a wait for the lock must last before `onWait` hears of it: the lock is also held for a moment by every
 * run that only looks for indexes to build (and finds none), and such a wait is not worth a word.
 */
export const WAIT_NOTICE_MS = 1000;

/** The indexes deferred_indexes records, read under the lock that drops and builds take turns under (till the transaction ends). */
async function lockedRecords(trx: Kysely<Database>, onWait?: () => void): Promise<string[]> {
  // another session holds it (dropping or building the indexes, or looking for some to build): said once the wait lasts
  const notice = onWait && setTimeout(onWait, WAIT_NOTICE_MS);
  try {
    await sql`SELECT pg_advisory_xact_lock(${lockId(lockKeys.indexes())})`.execute(trx);
  } finally {
    clearTimeout(notice);
  }
  return recordedNames(trx);
}

/** The names of the indexes deferred_indexes records, in order. */
async function recordedNames(db: Kysely<Database>): Promise<string[]> {
  return (await db.selectFrom('deferred_indexes').select('name').orderBy('name').execute()).map((i) => i.name);
}

/**
 * Builds the recorded indexes and forgets them, then resumes autovacuum a first load paused (also when code older than
 * the pause built them: it forgets the indexes, not the pause). Resolves to whether a pause was recorded and forgotten.
 */
async function buildAll(trx: Kysely<Database>, left: readonly string[]): Promise<boolean> {
  await buildRecorded(trx, left);
  const resumed = await trx.deleteFrom('paused_autovacuum').where('table_name', '=', 'token_transfers').returning('table_name').execute();
  // a setting someone changed meanwhile (autovacuum_enabled true, or false written otherwise) is theirs: kept
  if (resumed.length && (await autovacuumSetting(trx)) === 'false') await sql.raw(RESUME_AUTOVACUUM).execute(trx);
  return resumed.length > 0;
}

async function buildRecorded(trx: Kysely<Database>, left: readonly string[]): Promise<void> {
  if (!left.length) return;
  // a name it does not know fails the build before any index is built
  const names = new Set(left.map((name) => lookupIndex(name).name));
  // a build takes as long as the table is large: a role's or server's statement_timeout is not for it
  await sql.raw('SET LOCAL statement_timeout = 0').execute(trx);
  const present = await definitions(trx);
  for (const index of LOOKUP_INDEXES) {
    if (!names.has(index.name)) continue;
    // built by hand meanwhile: kept as it is
    if (!present.has(index.name)) await sql.raw(index.build).execute(trx);
    await trx.deleteFrom('deferred_indexes').where('name', '=', index.name).execute();
  }
}

/** The record of a first load's pause of autovacuum on token_transfers (paused_autovacuum), if any. */
function pauseRecord(db: Kysely<Database>) {
  return db.selectFrom('paused_autovacuum').select(['run_id', 'paused_at']).where('table_name', '=', 'token_transfers').executeTakeFirst();
}

/** token_transfers' own `autovacuum_enabled` setting as its storage parameters hold it (`false`, `true`, `off`, …), or undefined. */
export async function autovacuumSetting(db: Kysely<Database>): Promise<string | undefined> {
  const { rows } = await sql<{ value: string }>`
    SELECT option_value AS value FROM pg_class c, pg_options_to_table(c.reloptions)
    WHERE c.oid = 'token_transfers'::regclass AND option_name = 'autovacuum_enabled'`.execute(db);
  return rows[0]?.value;
}

/** token_transfers' indexes that are not unique, by name: their definitions as `pg_get_indexdef` prints them. */
async function definitions(db: Kysely<Database>): Promise<Map<string, string>> {
  const { rows } = await sql<{ name: string; definition: string }>`
    SELECT c.relname AS name, pg_get_indexdef(i.indexrelid) AS definition
    FROM pg_index i JOIN pg_class c ON c.oid = i.indexrelid
    WHERE i.indrelid = 'token_transfers'::regclass AND NOT i.indisunique`.execute(db);
  return new Map(rows.map((r) => [r.name, r.definition]));
}

/** Whether token_transfers holds no row of any chain: a first load into it. */
async function holdsNoRow(db: Kysely<Database>): Promise<boolean> {
  const { rows } = await sql<{ empty: boolean }>`SELECT NOT EXISTS (SELECT 1 FROM token_transfers) AS empty`.execute(db);
  return rows[0]?.empty === true;
}

/** Whether the role may drop and create token_transfers' indexes: it owns the table, or is a member of its owner. */
async function ownsTransfers(db: Kysely<Database>): Promise<boolean> {
  const { rows } = await sql<{ owns: boolean }>`
    SELECT pg_has_role(c.relowner, 'USAGE') AS owns FROM pg_class c WHERE c.oid = 'token_transfers'::regclass`.execute(db);
  return rows[0]?.owns === true;
}
