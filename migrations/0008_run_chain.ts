import { sql, type Kysely } from 'kysely';

/**
 * Several chains (issue 17), a first step: a run records the chain its job is for (`export_runs.chain_id`, as
 * `eth_chainId` answers it). Runs written before this read chain 1, the only chain a job could name then. Until
 * every table is keyed by chain, a run is refused where the warehouse holds another chain's runs.
 */
export async function up(db: Kysely<unknown>): Promise<void> {
  // a constant default fills the existing rows without rewriting the table; new runs must state their chain
  await sql`ALTER TABLE export_runs ADD COLUMN chain_id bigint NOT NULL DEFAULT 1`.execute(db);
  await sql`ALTER TABLE export_runs ALTER COLUMN chain_id DROP DEFAULT`.execute(db);
}

export async function down(db: Kysely<unknown>): Promise<void> {
  await sql`ALTER TABLE export_runs DROP COLUMN chain_id`.execute(db);
}
