import { createHash } from 'node:crypto';
import type pg from 'pg';
import type { TransferKey, TransferRecord } from '../dataset/types.ts';

/**
 * A page's rows in one canonical text, the same whether the exporter writes it from the API's rows or
 * PostgreSQL writes it from the warehouse's: one line per row, newest first (block, log index, then
 * transaction hash, descending), fields tab-separated in `token_transfers` order, each as PostgreSQL prints
 * it. Every rendering is one to one (hex and addresses as stored, `numeric(78,0)` without leading zeros,
 * timestamps to the microsecond), so equal digests mean equal rows. Pure.
 *
 * @example pageDigest([]) // → 'e3b0c44298fc1c149afbf4c8996fb92427ae41e4649b934ca495991b7852b855' (sha256 of no text)
 */
export function pageDigest(rows: readonly TransferRecord[]): string {
  // a page comes newest first already: sorting is needed only for rows from elsewhere
  const ordered = rows.every((r, i) => i === 0 || newestFirst(rows[i - 1]!, r) < 0) ? rows : [...rows].sort(newestFirst);
  // written into one buffer: cheaper than hashing a string of a thousand pieces. Fields are validated ASCII,
  // and a line is at most about 420 bytes (a 78-digit value, 16-digit numbers); a text that did not fit
  // would only make the digests differ, and the page be merged
  const text = scratch(ordered.length * 512);
  let at = 0;
  for (let i = 0; i < ordered.length; i++) at += text.write(i ? `\n${canonicalLine(ordered[i]!)}` : canonicalLine(ordered[i]!), at, 'latin1');
  return createHash('sha256').update(text.subarray(0, at)).digest('hex');
}

// One buffer for every digest, grown to the largest page: written and hashed synchronously, so never shared,
// and not a fresh half megabyte of memory per page for the garbage collector to account for.
let buffer = Buffer.alloc(0);
function scratch(size: number): Buffer {
  if (buffer.length < size) buffer = Buffer.allocUnsafe(size);
  return buffer;
}

function newestFirst(a: TransferRecord, b: TransferRecord): number {
  return b.blockNumber - a.blockNumber || b.logIndex - a.logIndex || (a.transactionHash > b.transactionHash ? -1 : a.transactionHash < b.transactionHash ? 1 : 0);
}

function canonicalLine(t: TransferRecord): string {
  return `${t.transactionHash}\t${t.logIndex}\t${t.contractAddress}\t${t.fromAddress}\t${t.toAddress}\t${t.value}\t${t.blockNumber}\t${t.blockHash}\t${postgresTimestamp(t.blockTimestamp)}\t${t.transactionIndex}`;
}

/**
 * How PostgreSQL prints a `timestamptz` with `DateStyle = ISO` and `TimeZone = UTC`: `2023-04-08T21:26:11.000Z`
 * → `2023-04-08 21:26:11+00`, and `….250Z` → `….25+00` (fraction without trailing zeros). Pure.
 */
export function postgresTimestamp(iso: string): string {
  const fraction = iso.slice(20, 23).replace(/0+$/, '');
  return `${iso.slice(0, 10)} ${iso.slice(11, 19)}${fraction ? `.${fraction}` : ''}+00`;
}

/**
 * The same text's digest, written by PostgreSQL (under `DIGEST_SETTINGS`): the contract's rows in the blocks
 * the page completes but those earlier pages committed, and the other rows under the keys of the page's
 * open block, all of the page's chain. "C" ordering is the exporter's. Parameters $1–$8: {@link warehouseDigestParams}.
 */
export const WAREHOUSE_DIGEST = `
  WITH page AS (
    SELECT t.* FROM token_transfers t WHERE t.chain_id = $8 AND t.contract_address = $1 AND t.block_number BETWEEN $2 AND $3
      AND (t.block_number < $3 OR NOT EXISTS ( -- carried keys are all in the highest block: looked up only there
        SELECT 1 FROM unnest($6::text[], $7::int[]) AS c (transaction_hash, log_index)
        WHERE c.transaction_hash = t.transaction_hash AND c.log_index = t.log_index))
    UNION ALL
    SELECT t.* FROM unnest($4::text[], $5::int[]) AS k (transaction_hash, log_index)
    JOIN token_transfers t ON t.chain_id = $8 AND t.transaction_hash = k.transaction_hash AND t.log_index = k.log_index
    WHERE NOT (t.contract_address = $1 AND t.block_number BETWEEN $2 AND $3)
  )
  SELECT encode(sha256(convert_to(coalesce(string_agg(
    concat_ws(E'\\t', transaction_hash, log_index, contract_address, from_address, to_address, value, block_number, block_hash, block_timestamp, transaction_index),
    E'\\n' ORDER BY block_number DESC, log_index DESC, transaction_hash COLLATE "C" DESC), ''), 'UTF8')), 'hex') AS digest
  FROM page`;

/** Settings the warehouse's digest prints timestamps under (for the session or the transaction it runs in). */
export const DIGEST_SETTINGS = ["DateStyle = 'ISO'", "TimeZone = 'UTC'"] as const;

export interface PageRows {
  /** The chain the page's rows are of. */
  chainId: number;
  contract: string;
  rows: readonly TransferRecord[];
  /** Blocks the page completes; null when it completes none. */
  interior: { fromBlock: number; toBlock: number } | null;
  /** Keys earlier pages of the chunk committed in the interior. */
  carried: readonly TransferKey[];
  /** The page's rows in the block it leaves open. */
  openRows: readonly TransferRecord[];
}

/**
 * Whether the warehouse already holds exactly the page: every row of the page, unchanged, and no row of
 * the contract in the blocks the page completes but the page's and the carried ones. Then loading the page
 * would write nothing and find nothing missing, so it can be skipped: the common case of a re-run, answered by one read of about
 * a page of rows instead of a copy, a merge and a search for missing rows. Runs where `DIGEST_SETTINGS` are set.
 * (Loading a page asks the same question together with moving its checkpoint: `loadPage`.)
 *
 * @example await warehouseHoldsPage(client, { chainId: 1, contract, rows, interior: { fromBlock: 5, toBlock: 9 }, carried: [], openRows: [] }) // → true
 */
export async function warehouseHoldsPage(client: pg.PoolClient, page: PageRows): Promise<boolean> {
  const result = await client.query<{ digest: string }>(WAREHOUSE_DIGEST, warehouseDigestParams(page));
  return result.rows[0]?.digest === pageDigest(page.rows);
}

/** The parameters $1–$8 of {@link WAREHOUSE_DIGEST} for a page. */
export function warehouseDigestParams(page: PageRows): unknown[] {
  const { fromBlock, toBlock } = page.interior ?? { fromBlock: 0, toBlock: -1 };
  return [
    page.contract,
    fromBlock,
    toBlock,
    page.openRows.map((r) => r.transactionHash),
    page.openRows.map((r) => r.logIndex),
    page.carried.map((k) => k.transactionHash),
    page.carried.map((k) => k.logIndex),
    page.chainId,
  ];
}
