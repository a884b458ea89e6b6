import type pg from 'pg';
import type { TransferRecord } from '../dataset/types.ts';
import { copyTransfers, TRANSFER_COLUMNS } from './copy.ts';

/** Where a chunk stands after a page: committed together with the page's rows. */
export interface ChunkCheckpoint {
  /** The key of the next page, or null when the chunk is read to its end. */
  pageKey: string | null;
  /** The lowest block committed so far: a chunk whose page key is refused restarts from it, inclusive. */
  resumeToBlock: number | null;
  done: boolean;
}

export interface PageLoad {
  runId: string;
  rangeId: string;
  chunkId: string;
  contract: string;
  rows: readonly TransferRecord[];
  /**
   * `copy`: the chunk's blocks held no row when it started, so the page COPYs straight into token_transfers
   * (a row that is there after all fails it with AlreadyLoadedError, and the page is merged instead).
   * `merge`: rows are compared with what the warehouse holds, and only new or changed ones are written.
   */
  mode: 'copy' | 'merge';
  /** Blocks the page covers alone: warehouse rows there that the page lacks are recorded as missing. */
  interior: { fromBlock: number; toBlock: number } | null;
  /** Blocks the page shares with a neighbour page: its rows there are recorded as seen. */
  edges: readonly number[];
  checkpoint: ChunkCheckpoint;
}

export interface MergeCounts {
  inserted: number;
  updated: number;
  unchanged: number;
}

const DATA_COLUMNS = TRANSFER_COLUMNS.filter((c) => c !== 'transaction_hash' && c !== 'log_index');
const COLUMN_LIST = TRANSFER_COLUMNS.join(', ');
const TUPLE = (alias: string) => `(${DATA_COLUMNS.map((c) => `${alias}.${c}`).join(', ')})`;

const STAGING = 'erc20_etl_staging';
const CREATE_STAGING = `
  CREATE TEMP TABLE IF NOT EXISTS ${STAGING} (
    transaction_hash text, log_index integer, contract_address text, from_address text, to_address text,
    value numeric(78,0), block_number bigint, block_hash text, block_timestamp timestamptz, transaction_index integer
  ) ON COMMIT DELETE ROWS`;

// Only new or changed rows reach the upsert: an unchanged row is neither rewritten nor even locked.
const MERGE = `
  WITH changed AS (
    SELECT s.* FROM ${STAGING} s
    LEFT JOIN token_transfers t USING (transaction_hash, log_index)
    WHERE t.transaction_hash IS NULL OR ${TUPLE('t')} IS DISTINCT FROM ${TUPLE('s')}
  ), merged AS (
    INSERT INTO token_transfers AS t (${COLUMN_LIST}, inserted_by_run, updated_by_run)
    SELECT ${COLUMN_LIST}, $1, $1 FROM changed
    ORDER BY transaction_hash, log_index -- one lock order for every writer: concurrent jobs cannot deadlock on it
    ON CONFLICT (transaction_hash, log_index) DO UPDATE SET
      ${DATA_COLUMNS.map((c) => `${c} = EXCLUDED.${c}`).join(', ')}, updated_by_run = EXCLUDED.updated_by_run
    WHERE ${TUPLE('t')} IS DISTINCT FROM ${TUPLE('EXCLUDED')}
    RETURNING (xmax = 0) AS inserted
  )
  SELECT count(*) FILTER (WHERE inserted)::int AS inserted, count(*) FILTER (WHERE NOT inserted)::int AS updated FROM merged`;

const RECORD_SEEN = `
  INSERT INTO export_seen (range_id, transaction_hash, log_index, block_number)
  SELECT $1, * FROM unnest($2::text[], $3::int[], $4::bigint[])
  ON CONFLICT DO NOTHING`;

// Rows of the blocks the page covers alone that it did not hold: found through the contract/block index,
// compared with the staged page by hash (a page is small; a nested scan of the unindexed staging table is not)
const RECORD_MISSING = `
  INSERT INTO export_missing (range_id, transaction_hash, log_index, block_number)
  SELECT $1, t.transaction_hash, t.log_index, t.block_number FROM token_transfers t
  WHERE t.contract_address = $2 AND t.block_number BETWEEN $3 AND $4
    AND NOT EXISTS (SELECT 1 FROM ${STAGING} s WHERE s.transaction_hash = t.transaction_hash AND s.log_index = t.log_index)
  ON CONFLICT DO NOTHING`;

const CHECKPOINT = `
  UPDATE export_chunks
  SET page_key = $2, resume_to_block = $3, done = $4, pages = pages + 1, rows = rows + $5, updated_at = now()
  WHERE id = $1`;

// The staging table is never analyzed and token_transfers' statistics lag behind a large load: left to
// itself the planner may join a page by scanning all of token_transfers. A page is at most 1000 rows,
// so probing the primary key once per staged row is always right (and never worth compiling: no JIT).
// A page's commit need not wait for its WAL to reach the disk: if PostgreSQL crashes, the pages it loses
// lose their checkpoints with them, and the next run reads them again. Whatever ends a run (reconciliation,
// the ledger) commits synchronously, which also flushes every page committed before it.
const PAGE_TRANSACTION = 'BEGIN; SET LOCAL synchronous_commit = off; SET LOCAL jit = off';
const BEGIN_MERGE = `${PAGE_TRANSACTION}; SET LOCAL enable_hashjoin = off; SET LOCAL enable_mergejoin = off; SET LOCAL enable_seqscan = off`;
const HASH_AGAINST_PAGE = 'SET LOCAL enable_hashjoin = on; SET LOCAL enable_nestloop = off';
const BEGIN_COPY = PAGE_TRANSACTION;
const UNIQUE_VIOLATION = '23505';

/** A fresh chunk's page met a row the warehouse already holds (another job, or a re-read block): merge it. */
export class AlreadyLoadedError extends Error {
  constructor(options?: ErrorOptions) {
    super('a row of the page is in token_transfers already; merging the page instead of copying it', options);
    this.name = 'AlreadyLoadedError';
  }
}

const prepared = new WeakSet<pg.PoolClient>();

/**
 * Loads one page in one transaction and moves the chunk's checkpoint with it, so a crash loses at most
 * this page: the rows (COPY straight in, or through a staging table merged with `ON CONFLICT … DO UPDATE …
 * WHERE` the row changed), the keys of its edge blocks, and the rows its interior blocks no longer hold.
 *
 * @example await loadPage(client, { runId, rangeId, chunkId, contract, rows, mode: 'merge', interior, edges, checkpoint })
 * // → { inserted: 0, updated: 2, unchanged: 998 }
 */
export async function loadPage(client: pg.PoolClient, load: PageLoad): Promise<MergeCounts> {
  if (load.mode === 'merge' && !prepared.has(client)) {
    await client.query(CREATE_STAGING);
    prepared.add(client);
  }
  await client.query(load.mode === 'copy' ? BEGIN_COPY : BEGIN_MERGE);
  try {
    let counts: MergeCounts;
    if (load.mode === 'copy') {
      await copyTransfers(client, 'token_transfers', load.rows, ['inserted_by_run', 'updated_by_run'], `${load.runId}\t${load.runId}`);
      counts = { inserted: load.rows.length, updated: 0, unchanged: 0 };
    } else {
      await copyTransfers(client, STAGING, load.rows);
      const merged = await client.query<{ inserted: number; updated: number }>(MERGE, [load.runId]);
      const { inserted, updated } = merged.rows[0] ?? { inserted: 0, updated: 0 };
      counts = { inserted, updated, unchanged: load.rows.length - inserted - updated };
      if (load.interior) {
        await client.query(HASH_AGAINST_PAGE);
        await client.query(RECORD_MISSING, [load.rangeId, load.contract, load.interior.fromBlock, load.interior.toBlock]);
      }
    }
    const edgeRows = load.rows.filter((r) => load.edges.includes(r.blockNumber));
    if (edgeRows.length) {
      await client.query(RECORD_SEEN, [load.rangeId, edgeRows.map((r) => r.transactionHash), edgeRows.map((r) => r.logIndex), edgeRows.map((r) => r.blockNumber)]);
    }
    const { pageKey, resumeToBlock, done } = load.checkpoint;
    await client.query(CHECKPOINT, [load.chunkId, pageKey, resumeToBlock, done, load.rows.length]);
    await client.query('COMMIT');
    return counts;
  } catch (err) {
    await client.query('ROLLBACK').catch(() => undefined);
    if (load.mode === 'copy' && (err as { code?: string }).code === UNIQUE_VIOLATION) throw new AlreadyLoadedError({ cause: err });
    throw err;
  }
}
