import type { ColumnType, Generated } from 'kysely';

/** Kysely's view of the warehouse tables (migrations/ is the source of truth). */
type Numeric = ColumnType<string, string, string>;
type BigintColumn = ColumnType<string, string | number | bigint, string | number | bigint>;
type Timestamp = ColumnType<Date, Date | string | undefined, Date | string>;

/** The chain a row is of (EIP-155 id; migration 0009): every table of chain data is keyed by it. */
type ChainId = BigintColumn;

export interface TokenTransfersTable {
  chain_id: ChainId;
  transaction_hash: string;
  log_index: number;
  contract_address: string;
  from_address: string;
  to_address: string;
  value: Numeric;
  block_number: BigintColumn;
  block_hash: string;
  block_timestamp: Timestamp;
  transaction_index: number;
  inserted_by_run: BigintColumn;
  updated_by_run: BigintColumn;
}

export interface TokenTransfersRemovedTable extends TokenTransfersTable {
  id: Generated<string>;
  removed_by_run: BigintColumn;
  removed_at: Timestamp;
}

export interface BlockHeadersTable {
  chain_id: ChainId;
  hash: string;
  number: BigintColumn;
  parent_hash: string;
  sha3_uncles: string;
  miner: string;
  state_root: string;
  transactions_root: string;
  receipts_root: string;
  logs_bloom: string;
  difficulty: Numeric;
  gas_limit: Numeric;
  gas_used: Numeric;
  timestamp: BigintColumn;
  extra_data: string;
  /** Null where the chain's header has none (Gnosis under AuRa: `step` and `signature`, in extra_fields). */
  mix_hash: string | null;
  nonce: string | null;
  base_fee_per_gas: Numeric | null;
  withdrawals_root: string | null;
  blob_gas_used: Numeric | null;
  excess_blob_gas: Numeric | null;
  parent_beacon_block_root: string | null;
  requests_hash: string | null;
  block_access_list_hash: string | null;
  hash_verified: boolean;
  /** Why a header is stored unverified (its chain's rule is unknown, or fields cannot be hashed); null when verified. */
  unverified_reason: string | null;
  extra_fields: ColumnType<unknown, string | null, string | null> | null;
  canonical: Generated<boolean>;
  fetched_by_run: BigintColumn | null;
  fetched_at: Generated<Date>;
}

export interface TokensTable {
  chain_id: ChainId;
  contract_address: string;
  name: string | null;
  symbol: string | null;
  decimals: number | null;
  updated_by_run: BigintColumn | null;
  updated_at: Generated<Date>;
}

export type RunStatus = 'running' | 'succeeded' | 'failed';

export interface ExportRunsTable {
  id: Generated<string>;
  /** The chain the run's job is for (EIP-155 id). */
  chain_id: ChainId;
  job: string;
  command: string;
  contracts: string[];
  from_block: BigintColumn | null;
  to_block: BigintColumn | null;
  status: Generated<RunStatus>;
  started_at: Generated<Date>;
  finished_at: Date | null;
  rows_inserted: Generated<string>;
  rows_updated: Generated<string>;
  rows_unchanged: Generated<string>;
  rows_removed: Generated<string>;
  api_requests: Generated<string>;
  retries: Generated<string>;
  rate_limited: Generated<string>;
  headers_fetched: Generated<string>;
  error: string | null;
}

export interface ExportRangesTable {
  id: Generated<string>;
  chain_id: ChainId;
  job: string;
  contract_address: string;
  from_block: BigintColumn;
  to_block: BigintColumn;
  status: Generated<'open' | 'complete'>;
  created_by_run: BigintColumn;
  created_at: Generated<Date>;
  completed_at: Date | null;
}

export interface ExportChunksTable {
  id: Generated<string>;
  /** Its range's chain. */
  chain_id: ChainId;
  range_id: BigintColumn;
  from_block: BigintColumn;
  to_block: BigintColumn;
  page_key: string | null;
  resume_to_block: BigintColumn | null;
  pages: Generated<number>;
  rows: Generated<string>;
  done: Generated<boolean>;
  /** Its blocks held no transfer of the contract when it started: pages COPY straight in (null: not decided yet). */
  fresh: ColumnType<boolean | null, boolean | null | undefined, boolean | null>;
  /** Keys of the rows committed so far in the chunk's lowest committed block, which its next page may go on with. */
  open_hashes: ColumnType<string[], string[] | undefined, string[]>;
  open_log_indexes: ColumnType<number[], number[] | undefined, number[]>;
  /** The first block of the query its page key belongs to, when it gave its lower blocks away (migration 0006). */
  query_from_block: ColumnType<string | null, string | number | bigint | null | undefined, string | number | bigint | null>;
  updated_at: Generated<Date>;
}

/** Rows in blocks a page covered alone that the page did not hold: moved when the range is reconciled. */
export interface ExportMissingTable {
  range_id: BigintColumn;
  /** Its range's chain. */
  chain_id: ChainId;
  transaction_hash: string;
  log_index: number;
  block_number: BigintColumn;
}

export interface ExportCoverageTable {
  id: Generated<string>;
  chain_id: ChainId;
  job: string;
  contract_address: string;
  from_block: BigintColumn;
  to_block: BigintColumn;
  row_count: BigintColumn;
  run_id: BigintColumn;
  completed_at: Generated<Date>;
}

/** The next free request slot of an API's shared requests-per-second limit (keyed by a digest of its URL). */
export interface ApiRateLimitsTable {
  key: string;
  next_at: Date;
}

export interface Database {
  token_transfers: TokenTransfersTable;
  token_transfers_removed: TokenTransfersRemovedTable;
  block_headers: BlockHeadersTable;
  tokens: TokensTable;
  export_runs: ExportRunsTable;
  export_ranges: ExportRangesTable;
  export_chunks: ExportChunksTable;
  export_missing: ExportMissingTable;
  export_coverage: ExportCoverageTable;
  api_rate_limits: ApiRateLimitsTable;
  worker_heartbeats: WorkerHeartbeatsTable;
  logs_ranges: LogsRangesTable;
  export_run_skipped_logs: ExportRunSkippedLogsTable;
  export_run_rows: ExportRunRowsTable;
  deferred_indexes: DeferredIndexesTable;
  paused_autovacuum: PausedAutovacuumTable;
}

/** A lookup index of token_transfers a first load dropped, to build after its rows (migration 0013). */
export interface DeferredIndexesTable {
  name: string;
  /** The index as `pg_get_indexdef` printed it when it was dropped: the statement that builds it again. */
  definition: string;
  run_id: BigintColumn | null;
  dropped_at: Generated<Date>;
}

/** Autovacuum a first load paused on a table while its lookup indexes are dropped (migration 0014). */
export interface PausedAutovacuumTable {
  table_name: string;
  run_id: BigintColumn | null;
  paused_at: Generated<Date>;
}

/** The `eth_getLogs` range a node source learned, per job and endpoint host, never the URL (migration 0007). */
export interface LogsRangesTable {
  chain_id: ChainId;
  job: string;
  endpoint_host: string;
  blocks: number;
  /**
   * A block limit the provider does not state, as a run met it and it still held at its end: the least span refused as
   * too wide, so above the true limit (migration 0012).
   */
  block_limit: number | null;
  /** Answers since `block_limit` was met or last asked again: it is asked again at 100, counted across runs. */
  block_limit_answers: Generated<number>;
  run_id: BigintColumn | null;
  updated_at: Generated<Date>;
}

/** Logs with the Transfer topic a run skipped as not ERC-20 transfers, per contract (migration 0007). */
export interface ExportRunSkippedLogsTable {
  run_id: BigintColumn;
  contract_address: string;
  erc721: BigintColumn;
  other: BigintColumn;
}

/** The rows a run's pages wrote in one chunk, added in the pages' own transactions (migration 0010). */
export interface ExportRunRowsTable {
  run_id: BigintColumn;
  chunk_id: BigintColumn;
  rows_inserted: Generated<string>;
  rows_updated: Generated<string>;
  rows_unchanged: Generated<string>;
}

/** A live worker's graphile-worker id, when it last said so and its lease (migrations 0005, 0011). */
export interface WorkerHeartbeatsTable {
  worker_id: string;
  host: string;
  pid: number;
  seen_at: Generated<Date>;
  /** The worker's own `--dead-after`, by which it is judged (migration 0011; null for workers started before it). */
  lease_seconds: number | null;
}
