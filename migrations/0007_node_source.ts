import { sql, type Kysely } from 'kysely';

/**
 * A node source (issue 16) keeps two things here:
 * - `logs_ranges`: per job and endpoint host, the `eth_getLogs` range (in blocks) its last successful run
 *   learned, so the next run starts there. The host only (e.g. `mainnet.infura.io`): never the URL, whose
 *   path may hold a key.
 * - `export_run_skipped_logs`: per run and contract, the logs with the Transfer topic that are not ERC-20
 *   transfers (ERC-721: 4 topics; other shapes), counted, never stored. Tasks of one run add their shares.
 */
export async function up(db: Kysely<unknown>): Promise<void> {
  await sql`
    CREATE TABLE logs_ranges (
      job           text        NOT NULL,
      endpoint_host text        NOT NULL,
      blocks        integer     NOT NULL CHECK (blocks > 0),
      run_id        bigint      REFERENCES export_runs (id),
      updated_at    timestamptz NOT NULL DEFAULT now(),
      PRIMARY KEY (job, endpoint_host)
    )`.execute(db);
  await sql`
    CREATE TABLE export_run_skipped_logs (
      run_id           bigint NOT NULL REFERENCES export_runs (id),
      contract_address text   NOT NULL,
      erc721           bigint NOT NULL DEFAULT 0 CHECK (erc721 >= 0),
      other            bigint NOT NULL DEFAULT 0 CHECK (other >= 0),
      PRIMARY KEY (run_id, contract_address)
    )`.execute(db);
  await sql`CREATE INDEX export_run_skipped_logs_contract ON export_run_skipped_logs (contract_address, run_id DESC)`.execute(db);
}

export async function down(db: Kysely<unknown>): Promise<void> {
  await sql`DROP TABLE IF EXISTS export_run_skipped_logs`.execute(db);
  await sql`DROP TABLE IF EXISTS logs_ranges`.execute(db);
}
