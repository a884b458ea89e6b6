import { NO_BUDGET, type TimeBudget } from '../common/time-budget.ts';
import type pg from 'pg';
import type { TransferKey, TransferRecord } from '../dataset/types.ts';
import { EtlError, FatalError } from '../common/errors.ts';
import { copyTransfers, TRANSFER_COLUMNS } from './copy.ts';
import { DIGEST_SETTINGS, pageDigest, WAREHOUSE_DIGEST, warehouseDigestParams } from './page-digest.ts';

/** Where a chunk stands after a page: committed together with the page's rows. */
export interface ChunkCheckpoint {
  /** The key of the next page, or null when the chunk is read to its end. */
  pageKey: string | null;
  /** The lowest block committed so far: a chunk whose page key is refused restarts from it, inclusive. */
  resumeToBlock: number | null;
  done: boolean;
  /** Keys of the rows committed so far in block `resumeToBlock`, which the next page may go on with. */
  openKeys: readonly TransferKey[];
}

export interface PageLoad {
  runId: string;
  /** The chain the rows are of (their range's). */
  chainId: number;
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
  /**
   * Blocks whose rows are all known once this page is in: warehouse rows of the contract there that are
   * neither the page's nor `carried` are recorded as missing.
   */
  interior: { fromBlock: number; toBlock: number } | null;
  /** Keys earlier pages of the chunk committed in the interior's highest block. */
  carried: readonly TransferKey[];
  /** The page's rows in the block it leaves open (below the interior). */
  openRows: readonly TransferRecord[];
  /**
   * Where the chunk stands before the page (the checkpoint of the page before it, or the chunk's as read): the page
   * moves the chunk only from there. A chunk found anywhere else was moved by another writer (a worker that took it
   * over while this one was stuck, say): the page is not written, and `ChunkMovedError` stops its chunk.
   */
  start: ChunkCheckpoint;
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

// Only new or changed rows reach the upsert: an unchanged row is neither rewritten nor even locked. $1 run, $2 chain.
const MERGE = `
  WITH changed AS (
    SELECT s.* FROM ${STAGING} s
    LEFT JOIN token_transfers t ON t.chain_id = $2 AND t.transaction_hash = s.transaction_hash AND t.log_index = s.log_index
    WHERE t.transaction_hash IS NULL OR ${TUPLE('t')} IS DISTINCT FROM ${TUPLE('s')}
  ), merged AS (
    INSERT INTO token_transfers AS t (chain_id, ${COLUMN_LIST}, inserted_by_run, updated_by_run)
    SELECT $2, ${COLUMN_LIST}, $1, $1 FROM changed
    ORDER BY transaction_hash, log_index -- one lock order for every writer: concurrent jobs cannot deadlock on it
    ON CONFLICT (chain_id, transaction_hash, log_index) DO UPDATE SET
      ${DATA_COLUMNS.map((c) => `${c} = EXCLUDED.${c}`).join(', ')}, updated_by_run = EXCLUDED.updated_by_run
    WHERE ${TUPLE('t')} IS DISTINCT FROM ${TUPLE('EXCLUDED')}
    RETURNING (xmax = 0) AS inserted
  )
  SELECT count(*) FILTER (WHERE inserted)::int AS inserted, count(*) FILTER (WHERE NOT inserted)::int AS updated FROM merged`;

// Rows of the blocks the page completes that neither it nor an earlier page of the chunk held: found through
// the contract/block index, compared with the staged page and the carried keys by hash (a page is small; a
// nested scan of the unindexed staging table is not)
const RECORD_MISSING = `
  INSERT INTO export_missing (range_id, chain_id, transaction_hash, log_index, block_number)
  SELECT $1, $7, t.transaction_hash, t.log_index, t.block_number FROM token_transfers t
  WHERE t.chain_id = $7 AND t.contract_address = $2 AND t.block_number BETWEEN $3 AND $4
    AND NOT EXISTS (SELECT 1 FROM ${STAGING} s WHERE s.transaction_hash = t.transaction_hash AND s.log_index = t.log_index)
    AND NOT EXISTS (
      SELECT 1 FROM unnest($5::text[], $6::int[]) AS c (transaction_hash, log_index)
      WHERE c.transaction_hash = t.transaction_hash AND c.log_index = t.log_index)
  ON CONFLICT DO NOTHING`;

/** A chunk position's five values as SQL (parameters, or the columns of a row of moves). */
interface PositionSql {
  pageKey: string;
  resumeToBlock: string;
  done: string;
  openHashes: string;
  openLogIndexes: string;
}

/** Whether the export_chunks row (`row`: its alias and a dot, if any) stands at the position `at` already. */
const AT_POSITION = (at: PositionSql, row = '') =>
  `(${row}page_key, ${row}resume_to_block, ${row}done, ${row}open_hashes, ${row}open_log_indexes) IS NOT DISTINCT FROM (${at.pageKey}::text, ${at.resumeToBlock}::bigint, ${at.done}::boolean, ${at.openHashes}::text[], ${at.openLogIndexes}::integer[])`;

/**
 * The SET of a chunk's move to `to` over `pages` pages and `rows` rows, for the rows of `before` that move (`WHERE
 * before.moves`).
 */
const MOVE_SET = (to: PositionSql & { pages: string; rows: string }, row = '') =>
  `page_key = ${to.pageKey}, resume_to_block = ${to.resumeToBlock}, done = ${to.done}, pages = ${row}pages + ${to.pages}, rows = ${row}rows + ${to.rows},
    open_hashes = ${to.openHashes}, open_log_indexes = ${to.openLogIndexes}, updated_at = now()`;

/**
 * What a statement that moves a chunk from `start` to `to` reads of its locked row (`row`: its alias and a dot):
 * `stays`, it stands at `to` already (its pages committed before, and a COMMIT's answer was lost, or another writer
 * wrote the same pages); `moves`, it stands at `start`, where its pages begin; neither, another writer moved it
 * elsewhere. Only a chunk that moves is moved and counted, in its `pages` and `rows` and in its run, so pages written
 * again count once, and a writer whose chunk went on without it never moves it back.
 */
const WHERE_IT_STANDS = (start: PositionSql, to: PositionSql, row = '') => `${AT_POSITION(to, row)} AS stays, ${AT_POSITION(start, row)} AND NOT ${AT_POSITION(to, row)} AS moves`;

/**
 * Adds to run `run`'s rows in export_run_rows the counts of each chunk of the statement's `before` that moves (`rows`:
 * its chunk and counts, as SQL), in the transaction that moves the chunk: what a run wrote is exact whenever its pages
 * are committed, whatever happens to its process afterwards. Only the chunk's writer holds its row's lock; of the run's row, shared by every
 * chunk and worker, a new (run, chunk) row takes only the foreign key's share lock (`FOR KEY SHARE`), which neither
 * the ledger's updates of the run's counts nor other pages wait on.
 */
const ADD_RUN_ROWS = (run: string, rows: { chunk: string; inserted: string; updated: string; unchanged: string }) => `
  INSERT INTO export_run_rows AS r (run_id, chunk_id, rows_inserted, rows_updated, rows_unchanged)
  SELECT ${run}, ${rows.chunk}, ${rows.inserted}, ${rows.updated}, ${rows.unchanged} FROM before WHERE moves
  ON CONFLICT (run_id, chunk_id) DO UPDATE SET rows_inserted = r.rows_inserted + EXCLUDED.rows_inserted,
    rows_updated = r.rows_updated + EXCLUDED.rows_updated, rows_unchanged = r.rows_unchanged + EXCLUDED.rows_unchanged`;

// Each statement that moves chunks locks their rows first (`before`, the newest version, in id order) and reads there
// where each one stands (WHERE_IT_STANDS). Reading the locked row, not the statement's snapshot, two writers of one
// page (a retry while a first attempt still runs) count it once.

const POSITION = { pageKey: '$2', resumeToBlock: '$3', done: '$4', openHashes: '$6', openLogIndexes: '$7' };
const START = { pageKey: '$8', resumeToBlock: '$9', done: '$10', openHashes: '$11', openLogIndexes: '$12' };
// $1–$12 the chunk's move (`checkpointValues`), $13 the run, $14–$16 the page's rows inserted, updated, unchanged;
// answers whether another writer moved the chunk elsewhere
const CHECKPOINT = `
  WITH before AS MATERIALIZED (SELECT ${WHERE_IT_STANDS(START, POSITION)} FROM export_chunks WHERE id = $1 FOR UPDATE),
  moved AS (
    UPDATE export_chunks c
    SET ${MOVE_SET({ ...POSITION, pages: '1', rows: '$5' }, 'c.')}
    FROM before WHERE c.id = $1 AND before.moves
  ), counted AS (${ADD_RUN_ROWS('$13', { chunk: '$1', inserted: '$14', updated: '$15', unchanged: '$16' })})
  SELECT NOT (stays OR moves) AS elsewhere FROM before`;

// A re-run's page in one statement, its own transaction: the checkpoint moves only if the warehouse's digest
// of the page is the exporter's ($21); its rows count as unchanged in run $22. Held: the warehouse holds the page
// and the chunk stands after it now. A chunk moved elsewhere is left to the merge (which says so).
const HELD_POSITION = { pageKey: '$10', resumeToBlock: '$11', done: '$12', openHashes: '$14', openLogIndexes: '$15' };
const HELD_START = { pageKey: '$16', resumeToBlock: '$17', done: '$18', openHashes: '$19', openLogIndexes: '$20' };
const CHECKPOINT_IF_HELD = `
  WITH warehouse AS (${WAREHOUSE_DIGEST}), before AS MATERIALIZED (
    SELECT ${WHERE_IT_STANDS(HELD_START, HELD_POSITION)} FROM export_chunks WHERE id = $9 AND (SELECT digest FROM warehouse) = $21 FOR UPDATE
  ), moved AS (
    UPDATE export_chunks c
    SET ${MOVE_SET({ ...HELD_POSITION, pages: '1', rows: '$13' }, 'c.')}
    FROM before WHERE c.id = $9 AND before.moves
  ), counted AS (${ADD_RUN_ROWS('$22', { chunk: '$9', inserted: '0', updated: '0', unchanged: '$13' })})
  SELECT EXISTS (SELECT 1 FROM before WHERE stays OR moves) AS held`;

// The settings of a connection while it loads pages (set once, reset when the chunk gives it back):
// - The staging table is never analyzed and token_transfers' statistics lag behind a large load: left to
//   itself the planner may join a page by scanning all of token_transfers. A page is at most 1000 rows,
//   so probing the primary key once per row is always right (and never worth compiling: no JIT).
// - A page's commit need not wait for its WAL to reach the disk: if PostgreSQL crashes, the pages it loses
//   lose their checkpoints with them, and the next run reads them again. Whatever ends a run
//   (reconciliation, the ledger) commits synchronously on other connections, which also flushes every page
//   committed before it.
const PAGE_SETTINGS = ['synchronous_commit = off', 'jit = off', ...DIGEST_SETTINGS, 'enable_hashjoin = off', 'enable_mergejoin = off', 'enable_seqscan = off'];
// ...and which backend it is (`BackendSession`), in the same round trip
const PAGE_SESSION = `${PAGE_SETTINGS.map((s) => `SET ${s}`).join('; ')}; ${CREATE_STAGING};
  SELECT pid, backend_start::text AS started FROM pg_stat_activity WHERE pid = pg_backend_pid()`;
const HASH_AGAINST_PAGE = 'SET LOCAL enable_hashjoin = on; SET LOCAL enable_nestloop = off';
const UNIQUE_VIOLATION = '23505';

/**
 * What stops a chunk's writer at once because writing its pages again could count them twice: fatal to the writer
 * (no retry of the page), and safe for a task that starts the chunk anew from where the warehouse has it (a worker's
 * task is tried again: `taskTriedAgain`). `chunks` in the message as `chunk 7` or `chunks 7, 8`.
 */
export class ChunkStoppedError extends FatalError {
  constructor(
    readonly chunks: readonly string[],
    message: (chunks: string) => string,
    cause?: unknown,
  ) {
    super(message(chunks.length === 1 ? `chunk ${chunks[0]}` : `chunks ${chunks.join(', ')}`), { cause, details: { chunks } });
  }
}

/**
 * A page's chunk does not stand where the page begins, nor where it ends: another writer moved it (a worker that took
 * the chunk over while this one was stuck). Nothing of the page is written, and its chunk stops here, since the other
 * writer reads it on.
 */
export class ChunkMovedError extends ChunkStoppedError {
  constructor(chunks: readonly string[]) {
    super(
      chunks,
      (which) =>
        `The ${which} moved on without this writer (another worker or run took it over while this one was held up): its page was not written, and this writer stops reading it. What was committed stays; the chunk goes on where the other writer is.`,
    );
  }
}

/** A fresh chunk's page met a row the warehouse already holds (another job, or a re-read block): merge it. */
export class AlreadyLoadedError extends EtlError {
  constructor(options?: { cause?: unknown }) {
    super('a row of the page is in token_transfers already; merging the page instead of copying it', options);
  }
}

/**
 * A page's COMMIT failed, which may mean its answer was lost with the connection after it committed: `counts` are
 * what the page did if it committed (`committedAnyway` tells), `cause` is pg's error.
 */
export class CommitFailedError extends EtlError {
  constructor(
    readonly counts: MergeCounts,
    cause: unknown,
  ) {
    super(`the COMMIT of a page failed: ${(cause as Error)?.message ?? String(cause)}`, { cause });
  }
}

/**
 * A server process by its id and start time (an id alone may name a later process once it ended): what ends the
 * backend of a connection the exporter lost (`lost-backend.ts`).
 */
export interface BackendSession {
  pid: number;
  /** `backend_start` as text, with its offset. */
  started: string;
}

/** The connections in a page session, with their backend (null if the server did not show it). */
const sessions = new WeakMap<pg.PoolClient, BackendSession | null>();

/** A page's rows (newest first, as the API serves them) in chain order, without copying them. */
function* oldestFirst<T>(rows: readonly T[]): Generator<T> {
  for (let i = rows.length - 1; i >= 0; i--) yield rows[i]!;
}

/**
 * Sets a connection up to load pages (once: it keeps the settings until `endPageSession`); resolves to its backend,
 * undefined if the server did not show it.
 */
export async function beginPageSession(client: pg.PoolClient): Promise<BackendSession | undefined> {
  const known = sessions.get(client);
  if (known !== undefined) return known ?? undefined;
  // several statements in one query: pg answers with one result per statement
  const results = (await client.query(PAGE_SESSION)) as unknown as pg.QueryResult<{ pid: number; started: string }>[];
  const row = results.at(-1)?.rows[0];
  const backend = row ? { pid: row.pid, started: row.started } : null;
  sessions.set(client, backend);
  return backend ?? undefined;
}

/** The first twelve parameters of CHECKPOINT (and CHECKPOINT_IF_HELD's $9–$20): the chunk's move over one page (`chunkMoves`), then where it starts. */
function checkpointValues(load: Pick<PageLoad, 'chunkId' | 'rows' | 'start' | 'checkpoint'>): unknown[] {
  const m = chunkMoves([load])[0]!;
  return [
    m.id,
    m.page_key,
    m.resume_to_block,
    m.done,
    m.rows,
    m.open_hashes,
    m.open_log_indexes,
    m.from_page_key,
    m.from_resume_to_block,
    m.from_done,
    m.from_open_hashes,
    m.from_open_log_indexes,
  ];
}

/** A chunk's position before and after the pages of a transaction, with the pages and rows they added. */
export interface ChunkMove {
  id: string;
  from_page_key: string | null;
  from_resume_to_block: number | null;
  from_done: boolean;
  from_open_hashes: string[];
  from_open_log_indexes: number[];
  page_key: string | null;
  resume_to_block: number | null;
  done: boolean;
  pages: number;
  rows: number;
  open_hashes: string[];
  open_log_indexes: number[];
}

/**
 * The checkpoints of a transaction that holds these pages (of one or more chunks, each chunk's in order): one per
 * chunk, from the position before its first page there to the one after its last, with its pages and rows counted.
 * Pure.
 *
 * @example chunkMoves([p1OfChunk7, p2OfChunk7, p1OfChunk8]) // → [{ id: '7', from_page_key: <p1's start>, page_key: <p2's>, …, pages: 2 }, { id: '8', …, pages: 1 }]
 */
export function chunkMoves(loads: readonly Pick<PageLoad, 'chunkId' | 'rows' | 'start' | 'checkpoint'>[]): ChunkMove[] {
  const byChunk = new Map<string, ChunkMove>();
  for (const { chunkId, rows, start, checkpoint } of loads) {
    const move = byChunk.get(chunkId) ?? {
      id: chunkId,
      from_page_key: start.pageKey,
      from_resume_to_block: start.resumeToBlock,
      from_done: start.done,
      from_open_hashes: start.openKeys.map((k) => k.transactionHash),
      from_open_log_indexes: start.openKeys.map((k) => k.logIndex),
      page_key: null,
      resume_to_block: null,
      done: false,
      pages: 0,
      rows: 0,
      open_hashes: [],
      open_log_indexes: [],
    };
    move.page_key = checkpoint.pageKey;
    move.resume_to_block = checkpoint.resumeToBlock;
    move.done = checkpoint.done;
    move.open_hashes = checkpoint.openKeys.map((k) => k.transactionHash);
    move.open_log_indexes = checkpoint.openKeys.map((k) => k.logIndex);
    move.pages++;
    move.rows += rows.length;
    byChunk.set(chunkId, move);
  }
  return [...byChunk.values()];
}

// `chunkMoves` as JSON ($1), as rows
const MOVES = `jsonb_to_recordset($1::jsonb) AS m (
    id bigint, from_page_key text, from_resume_to_block bigint, from_done boolean, from_open_hashes text[], from_open_log_indexes integer[],
    page_key text, resume_to_block bigint, done boolean, pages integer, rows bigint, open_hashes text[], open_log_indexes integer[])`;
const MOVE_FROM = {
  pageKey: 'm.from_page_key',
  resumeToBlock: 'm.from_resume_to_block',
  done: 'm.from_done',
  openHashes: 'm.from_open_hashes',
  openLogIndexes: 'm.from_open_log_indexes',
};
const MOVE_TO = {
  pageKey: 'm.page_key',
  resumeToBlock: 'm.resume_to_block',
  done: 'm.done',
  pages: 'm.pages',
  rows: 'm.rows',
  openHashes: 'm.open_hashes',
  openLogIndexes: 'm.open_log_indexes',
};

// Every chunk of a transaction of the group writer moved in one statement, and the rows of those that move (all
// inserted: COPY) added to run $2; answers the chunks another writer moved elsewhere
const MOVE_CHUNKS = `
  WITH moves AS MATERIALIZED (SELECT * FROM ${MOVES}), before AS MATERIALIZED (
    SELECT c.id, ${WHERE_IT_STANDS(MOVE_FROM, MOVE_TO, 'c.')}, m.rows FROM export_chunks c JOIN moves m ON c.id = m.id ORDER BY c.id FOR UPDATE OF c
  ), moved AS (
    UPDATE export_chunks c
    SET ${MOVE_SET(MOVE_TO, 'c.')}
    FROM moves m JOIN before b ON b.id = m.id
    WHERE c.id = m.id AND b.moves
  ), counted AS (${ADD_RUN_ROWS('$2', { chunk: 'id', inserted: 'rows', updated: '0', unchanged: '0' })})
  SELECT id::text FROM before WHERE NOT (stays OR moves)`;

// How many chunks of `chunkMoves` are at the position it moves them to
const CHUNKS_MOVED = `SELECT count(*)::int AS n FROM export_chunks c JOIN ${MOVES} ON c.id = m.id WHERE ${AT_POSITION(MOVE_TO, 'c.')}`;

/**
 * Moves the chunks of these pages, all of one run (a group writer's), to their checkpoints (`chunkMoves`) in one
 * statement, in the caller's open transaction (the group writer's, after its COPY has ended and before its COMMIT),
 * and adds the rows of the chunks that move to the run. One statement locks its chunks in id order: two of them
 * cannot deadlock, where one per run in a transaction could.
 */
export async function moveChunks(client: pg.PoolClient, loads: readonly Pick<PageLoad, 'runId' | 'chunkId' | 'rows' | 'start' | 'checkpoint'>[]): Promise<void> {
  const runId = loads[0]?.runId;
  if (runId === undefined) return;
  if (loads.some((l) => l.runId !== runId)) throw new Error('moveChunks: the pages of one transaction must be of one run');
  const { rows } = await client.query<{ id: string }>(MOVE_CHUNKS, [JSON.stringify(chunkMoves(loads)), runId]);
  if (rows.length) throw new ChunkMovedError(rows.map((r) => r.id));
}

/**
 * Whether every chunk of these pages stands at the position after its last page among them: a transaction that held
 * them and their checkpoints committed (a chunk's position only moves on, so before it, none was there). Asks on a
 * pool connection of its own.
 */
export async function chunksMoved(pool: pg.Pool, loads: readonly Pick<PageLoad, 'chunkId' | 'rows' | 'start' | 'checkpoint'>[]): Promise<boolean> {
  const moves = chunkMoves(loads);
  const { rows } = await pool.query<{ n: number }>(CHUNKS_MOVED, [JSON.stringify(moves)]);
  return rows[0]?.n === moves.length;
}

/** Gives a connection that loaded pages its default settings back, before it returns to the pool. */
export async function endPageSession(client: pg.PoolClient): Promise<void> {
  if (sessions.delete(client)) await client.query('RESET ALL');
}

/**
 * Loads one page in one transaction and moves the chunk's checkpoint with it, so a crash loses at most
 * this page: the rows (COPY straight in, or through a staging table merged with `ON CONFLICT … DO UPDATE …
 * WHERE` the row changed), the rows the blocks it completes no longer hold, and the keys of the block it
 * leaves open. A page the warehouse already holds exactly (compared by digest) is neither copied nor merged.
 *
 * @example await loadPage(client, { runId, chainId: 1, rangeId, chunkId, contract, rows, mode: 'merge', interior, carried, openRows, checkpoint })
 * // → { inserted: 0, updated: 2, unchanged: 998 }
 */
export async function loadPage(client: pg.PoolClient, load: PageLoad, budget: TimeBudget = NO_BUDGET): Promise<MergeCounts> {
  await beginPageSession(client);
  const checkpoint = checkpointValues(load);
  if (load.mode === 'merge') {
    const held = await budget.time('copy', () =>
      client.query<{ held: boolean }>({
        // prepared once per connection: a re-run asks it for every page, and parsing and planning its text anew took
        // about 1.5 ms of the server's time a page (about a tenth of what a re-run's pages cost PostgreSQL)
        name: 'erc20-etl checkpoint if held',
        text: CHECKPOINT_IF_HELD,
        values: [...warehouseDigestParams(load), ...checkpoint, pageDigest(load.rows), load.runId],
      }),
    );
    if (held.rows[0]?.held) return { inserted: 0, updated: 0, unchanged: load.rows.length };
  }
  await budget.time('commit', () => client.query('BEGIN'));
  try {
    let counts: MergeCounts;
    const carried = [load.carried.map((k) => k.transactionHash), load.carried.map((k) => k.logIndex)];
    if (load.mode === 'copy') {
      // oldest first: each index then grows at the end of the page's run of keys, and its pages stay full
      await budget.time('copy', () =>
        copyTransfers(client, 'token_transfers', oldestFirst(load.rows), ['chain_id', 'inserted_by_run', 'updated_by_run'], `${load.chainId}\t${load.runId}\t${load.runId}`),
      );
      counts = { inserted: load.rows.length, updated: 0, unchanged: 0 };
    } else {
      const merged = await budget.time('copy', async () => {
        await copyTransfers(client, STAGING, load.rows);
        return client.query<{ inserted: number; updated: number }>(MERGE, [load.runId, load.chainId]);
      });
      const { inserted, updated } = merged.rows[0] ?? { inserted: 0, updated: 0 };
      counts = { inserted, updated, unchanged: load.rows.length - inserted - updated };
      if (load.interior) {
        const interior = load.interior;
        await budget.time('copy', async () => {
          await client.query(HASH_AGAINST_PAGE);
          await client.query(RECORD_MISSING, [load.rangeId, load.contract, interior.fromBlock, interior.toBlock, ...carried, load.chainId]);
        });
      }
    }
    await budget.time('commit', async () => {
      const moved = await client.query<{ elsewhere: boolean }>(CHECKPOINT, [...checkpoint, load.runId, counts.inserted, counts.updated, counts.unchanged]);
      if (moved.rows[0]?.elsewhere) throw new ChunkMovedError([load.chunkId]);
      await client.query('COMMIT').catch((err: unknown) => {
        throw new CommitFailedError(counts, err);
      });
    });
    return counts;
  } catch (err) {
    await client.query('ROLLBACK').catch(() => undefined);
    if (load.mode === 'copy' && (err as { code?: string }).code === UNIQUE_VIOLATION) throw new AlreadyLoadedError({ cause: err });
    throw err;
  }
}
