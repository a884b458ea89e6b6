import { sql, type Kysely } from 'kysely';

/** What `erc20-etl migrate` tells a migration: the chain of the rows a warehouse holds from before chains (`--chain-id`). */
export interface ChainKeysOptions {
  chainId?: number | undefined;
}

/**
 * Several chains in one warehouse (issue 17): every table of chain data gets `chain_id` (BIGINT, NOT NULL) and
 * is keyed by it. Transfers by (transaction_hash, log_index, chain_id), headers by (hash, chain_id), tokens by
 * (contract_address, chain_id): the hash or address first, so a lookup by it alone (an analyst's) still finds it
 * in the key; ranges, chunks, missing keys, coverage and learned log ranges per chain. The enriched view joins on
 * chain, and shows it as its last column (a view built on it keeps working). Headers a chain's rule cannot verify
 * say why (`unverified_reason`), and a header without `mixHash` or `nonce` (Gnosis under AuRa) can be stored.
 *
 * Every row already here is the chain's that `migrate --chain-id N` names, else the chain its runs checked with
 * the endpoint's `eth_chainId` (those since migration 0008), else chain 1. A constant default fills a new column
 * without rewriting the table, so a warehouse of a million transfers is upgraded in the time its new indexes take
 * to build.
 */
export async function up(db: Kysely<unknown>, options: ChainKeysOptions = {}): Promise<void> {
  const chain = await chainOfExistingRows(db, options.chainId);
  // DDL takes no parameters: the default is written as digits, and nothing else can get through
  const digits = String(chain).replace(/[^0-9]+/g, '');
  if (digits !== String(chain)) throw new Error(`a chain id must be a positive integer, got ${chain}`);
  const addChain = async (table: string) => {
    await sql`ALTER TABLE ${sql.table(table)} ADD COLUMN chain_id bigint NOT NULL DEFAULT ${sql.raw(digits)}`.execute(db);
    // new rows must say their chain: a writer that does not is refused, never filed under chain `chain`
    await sql`ALTER TABLE ${sql.table(table)} ALTER COLUMN chain_id DROP DEFAULT`.execute(db);
  };
  await sql`UPDATE export_runs SET chain_id = ${chain} WHERE chain_id <> ${chain}`.execute(db);

  await addChain('token_transfers');
  await sql`ALTER TABLE token_transfers DROP CONSTRAINT token_transfers_pkey, ADD PRIMARY KEY (transaction_hash, log_index, chain_id)`.execute(db);
  await sql`DROP INDEX token_transfers_contract_block`.execute(db);
  await sql`CREATE INDEX token_transfers_contract_block ON token_transfers (contract_address, block_number, chain_id)`.execute(db);
  await sql`DROP INDEX token_transfers_block_hash`.execute(db);
  await sql`CREATE INDEX token_transfers_block_hash ON token_transfers (block_hash, chain_id)`.execute(db);

  await addChain('token_transfers_removed');
  await sql`DROP INDEX token_transfers_removed_key`.execute(db);
  await sql`CREATE INDEX token_transfers_removed_key ON token_transfers_removed (transaction_hash, log_index, chain_id)`.execute(db);
  await sql`DROP INDEX token_transfers_removed_contract_block`.execute(db);
  await sql`CREATE INDEX token_transfers_removed_contract_block ON token_transfers_removed (contract_address, block_number, chain_id)`.execute(db);

  await addChain('block_headers');
  await sql`ALTER TABLE block_headers DROP CONSTRAINT block_headers_pkey, ADD PRIMARY KEY (hash, chain_id)`.execute(db);
  await sql`DROP INDEX block_headers_number`.execute(db);
  await sql`CREATE INDEX block_headers_number ON block_headers (number, chain_id)`.execute(db);
  await sql`
    ALTER TABLE block_headers
      ALTER COLUMN mix_hash DROP NOT NULL,
      ALTER COLUMN nonce DROP NOT NULL,
      ADD COLUMN unverified_reason text`.execute(db);

  await addChain('tokens');
  await sql`ALTER TABLE tokens DROP CONSTRAINT tokens_pkey, ADD PRIMARY KEY (contract_address, chain_id)`.execute(db);

  await addChain('export_ranges');
  await sql`DROP INDEX export_ranges_open`.execute(db);
  await sql`CREATE INDEX export_ranges_open ON export_ranges (chain_id, job, contract_address) WHERE status = 'open'`.execute(db);
  await addChain('export_chunks');
  await addChain('export_missing');

  await addChain('export_coverage');
  await sql`DROP INDEX export_coverage_contract`.execute(db);
  await sql`CREATE INDEX export_coverage_contract ON export_coverage (chain_id, contract_address, from_block)`.execute(db);
  await sql`DROP INDEX export_coverage_job`.execute(db);
  await sql`CREATE INDEX export_coverage_job ON export_coverage (chain_id, job, contract_address, to_block)`.execute(db);

  await addChain('logs_ranges');
  await sql`ALTER TABLE logs_ranges DROP CONSTRAINT logs_ranges_pkey, ADD PRIMARY KEY (chain_id, job, endpoint_host)`.execute(db);

  await sql`CREATE INDEX export_runs_chain ON export_runs (chain_id, id DESC)`.execute(db);
  await createEnrichedView(db, true);
}

/**
 * The transfers with their token's metadata and their block's header, each of the transfer's own chain, which is
 * the last column (CREATE OR REPLACE keeps the columns before it, so a view built on this one still works).
 * `withChain: false` is the view before chains (for `down`).
 */
async function createEnrichedView(db: Kysely<unknown>, withChain: boolean): Promise<void> {
  const chainColumn = withChain ? sql`, t.chain_id` : sql``;
  const sameChain = (alias: string) => (withChain ? sql`${sql.raw(alias)}.chain_id = t.chain_id AND` : sql``);
  await sql`
    CREATE OR REPLACE VIEW token_transfers_enriched AS
    SELECT
      t.transaction_hash, t.log_index, t.contract_address, t.from_address, t.to_address, t.value,
      t.block_number, t.block_hash, t.block_timestamp, t.transaction_index,
      k.name AS token_name, k.symbol AS token_symbol, k.decimals AS token_decimals,
      -- multiplying by 1e-decimals is exact; dividing by 10^decimals rounds large values
      t.value * ('1e-' || k.decimals)::numeric AS value_scaled,
      h.parent_hash, h.miner, h.gas_limit, h.gas_used, h.base_fee_per_gas, h.timestamp AS header_timestamp,
      h.hash_verified, h.canonical ${chainColumn}
    FROM token_transfers t
    LEFT JOIN tokens k ON ${sameChain('k')} k.contract_address = t.contract_address
    LEFT JOIN block_headers h ON ${sameChain('h')} h.hash = t.block_hash`.execute(db);
}

/**
 * The chain the rows already here belong to: `stated` (`migrate --chain-id`), else the chain the runs since migration
 * 0008 checked with the endpoint's `eth_chainId`, else 1 (the only chain a job could name before). Throws, applying
 * nothing, when such runs contradict the chain stated, or name several chains and none is stated.
 */
async function chainOfExistingRows(db: Kysely<unknown>, stated: number | undefined): Promise<number> {
  // runs started before 0008 was applied read chain 1 by default, unchecked; those since were checked
  const { rows } = await sql<{ chain_id: string }>`
    SELECT DISTINCT r.chain_id::text AS chain_id FROM export_runs r
    WHERE r.started_at >= (SELECT m.timestamp::timestamptz FROM kysely_migration m WHERE m.name = '0008_run_chain')
    ORDER BY 1`.execute(db);
  const checked = rows.map((r) => Number(r.chain_id));
  const listed = checked.join(' and ');
  if (stated !== undefined) {
    if (checked.length && !checked.includes(stated)) {
      throw refusal(
        `--chain-id ${stated} says this warehouse's rows are chain ${stated}'s, but its runs checked the endpoint's eth_chainId and found chain ${listed}: run \`erc20-etl migrate\` without --chain-id${checked.length === 1 ? ` (or --chain-id ${checked[0]})` : `, naming one of ${listed}`}`,
      );
    }
    return stated;
  }
  if (checked.length > 1) {
    throw refusal(
      `this warehouse's runs checked the endpoint's eth_chainId and found chains ${listed}, and its rows are not keyed by chain yet, so they cannot be told apart: name the chain they belong to with \`erc20-etl migrate --chain-id N\` (one of ${listed})`,
    );
  }
  return checked[0] ?? 1;
}

/** An error of what the warehouse holds, not of the server: `migrate` exits 2 with it (a configuration to fix). */
function refusal(message: string): Error {
  return Object.assign(new Error(message), { name: 'MigrationRefusal' });
}

export async function down(db: Kysely<unknown>): Promise<void> {
  const chains = await sql<{ n: number }>`
    SELECT count(*)::int AS n FROM (SELECT chain_id FROM token_transfers UNION SELECT chain_id FROM export_runs) c`.execute(db);
  if ((chains.rows[0]?.n ?? 0) > 1) {
    throw refusal('this warehouse holds several chains: it cannot go back to a version that keys its rows without the chain');
  }
  await sql`DROP VIEW token_transfers_enriched`.execute(db);
  await sql`DROP INDEX export_runs_chain`.execute(db);
  // one chain only (checked above): its keys are unique without the chain
  await sql`ALTER TABLE token_transfers DROP CONSTRAINT token_transfers_pkey, ADD PRIMARY KEY (transaction_hash, log_index)`.execute(db);
  await sql`ALTER TABLE block_headers DROP CONSTRAINT block_headers_pkey, ADD PRIMARY KEY (hash)`.execute(db);
  await sql`ALTER TABLE tokens DROP CONSTRAINT tokens_pkey, ADD PRIMARY KEY (contract_address)`.execute(db);
  await sql`ALTER TABLE logs_ranges DROP CONSTRAINT logs_ranges_pkey, ADD PRIMARY KEY (job, endpoint_host)`.execute(db);
  await sql`ALTER TABLE block_headers DROP COLUMN unverified_reason`.execute(db);
  for (const table of [
    'token_transfers',
    'token_transfers_removed',
    'block_headers',
    'tokens',
    'export_ranges',
    'export_chunks',
    'export_missing',
    'export_coverage',
    'logs_ranges',
  ]) {
    // dropping the column drops the indexes that name it: those of 0001 come back below
    await sql`ALTER TABLE ${sql.table(table)} DROP COLUMN chain_id`.execute(db);
  }
  await sql`CREATE INDEX token_transfers_contract_block ON token_transfers (contract_address, block_number)`.execute(db);
  await sql`CREATE INDEX token_transfers_block_hash ON token_transfers (block_hash)`.execute(db);
  await sql`CREATE INDEX token_transfers_removed_key ON token_transfers_removed (transaction_hash, log_index)`.execute(db);
  await sql`CREATE INDEX token_transfers_removed_contract_block ON token_transfers_removed (contract_address, block_number)`.execute(db);
  await sql`CREATE INDEX block_headers_number ON block_headers (number)`.execute(db);
  await sql`CREATE INDEX export_ranges_open ON export_ranges (job, contract_address) WHERE status = 'open'`.execute(db);
  await sql`CREATE INDEX export_coverage_contract ON export_coverage (contract_address, from_block)`.execute(db);
  await sql`CREATE INDEX export_coverage_job ON export_coverage (job, contract_address, to_block)`.execute(db);
  await createEnrichedView(db, false);
}
