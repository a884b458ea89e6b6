import { sql, type Kysely } from 'kysely';
import type pg from 'pg';
import copyStreams from 'pg-copy-streams';
import type { BlockOfRow, BlockSighting } from '../dataset/block-agreement.ts';
import type { HeaderJson } from '../eth/header-fields.ts';
import type { Warehouse } from './db.ts';
import { ATTEMPT_QUERY, committedAttempt, commitTrace, tracedTransaction, type CommitAttempt } from './commit-trace.ts';
import type { Database } from './schema.ts';

/** A block that transfers point at and block_headers lacks, with what the transfers say about it (their lowest number and time). */
export interface MissingHeader extends BlockSighting {
  /** The contracts whose transfers point at it (named in error messages). */
  contracts: string[];
  /** Its transfers' highest number and time: the same as the lowest unless they disagree. */
  highest?: BlockOfRow;
}

/**
 * The distinct block hashes of the chain's transfers in the given scopes (contract × inclusive block range) that
 * have no header row: each is fetched once, and a stored header is never fetched again.
 */
export async function missingHeaders(db: Kysely<Database>, chainId: number, scopes: readonly { contract: string; fromBlock: number; toBlock: number }[]): Promise<MissingHeader[]> {
  if (!scopes.length) return [];
  const values = sql.join(scopes.map((s) => sql`(${s.contract}::text, ${s.fromBlock}::bigint, ${s.toBlock}::bigint)`));
  const { rows } = await sql<{ hash: string; number: string; timestamp: string; high_number: string; high_timestamp: string; contracts: string[] }>`
    WITH scope (contract_address, from_block, to_block) AS (VALUES ${values})
    SELECT t.block_hash AS hash, min(t.block_number)::text AS number,
           to_char(min(t.block_timestamp) AT TIME ZONE 'UTC', 'YYYY-MM-DD"T"HH24:MI:SS.MS"Z"') AS timestamp,
           max(t.block_number)::text AS high_number,
           to_char(max(t.block_timestamp) AT TIME ZONE 'UTC', 'YYYY-MM-DD"T"HH24:MI:SS.MS"Z"') AS high_timestamp,
           array_agg(DISTINCT t.contract_address ORDER BY t.contract_address) AS contracts
    FROM scope s
    JOIN token_transfers t ON t.chain_id = ${chainId} AND t.contract_address = s.contract_address AND t.block_number BETWEEN s.from_block AND s.to_block
    WHERE NOT EXISTS (SELECT 1 FROM block_headers h WHERE h.chain_id = t.chain_id AND h.hash = t.block_hash)
    GROUP BY t.block_hash
    ORDER BY 2`.execute(db);
  return rows.map((r) => ({
    hash: r.hash,
    number: Number(r.number),
    timestamp: r.timestamp,
    contracts: r.contracts,
    highest: { blockHash: r.hash, blockNumber: Number(r.high_number), blockTimestamp: r.high_timestamp },
  }));
}

/** A stored transfer as the bloom check of its block reads it. */
export interface RowInBlock {
  transactionHash: string;
  logIndex: number;
  contractAddress: string;
  fromAddress: string;
  toAddress: string;
  blockNumber: number;
  blockHash: string;
}

/**
 * The transfers of `chainId` the warehouse holds in these blocks (by hash) and keeps, ordered by block: what the bloom
 * check of a block reads when its header arrives after its rows were stored (a run stopped before it fetched it). A row
 * a page found missing (export_missing: the source no longer serves it) is left out: its range's reconciliation takes it away.
 */
export async function rowsInBlocks(db: Kysely<Database>, chainId: number, hashes: readonly string[]): Promise<RowInBlock[]> {
  if (!hashes.length) return [];
  const { rows } = await sql<{ h: string; i: number; c: string; f: string; t: string; n: string; b: string }>`
    SELECT transaction_hash AS h, log_index AS i, contract_address AS c, from_address AS f, to_address AS t, block_number::text AS n, block_hash AS b
    FROM token_transfers t WHERE chain_id = ${chainId} AND block_hash = ANY(${[...hashes]}::text[])
      AND NOT EXISTS (SELECT 1 FROM export_missing m WHERE m.chain_id = t.chain_id AND m.transaction_hash = t.transaction_hash
        AND m.log_index = t.log_index AND m.block_number = t.block_number)
    ORDER BY block_hash, contract_address`.execute(db);
  return rows.map((r) => ({ transactionHash: r.h, logIndex: r.i, contractAddress: r.c, fromAddress: r.f, toAddress: r.t, blockNumber: Number(r.n), blockHash: r.b }));
}

/** What a stored header tells of its block: its number, its time (seconds, decimal text) and its logsBloom. */
export interface StoredHeader {
  number: number;
  seconds: string;
  logsBloom: string;
}

/** A block as rows name it: its hash and its number. */
export interface BlockRef {
  hash: string;
  number: number;
}

/**
 * Which of these blocks block_headers has already for the chain (by hash, at the number given), each with its
 * number, time and logsBloom (for the bloom check of new rows, and a node source's rows' times). The look-up goes by
 * the blocks' numbers (an index of bigints) and checks the hashes of what it finds, rather than probing the primary
 * key once per hash: 300 blocks spread over 100,000 took 1.2 ms that way against 30 ms by hash, and 0.8 ms against
 * 7.4 ms when none was stored (PostgreSQL 15, 30,534 headers stored; bounding the numbers by their least and greatest
 * instead took 241 ms when the blocks were that spread). A stored header of the same hash at another number is not
 * found: the block is fetched and checked again, and its rows' number is held against it.
 */
export async function knownHeaders(db: Kysely<Database>, chainId: number, blocks: readonly BlockRef[]): Promise<Map<string, StoredHeader>> {
  if (!blocks.length) return new Map();
  const rows = await db
    .selectFrom('block_headers')
    .select(['hash', 'number', 'timestamp', 'logs_bloom'])
    .where('chain_id', '=', String(chainId))
    .where('number', '=', sql<string>`ANY(${blocks.map((b) => String(b.number))}::bigint[])`)
    .where('hash', '=', sql<string>`ANY(${blocks.map((b) => b.hash)}::text[])`)
    .execute();
  const numbers = new Map(blocks.map((b) => [b.hash, b.number]));
  const known = new Map<string, StoredHeader>();
  for (const r of rows) {
    if (Number(r.number) === numbers.get(r.hash)) known.set(r.hash, { number: Number(r.number), seconds: String(r.timestamp), logsBloom: r.logs_bloom });
  }
  return known;
}

const QUANTITY = (v: string | null) => (v === null ? null : BigInt(v).toString());

/** A header as `insertHeaders` and `storeHeaders` take it. */
export interface HeaderToStore {
  header: HeaderJson;
  extra: Record<string, unknown> | null;
  hashVerified: boolean;
  unverifiedReason?: string | null;
}

// One array per column, unnested: a batch costs one plan of 28 parameters, where a VALUES list of 100 rows
// binds 2,800 of them.
/**
 * Stores checked headers of a chain (every field, snake_case; quantities as decimal text; unknown keys in extra_fields;
 * why a header is unverified, when it is).
 */
export async function insertHeaders(db: Kysely<Database>, chainId: number, headers: readonly HeaderToStore[], runId: string): Promise<number> {
  if (!headers.length) return 0;
  const column = <T>(pick: (h: (typeof headers)[number]) => T): T[] => headers.map(pick);
  const result = await sql`
    INSERT INTO block_headers (
      hash, number, parent_hash, sha3_uncles, miner, state_root, transactions_root, receipts_root, logs_bloom,
      difficulty, gas_limit, gas_used, timestamp, extra_data, mix_hash, nonce, base_fee_per_gas, withdrawals_root,
      blob_gas_used, excess_blob_gas, parent_beacon_block_root, requests_hash, block_access_list_hash,
      hash_verified, extra_fields, unverified_reason, chain_id, fetched_by_run)
    SELECT u.*, ${chainId}::bigint, ${runId}::bigint FROM unnest(
      ${column((x) => x.header.hash)}::text[], ${column((x) => QUANTITY(x.header.number))}::bigint[],
      ${column((x) => x.header.parentHash)}::text[], ${column((x) => x.header.sha3Uncles)}::text[],
      ${column((x) => x.header.miner)}::text[], ${column((x) => x.header.stateRoot)}::text[],
      ${column((x) => x.header.transactionsRoot)}::text[], ${column((x) => x.header.receiptsRoot)}::text[],
      ${column((x) => x.header.logsBloom)}::text[], ${column((x) => QUANTITY(x.header.difficulty))}::numeric[],
      ${column((x) => QUANTITY(x.header.gasLimit))}::numeric[], ${column((x) => QUANTITY(x.header.gasUsed))}::numeric[],
      ${column((x) => QUANTITY(x.header.timestamp))}::bigint[], ${column((x) => x.header.extraData)}::text[],
      ${column((x) => x.header.mixHash)}::text[], ${column((x) => x.header.nonce)}::text[],
      ${column((x) => QUANTITY(x.header.baseFeePerGas))}::numeric[], ${column((x) => x.header.withdrawalsRoot)}::text[],
      ${column((x) => QUANTITY(x.header.blobGasUsed))}::numeric[], ${column((x) => QUANTITY(x.header.excessBlobGas))}::numeric[],
      ${column((x) => x.header.parentBeaconBlockRoot)}::text[], ${column((x) => x.header.requestsHash)}::text[],
      ${column((x) => x.header.blockAccessListHash)}::text[], ${column((x) => x.hashVerified)}::boolean[],
      ${column((x) => (x.extra ? JSON.stringify(x.extra) : null))}::jsonb[], ${column((x) => x.unverifiedReason ?? null)}::text[]
    ) AS u
    ORDER BY 1 -- by hash: one lock order for every writer, so two runs storing the same headers cannot deadlock
    ON CONFLICT (chain_id, hash) DO NOTHING`.execute(db);
  return Number(result.numAffectedRows ?? 0);
}

/** How many of `headers` of `chainId` the transaction `xid` (as `xmin` shows it) stored. */
async function storedBy(db: Kysely<Database>, chainId: number, headers: readonly HeaderToStore[], xid: string): Promise<number> {
  const { rows } = await sql<{ n: string }>`
    SELECT count(*)::text AS n FROM block_headers
    WHERE chain_id = ${chainId} AND hash = ANY(${headers.map((h) => h.header.hash)}::text[]) AND xmin::text = ${xid}`.execute(db);
  return Number(rows[0]?.n ?? 0);
}

/** The columns a header's COPY line holds, in its order (`copyHeaderLine`). */
const HEADER_COLUMNS = [
  'hash',
  'number',
  'parent_hash',
  'sha3_uncles',
  'miner',
  'state_root',
  'transactions_root',
  'receipts_root',
  'logs_bloom',
  'difficulty',
  'gas_limit',
  'gas_used',
  'timestamp',
  'extra_data',
  'mix_hash',
  'nonce',
  'base_fee_per_gas',
  'withdrawals_root',
  'blob_gas_used',
  'excess_blob_gas',
  'parent_beacon_block_root',
  'requests_hash',
  'block_access_list_hash',
  'hash_verified',
  'extra_fields',
  'unverified_reason',
  'chain_id',
  'fetched_by_run',
].join(', ');
const UNIQUE_VIOLATION = '23505';

/**
 * A text field of COPY's text format: `\N` for NULL, and the four characters the format gives a meaning to
 * escaped. Hex fields need none of it; a header's extra fields (JSON) and an unverified header's reason may.
 *
 * @example copyField('a\tb') // → 'a\\tb'; copyField(null) // → '\\N'
 */
export function copyField(value: string | null): string {
  if (value === null) return '\\N';
  return /[\\\t\n\r]/.test(value) ? value.replace(/[\\\t\n\r]/g, (c) => (c === '\\' ? '\\\\' : c === '\t' ? '\\t' : c === '\n' ? '\\n' : '\\r')) : value;
}

/** One header as a line of COPY text, `HEADER_COLUMNS` in order: the values `insertHeaders` stores. */
function copyHeaderLine(h: HeaderToStore, tail: string): string {
  const x = h.header;
  const fields = [
    x.hash,
    QUANTITY(x.number),
    x.parentHash,
    x.sha3Uncles,
    x.miner,
    x.stateRoot,
    x.transactionsRoot,
    x.receiptsRoot,
    x.logsBloom,
    QUANTITY(x.difficulty),
    QUANTITY(x.gasLimit),
    QUANTITY(x.gasUsed),
    QUANTITY(x.timestamp),
    x.extraData,
    x.mixHash,
    x.nonce,
    QUANTITY(x.baseFeePerGas),
    x.withdrawalsRoot,
    QUANTITY(x.blobGasUsed),
    QUANTITY(x.excessBlobGas),
    x.parentBeaconBlockRoot,
    x.requestsHash,
    x.blockAccessListHash,
    h.hashVerified ? 't' : 'f',
    h.extra ? JSON.stringify(h.extra) : null,
    h.unverifiedReason ?? null,
  ];
  return `${fields.map(copyField).join('\t')}\t${tail}\n`;
}

/**
 * Stores checked headers of a chain as `insertHeaders` does, through COPY (a fifth of its PostgreSQL time for a
 * first load's headers here, 150 ms against 556 ms for 6,101): in hash order, one transaction, its commit not
 * waited for (the run's ledger commits synchronously later, as a page's does). When one of them is stored already
 * (another run stored it meanwhile: the caller only stores what block_headers lacked a moment ago), nothing of the
 * COPY stays and `insertHeaders` stores the rest. Resolves to the number stored. `trace`: the attempts of this store so
 * far (made once, before its retries); when one committed while its answer was lost, the call resolves to the number
 * that one stored, and stores nothing more.
 */
export async function storeHeaders(warehouse: Warehouse, chainId: number, headers: readonly HeaderToStore[], runId: string, trace = commitTrace()): Promise<number> {
  if (!headers.length) return 0;
  const ordered = [...headers].sort((a, b) => (a.header.hash < b.header.hash ? -1 : a.header.hash > b.header.hash ? 1 : 0));
  const earlier = await committedAttempt(warehouse.db, trace);
  if (earlier !== undefined) return storedBy(warehouse.db, chainId, ordered, earlier);
  const tail = `${chainId}\t${runId}`;
  let client: pg.PoolClient | undefined = await warehouse.pool.connect();
  try {
    const begun = (await client.query(`BEGIN; SET LOCAL synchronous_commit = off; ${ATTEMPT_QUERY}`)) as unknown as pg.QueryResult<CommitAttempt>[];
    trace.attempts.push(begun.at(-1)!.rows[0]!);
    const stream = client.query(copyStreams.from(`COPY block_headers (${HEADER_COLUMNS}) FROM STDIN`));
    stream.end(ordered.map((h) => copyHeaderLine(h, tail)).join(''));
    await new Promise<void>((resolve, reject) => {
      stream.once('finish', resolve);
      stream.once('error', reject);
    });
    await client.query('COMMIT');
    return stream.rowCount;
  } catch (err) {
    const broken = await client.query('ROLLBACK').then(
      () => undefined,
      (e: unknown) => e as Error,
    );
    client.release(broken);
    client = undefined;
    if ((err as { code?: string }).code !== UNIQUE_VIOLATION) throw err;
    return tracedTransaction(warehouse.db, trace, (trx) => insertHeaders(trx, chainId, headers, runId));
  } finally {
    client?.release();
  }
}
