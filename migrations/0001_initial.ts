import { sql, type Kysely } from 'kysely';

/**
 * The warehouse: transfers, headers, token metadata, and the ledgers that make every run exact and
 * resumable. Column names are the snake_case of the API's field names. Nothing here stops token_transfers
 * from being distributed on Citus by transaction_hash (see README): every unique key of it includes that
 * column; headers and tokens can be reference tables, and the ledgers stay on the coordinator.
 */
export async function up(db: Kysely<unknown>): Promise<void> {
  await sql`
    CREATE TABLE token_transfers (
      transaction_hash  text          NOT NULL,
      log_index         integer       NOT NULL CHECK (log_index >= 0),
      contract_address  text          NOT NULL,
      from_address      text          NOT NULL,
      to_address        text          NOT NULL,
      value             numeric(78,0) NOT NULL CHECK (value >= 0),
      block_number      bigint        NOT NULL CHECK (block_number >= 0),
      block_hash        text          NOT NULL,
      block_timestamp   timestamptz   NOT NULL,
      transaction_index integer       NOT NULL CHECK (transaction_index >= 0),
      inserted_by_run   bigint        NOT NULL,
      updated_by_run    bigint        NOT NULL,
      PRIMARY KEY (transaction_hash, log_index)
    )`.execute(db);
  await sql`CREATE INDEX token_transfers_contract_block ON token_transfers (contract_address, block_number)`.execute(db);
  await sql`CREATE INDEX token_transfers_from ON token_transfers (from_address)`.execute(db);
  await sql`CREATE INDEX token_transfers_to ON token_transfers (to_address)`.execute(db);
  await sql`CREATE INDEX token_transfers_block_hash ON token_transfers (block_hash)`.execute(db);

  await sql`
    CREATE TABLE token_transfers_removed (
      id                bigserial     PRIMARY KEY,
      transaction_hash  text          NOT NULL,
      log_index         integer       NOT NULL,
      contract_address  text          NOT NULL,
      from_address      text          NOT NULL,
      to_address        text          NOT NULL,
      value             numeric(78,0) NOT NULL,
      block_number      bigint        NOT NULL,
      block_hash        text          NOT NULL,
      block_timestamp   timestamptz   NOT NULL,
      transaction_index integer       NOT NULL,
      inserted_by_run   bigint        NOT NULL,
      updated_by_run    bigint        NOT NULL,
      removed_by_run    bigint        NOT NULL,
      removed_at        timestamptz   NOT NULL DEFAULT now()
    )`.execute(db);
  await sql`CREATE INDEX token_transfers_removed_key ON token_transfers_removed (transaction_hash, log_index)`.execute(db);
  await sql`CREATE INDEX token_transfers_removed_contract_block ON token_transfers_removed (contract_address, block_number)`.execute(db);

  await sql`
    CREATE TABLE block_headers (
      hash                     text        PRIMARY KEY,
      number                   bigint      NOT NULL,
      parent_hash              text        NOT NULL,
      sha3_uncles              text        NOT NULL,
      miner                    text        NOT NULL,
      state_root               text        NOT NULL,
      transactions_root        text        NOT NULL,
      receipts_root            text        NOT NULL,
      logs_bloom               text        NOT NULL,
      difficulty               numeric     NOT NULL,
      gas_limit                numeric     NOT NULL,
      gas_used                 numeric     NOT NULL,
      timestamp                bigint      NOT NULL,
      extra_data               text        NOT NULL,
      mix_hash                 text        NOT NULL,
      nonce                    text        NOT NULL,
      base_fee_per_gas         numeric,
      withdrawals_root         text,
      blob_gas_used            numeric,
      excess_blob_gas          numeric,
      parent_beacon_block_root text,
      requests_hash            text,
      block_access_list_hash   text,
      hash_verified            boolean     NOT NULL,
      extra_fields             jsonb,
      canonical                boolean     NOT NULL DEFAULT true,
      fetched_by_run           bigint,
      fetched_at               timestamptz NOT NULL DEFAULT now()
    )`.execute(db);
  await sql`CREATE INDEX block_headers_number ON block_headers (number)`.execute(db);

  await sql`
    CREATE TABLE tokens (
      contract_address text        PRIMARY KEY,
      name             text,
      symbol           text,
      decimals         integer,
      updated_by_run   bigint,
      updated_at       timestamptz NOT NULL DEFAULT now()
    )`.execute(db);

  await sql`
    CREATE TABLE export_runs (
      id              bigserial   PRIMARY KEY,
      job             text        NOT NULL,
      command         text        NOT NULL,
      contracts       text[]      NOT NULL,
      from_block      bigint,
      to_block        bigint,
      status          text        NOT NULL DEFAULT 'running' CHECK (status IN ('running', 'succeeded', 'failed')),
      started_at      timestamptz NOT NULL DEFAULT now(),
      finished_at     timestamptz,
      rows_inserted   bigint      NOT NULL DEFAULT 0,
      rows_updated    bigint      NOT NULL DEFAULT 0,
      rows_unchanged  bigint      NOT NULL DEFAULT 0,
      rows_removed    bigint      NOT NULL DEFAULT 0,
      api_requests    bigint      NOT NULL DEFAULT 0,
      retries         bigint      NOT NULL DEFAULT 0,
      rate_limited    bigint      NOT NULL DEFAULT 0,
      headers_fetched bigint      NOT NULL DEFAULT 0,
      error           text
    )`.execute(db);
  await sql`CREATE INDEX export_runs_job ON export_runs (job, started_at DESC)`.execute(db);

  // A range of one contract that a job is reading: its chunks carry the position inside it, its seen
  // keys let the finished range be reconciled, and its completion becomes a coverage row.
  await sql`
    CREATE TABLE export_ranges (
      id               bigserial   PRIMARY KEY,
      job              text        NOT NULL,
      contract_address text        NOT NULL,
      from_block       bigint      NOT NULL,
      to_block         bigint      NOT NULL CHECK (to_block >= from_block),
      status           text        NOT NULL DEFAULT 'open' CHECK (status IN ('open', 'complete')),
      created_by_run   bigint      NOT NULL,
      created_at       timestamptz NOT NULL DEFAULT now(),
      completed_at     timestamptz
    )`.execute(db);
  await sql`CREATE INDEX export_ranges_open ON export_ranges (job, contract_address) WHERE status = 'open'`.execute(db);

  await sql`
    CREATE TABLE export_chunks (
      id              bigserial   PRIMARY KEY,
      range_id        bigint      NOT NULL REFERENCES export_ranges (id) ON DELETE CASCADE,
      from_block      bigint      NOT NULL,
      to_block        bigint      NOT NULL CHECK (to_block >= from_block),
      page_key        text,
      resume_to_block bigint,
      pages           integer     NOT NULL DEFAULT 0,
      rows            bigint      NOT NULL DEFAULT 0,
      done            boolean     NOT NULL DEFAULT false,
      updated_at      timestamptz NOT NULL DEFAULT now()
    )`.execute(db);
  await sql`CREATE INDEX export_chunks_range ON export_chunks (range_id)`.execute(db);

  await sql`
    CREATE TABLE export_seen (
      range_id         bigint  NOT NULL REFERENCES export_ranges (id) ON DELETE CASCADE,
      transaction_hash text    NOT NULL,
      log_index        integer NOT NULL,
      PRIMARY KEY (range_id, transaction_hash, log_index)
    )`.execute(db);

  await sql`
    CREATE TABLE export_coverage (
      id               bigserial   PRIMARY KEY,
      job              text        NOT NULL,
      contract_address text        NOT NULL,
      from_block       bigint      NOT NULL,
      to_block         bigint      NOT NULL CHECK (to_block >= from_block),
      row_count        bigint      NOT NULL,
      run_id           bigint      NOT NULL,
      completed_at     timestamptz NOT NULL DEFAULT now()
    )`.execute(db);
  await sql`CREATE INDEX export_coverage_contract ON export_coverage (contract_address, from_block)`.execute(db);
  await sql`CREATE INDEX export_coverage_job ON export_coverage (job, contract_address, to_block)`.execute(db);

  await sql`
    CREATE VIEW token_transfers_enriched AS
    SELECT
      t.transaction_hash, t.log_index, t.contract_address, t.from_address, t.to_address, t.value,
      t.block_number, t.block_hash, t.block_timestamp, t.transaction_index,
      k.name AS token_name, k.symbol AS token_symbol, k.decimals AS token_decimals,
      -- multiplying by 1e-decimals is exact; dividing by 10^decimals rounds large values
      t.value * ('1e-' || k.decimals)::numeric AS value_scaled,
      h.parent_hash, h.miner, h.gas_limit, h.gas_used, h.base_fee_per_gas, h.timestamp AS header_timestamp,
      h.hash_verified, h.canonical
    FROM token_transfers t
    LEFT JOIN tokens k ON k.contract_address = t.contract_address
    LEFT JOIN block_headers h ON h.hash = t.block_hash`.execute(db);
}

export async function down(db: Kysely<unknown>): Promise<void> {
  await sql`DROP VIEW IF EXISTS token_transfers_enriched`.execute(db);
  for (const table of [
    'export_seen',
    'export_chunks',
    'export_ranges',
    'export_coverage',
    'export_runs',
    'tokens',
    'block_headers',
    'token_transfers_removed',
    'token_transfers',
  ]) {
    await sql`DROP TABLE IF EXISTS ${sql.table(table)}`.execute(db);
  }
}
