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
  rows: readonly TransferRecord[];
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
  INSERT INTO export_seen (range_id, transaction_hash, log_index)
  SELECT $1, transaction_hash, log_index FROM ${STAGING}
  ON CONFLICT DO NOTHING`;

const CHECKPOINT = `
  UPDATE export_chunks
  SET page_key = $2, resume_to_block = $3, done = $4, pages = pages + 1, rows = rows + $5, updated_at = now()
  WHERE id = $1`;

// The staging table is never analyzed and token_transfers' statistics lag behind a large load: left to
// itself the planner may join a page by scanning all of token_transfers. A page is at most 1000 rows,
// so probing the primary key once per staged row is always right (and never worth compiling: no JIT).
const BEGIN_PAGE = 'BEGIN; SET LOCAL enable_hashjoin = off; SET LOCAL enable_mergejoin = off; SET LOCAL enable_seqscan = off; SET LOCAL jit = off';

const prepared = new WeakSet<pg.PoolClient>();

/**
 * Loads one page in one transaction: COPY into a temp staging table, merge into token_transfers
 * (`ON CONFLICT … DO UPDATE … WHERE` the row changed), remember the keys seen for the range's
 * reconciliation, and move the chunk's checkpoint. A crash loses at most this page.
 *
 * @example await loadPage(client, { runId, rangeId, chunkId, rows, checkpoint }) // → { inserted: 1000, updated: 0, unchanged: 0 }
 */
export async function loadPage(client: pg.PoolClient, load: PageLoad): Promise<MergeCounts> {
  if (!prepared.has(client)) {
    await client.query(CREATE_STAGING);
    prepared.add(client);
  }
  await client.query(BEGIN_PAGE);
  try {
    await copyTransfers(client, STAGING, load.rows);
    const merged = await client.query<{ inserted: number; updated: number }>(MERGE, [load.runId]);
    await client.query(RECORD_SEEN, [load.rangeId]);
    const { pageKey, resumeToBlock, done } = load.checkpoint;
    await client.query(CHECKPOINT, [load.chunkId, pageKey, resumeToBlock, done, load.rows.length]);
    await client.query('COMMIT');
    const { inserted, updated } = merged.rows[0] ?? { inserted: 0, updated: 0 };
    return { inserted, updated, unchanged: load.rows.length - inserted - updated };
  } catch (err) {
    await client.query('ROLLBACK').catch(() => undefined);
    throw err;
  }
}
