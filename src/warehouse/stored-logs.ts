import { sql, type Kysely } from 'kysely';
import { mergeSpans, type Span } from '../common/spans.ts';
import type { Database } from './schema.ts';

/**
 * Which blocks of [fromBlock, toBlock] any job of a chain read in full for a contract (export_coverage, merged), with
 * the rows and blocks of the coverage records that touch it (their rows per block size a node source's first window
 * of counts); undefined when none was read in full.
 *
 * @example await storedCoverage(db, 1, { contract: usdc, fromBlock: 18_000_000, toBlock: 18_024_999 })
 * // → { covered: [{ fromBlock: 17000000, toBlock: 18099999 }], rows: 5093012, blocks: 1100000 }
 */
export async function storedCoverage(
  db: Kysely<Database>,
  chainId: number,
  query: { contract: string; fromBlock: number; toBlock: number },
): Promise<{ covered: Span[]; rows: number; blocks: number } | undefined> {
  const spans = await db
    .selectFrom('export_coverage')
    .select(['from_block', 'to_block', 'row_count'])
    .where('chain_id', '=', String(chainId))
    .where('contract_address', '=', query.contract)
    .where('to_block', '>=', String(query.fromBlock))
    .where('from_block', '<=', String(query.toBlock))
    .execute();
  if (!spans.length) return undefined;
  const covered = spans.map((s) => ({ fromBlock: Number(s.from_block), toBlock: Number(s.to_block) }));
  return {
    covered: mergeSpans(covered),
    rows: spans.reduce((sum, s) => sum + Number(s.row_count), 0),
    blocks: covered.reduce((sum, s) => sum + s.toBlock - s.fromBlock + 1, 0),
  };
}

/**
 * A contract's rows stored in each block of [fromBlock, toBlock] of a chain that holds any, newest block first, at
 * most `limit` blocks (the newest): an index-only scan of token_transfers_contract_block, backwards from `toBlock`.
 *
 * @example await storedCounts(db, 1, { contract: usdc, fromBlock: 18_000_000, toBlock: 18_000_099, limit: 16_384 })
 * // → { blocks: [18000099, 18000097, …], rows: [12, 9, …] }
 */
export async function storedCounts(
  db: Kysely<Database>,
  chainId: number,
  query: { contract: string; fromBlock: number; toBlock: number; limit: number },
): Promise<{ blocks: number[]; rows: number[] }> {
  const { rows } = await sql<{ block: string; rows: number }>`
    SELECT block_number AS block, count(*)::int AS rows FROM token_transfers
    WHERE chain_id = ${chainId} AND contract_address = ${query.contract} AND block_number BETWEEN ${query.fromBlock} AND ${query.toBlock}
    GROUP BY block_number ORDER BY block_number DESC LIMIT ${query.limit}`.execute(db);
  return { blocks: rows.map((r) => Number(r.block)), rows: rows.map((r) => r.rows) };
}
