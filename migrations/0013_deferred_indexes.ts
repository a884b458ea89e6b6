import { sql, type Kysely } from 'kysely';

/**
 * The lookup indexes a first load into an empty token_transfers builds after its rows instead of row by row
 * (`src/warehouse/deferred-indexes.ts`): each row is one index the load dropped, with its definition as
 * `pg_get_indexdef` printed it, written in the same transaction as the drop. The run rebuilds them once its chunks
 * are read, and deletes the row in the same transaction as the rebuild; a row that outlives its run (the run was
 * killed) is rebuilt by the next run or by `migrate`.
 */
export async function up(db: Kysely<unknown>): Promise<void> {
  await sql`
    CREATE TABLE IF NOT EXISTS deferred_indexes (
      name text PRIMARY KEY,
      definition text NOT NULL,
      run_id bigint,
      dropped_at timestamptz NOT NULL DEFAULT now()
    )`.execute(db);
}

export async function down(db: Kysely<unknown>): Promise<void> {
  // indexes still recorded (a first load going on, or killed) are built first: without the table, nothing would build
  // them again; each as 0001 and 0009 made it, from this file, never from the recorded text. Under the lock a first
  // load drops them under (so none is dropped meanwhile), and without a statement timeout (a build takes as long as
  // the table is large), as the exporter builds them (src/warehouse/deferred-indexes.ts)
  await sql`SELECT pg_advisory_xact_lock(hashtextextended('erc20-etl deferred indexes', 0))`.execute(db);
  await sql`SET LOCAL statement_timeout = 0`.execute(db);
  await sql`
    DO $$
    DECLARE i record;
    BEGIN
      IF to_regclass('deferred_indexes') IS NULL THEN RETURN; END IF;
      FOR i IN
        SELECT v.build FROM (VALUES
          ('token_transfers_block_hash', 'CREATE INDEX token_transfers_block_hash ON token_transfers (block_hash, chain_id)'),
          ('token_transfers_from', 'CREATE INDEX token_transfers_from ON token_transfers (from_address)'),
          ('token_transfers_to', 'CREATE INDEX token_transfers_to ON token_transfers (to_address)')
        ) AS v(name, build)
        WHERE v.name IN (SELECT name FROM deferred_indexes) AND to_regclass(v.name) IS NULL
      LOOP
        EXECUTE i.build;
      END LOOP;
    END $$`.execute(db);
  await sql`DROP TABLE IF EXISTS deferred_indexes`.execute(db);
}
