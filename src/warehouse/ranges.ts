import { sql, type Kysely, type Transaction } from 'kysely';
import type { TransferKey } from '../dataset/types.ts';
import type { Database } from './schema.ts';

export interface ChunkState {
  id: string;
  rangeId: string;
  /** Its range's chain. */
  chainId: number;
  fromBlock: number;
  toBlock: number;
  pageKey: string | null;
  resumeToBlock: number | null;
  done: boolean;
  rows: number;
  /** Pages COPY straight in (true), merge (false), or not decided yet (null): see {@link decideFresh}. */
  fresh: boolean | null;
  /** Keys of the rows committed so far in block `resumeToBlock`, which the next page may go on with. */
  openKeys: TransferKey[];
  /**
   * The first block of the query `pageKey` belongs to, when the chunk gave its lower blocks to another chunk
   * after that query started (rows below `fromBlock` are then dropped); null: `fromBlock`.
   */
  queryFromBlock: number | null;
}

export interface RangeState {
  id: string;
  /** The chain its rows are of. */
  chainId: number;
  job: string;
  contract: string;
  fromBlock: number;
  toBlock: number;
  /** The run that planned it: a queued range's tasks add their totals to it. */
  createdByRun: string;
  chunks: ChunkState[];
}

/**
 * The ranges a job left open (a run that crashed or failed part-way), with their chunks and positions:
 * the next run of the job resumes them before planning anything new.
 */
export async function openRanges(db: Kysely<Database>, chainId: number, job: string): Promise<RangeState[]> {
  const ranges = await db
    .selectFrom('export_ranges')
    .selectAll()
    .where('chain_id', '=', String(chainId))
    .where('job', '=', job)
    .where('status', '=', 'open')
    .orderBy('id')
    .execute();
  return withChunks(db, ranges);
}

/** One range with its chunks, when it is still open (a finished range has no chunks left). */
export async function openRange(db: Kysely<Database>, id: string): Promise<RangeState | undefined> {
  const ranges = await db.selectFrom('export_ranges').selectAll().where('id', '=', id).where('status', '=', 'open').execute();
  return (await withChunks(db, ranges))[0];
}

interface RangeRow {
  id: string;
  chain_id: string;
  job: string;
  contract_address: string;
  from_block: string;
  to_block: string;
  created_by_run: string;
}

async function withChunks(db: Kysely<Database>, ranges: RangeRow[]): Promise<RangeState[]> {
  if (!ranges.length) return [];
  const chunks = await db
    .selectFrom('export_chunks')
    .selectAll()
    .where(
      'range_id',
      'in',
      ranges.map((r) => r.id),
    )
    .orderBy('id')
    .execute();
  return ranges.map((r) => ({
    id: r.id,
    chainId: Number(r.chain_id),
    job: r.job,
    contract: r.contract_address,
    fromBlock: Number(r.from_block),
    toBlock: Number(r.to_block),
    createdByRun: r.created_by_run,
    chunks: chunks.filter((c) => c.range_id === r.id).map(toChunk),
  }));
}

interface ChunkRow {
  id: string;
  range_id: string;
  chain_id: string;
  from_block: string;
  to_block: string;
  page_key: string | null;
  resume_to_block: string | null;
  done: boolean;
  rows: string;
  fresh: boolean | null;
  open_hashes: string[];
  open_log_indexes: number[];
  query_from_block: string | null;
}

function toChunk(c: ChunkRow): ChunkState {
  return {
    id: c.id,
    rangeId: c.range_id,
    chainId: Number(c.chain_id),
    fromBlock: Number(c.from_block),
    toBlock: Number(c.to_block),
    pageKey: c.page_key,
    resumeToBlock: c.resume_to_block === null ? null : Number(c.resume_to_block),
    done: c.done,
    rows: Number(c.rows),
    fresh: c.fresh,
    openKeys: c.open_hashes.map((transactionHash, i) => ({ transactionHash, logIndex: c.open_log_indexes[i]! })),
    queryFromBlock: c.query_from_block === null ? null : Number(c.query_from_block),
  };
}

export interface NewRange {
  chainId: number;
  job: string;
  contract: string;
  fromBlock: number;
  toBlock: number;
  runId: string;
  chunks: readonly { fromBlock: number; toBlock: number }[];
}

/**
 * Records a planned range and its chunks, in one transaction. Called again after a lost answer, it returns the range
 * its run already recorded over those blocks (the COMMIT went through) rather than a second one.
 */
export async function createRange(db: Kysely<Database>, input: NewRange): Promise<RangeState> {
  return db.transaction().execute(async (trx) => {
    const recorded = await trx
      .selectFrom('export_ranges')
      .select('id')
      .where('created_by_run', '=', input.runId)
      .where('chain_id', '=', String(input.chainId))
      .where('job', '=', input.job)
      .where('contract_address', '=', input.contract)
      .where('from_block', '=', String(input.fromBlock))
      .where('to_block', '=', String(input.toBlock))
      .executeTakeFirst();
    if (!recorded) return insertRange(trx, input);
    const chunks = await trx.selectFrom('export_chunks').selectAll().where('range_id', '=', recorded.id).orderBy('id').execute();
    return { ...rangeOf(input, recorded.id), chunks: chunks.map(toChunk) };
  });
}

function rangeOf(input: NewRange, id: string): Omit<RangeState, 'chunks'> {
  return { id, chainId: input.chainId, job: input.job, contract: input.contract, fromBlock: input.fromBlock, toBlock: input.toBlock, createdByRun: input.runId };
}

/** Records a planned range and its chunks inside the caller's transaction. */
export async function insertRange(trx: Transaction<Database>, input: NewRange): Promise<RangeState> {
  const range = await trx
    .insertInto('export_ranges')
    .values({ chain_id: input.chainId, job: input.job, contract_address: input.contract, from_block: input.fromBlock, to_block: input.toBlock, created_by_run: input.runId })
    .returning(['id'])
    .executeTakeFirstOrThrow();
  const chunks = await trx
    .insertInto('export_chunks')
    .values(input.chunks.map((c) => ({ range_id: range.id, chain_id: input.chainId, from_block: c.fromBlock, to_block: c.toBlock })))
    .returningAll()
    .execute();
  return { ...rangeOf(input, range.id), chunks: chunks.map(toChunk) };
}

/**
 * Forgets a chunk's page key after the API refused it: the chunk now ends at its lowest committed block
 * (everything above it is committed), which it re-reads whole; the keys committed in that block so far
 * are dropped with the key, since the re-read holds them all again.
 */
export async function dropPageKey(db: Kysely<Database>, chunk: Pick<ChunkState, 'id'>, toBlock: number): Promise<void> {
  await db
    .updateTable('export_chunks')
    .set({ page_key: null, to_block: toBlock, resume_to_block: toBlock, open_hashes: [], open_log_indexes: [], query_from_block: null, updated_at: sql`now()` })
    .where('id', '=', chunk.id)
    .execute();
}

/**
 * Gives a running chunk's blocks `chunk.fromBlock … lastGiven` (below everything it has committed) to a new
 * chunk of the range, in one transaction: the chunk now starts at `lastGiven + 1`, and keeps the first block
 * of its query for its page key. The new chunk starts from nothing, and COPYs straight in when the chunk
 * did. Updates `chunk`; resolves to the new chunk, or undefined when the chunk is done meanwhile. Called again after
 * a lost answer (the COMMIT went through), it resolves to the chunk that split made.
 */
export async function splitChunk(db: Kysely<Database>, chunk: ChunkState, lastGiven: number): Promise<ChunkState | undefined> {
  if (lastGiven < chunk.fromBlock || lastGiven >= (chunk.resumeToBlock ?? chunk.toBlock + 1) - 1) {
    throw new RangeError(`cannot give away blocks ${chunk.fromBlock}–${lastGiven} of chunk ${chunk.id}: it has committed block ${chunk.resumeToBlock}`);
  }
  const queryFrom = chunk.queryFromBlock ?? chunk.fromBlock;
  const part = await db.transaction().execute(async (trx) => {
    // called again after a lost answer: the split went through, and its part is the range's chunk over those blocks
    const given = await trx
      .selectFrom('export_chunks')
      .selectAll()
      .where('range_id', '=', chunk.rangeId)
      .where('id', '<>', chunk.id)
      .where('from_block', '=', String(chunk.fromBlock))
      .where('to_block', '=', String(lastGiven))
      .executeTakeFirst();
    if (given) return given;
    const kept = await trx
      .updateTable('export_chunks')
      .set({ from_block: lastGiven + 1, query_from_block: queryFrom, updated_at: sql`now()` })
      .where('id', '=', chunk.id)
      .where('done', '=', false)
      .returning('id')
      .executeTakeFirst();
    if (!kept) return undefined;
    return trx
      .insertInto('export_chunks')
      .values({ range_id: chunk.rangeId, chain_id: chunk.chainId, from_block: chunk.fromBlock, to_block: lastGiven, fresh: chunk.fresh })
      .returningAll()
      .executeTakeFirstOrThrow();
  });
  if (!part) return undefined;
  chunk.queryFromBlock = queryFrom;
  chunk.fromBlock = lastGiven + 1;
  return toChunk(part);
}

/**
 * Decides once whether a chunk is fresh: no transfer of its contract in its blocks, so its pages can COPY
 * straight into token_transfers. The answer is stored, so a resumed chunk keeps it.
 */
export async function decideFresh(db: Kysely<Database>, chunk: ChunkState, contract: string): Promise<boolean> {
  const found = await db
    .selectFrom('token_transfers')
    .select(sql<number>`1`.as('one'))
    .where('chain_id', '=', String(chunk.chainId))
    .where('contract_address', '=', contract)
    .where('block_number', '>=', String(chunk.fromBlock))
    .where('block_number', '<=', String(chunk.toBlock))
    .limit(1)
    .executeTakeFirst();
  return setFresh(db, chunk, found === undefined);
}

/** Stores whether a chunk's pages COPY straight in; resolves to it. */
export async function setFresh(db: Kysely<Database>, chunk: ChunkState, fresh: boolean): Promise<boolean> {
  await db.updateTable('export_chunks').set({ fresh }).where('id', '=', chunk.id).execute();
  chunk.fresh = fresh;
  return fresh;
}

/** How many chunks of a range are not read to their end yet. */
export async function unfinishedChunks(db: Kysely<Database>, rangeId: string): Promise<number> {
  const left = await db.selectFrom('export_chunks').select(db.fn.countAll<string>().as('n')).where('range_id', '=', rangeId).where('done', '=', false).executeTakeFirstOrThrow();
  return Number(left.n);
}
