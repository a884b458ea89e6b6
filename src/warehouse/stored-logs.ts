import { sql, type Kysely } from 'kysely';
import { mergeSpans, type Span } from '../common/spans.ts';
import type { Database } from './schema.ts';

/**
 * What the warehouse holds of a contract's transfers over [fromBlock, toBlock] of a chain, for a node source to size
 * a re-read's `eth_getLogs` calls by: the spans any job read in full there (export_coverage, merged), and the rows
 * stored, counted per bucket of `bucketBlocks` blocks from `fromBlock`. Undefined when no job read any of it in full:
 * nothing is counted then.
 *
 * @example await storedLogs(db, 1, { contract: usdc, fromBlock: 18_000_000, toBlock: 18_024_999, bucketBlocks: 4 })
 * // → { covered: [{ fromBlock: 17000000, toBlock: 18099999 }], counts: Int32Array(6250) [12, 9, …] }
 */
export async function storedLogs(
  db: Kysely<Database>,
  chainId: number,
  query: { contract: string; fromBlock: number; toBlock: number; bucketBlocks: number },
): Promise<{ covered: Span[]; counts: Int32Array } | undefined> {
  const spans = await db
    .selectFrom('export_coverage')
    .select(['from_block', 'to_block'])
    .where('chain_id', '=', String(chainId))
    .where('contract_address', '=', query.contract)
    .where('to_block', '>=', String(query.fromBlock))
    .where('from_block', '<=', String(query.toBlock))
    .execute();
  if (!spans.length) return undefined;
  const counts = new Int32Array(Math.ceil((query.toBlock - query.fromBlock + 1) / query.bucketBlocks));
  const { rows } = await sql<{ bucket: number; rows: number }>`
    SELECT ((block_number - ${query.fromBlock}) / ${query.bucketBlocks})::int AS bucket, count(*)::int AS rows FROM token_transfers
    WHERE chain_id = ${chainId} AND contract_address = ${query.contract} AND block_number BETWEEN ${query.fromBlock} AND ${query.toBlock}
    GROUP BY 1`.execute(db);
  for (const r of rows) counts[r.bucket] = r.rows;
  return { covered: mergeSpans(spans.map((s) => ({ fromBlock: Number(s.from_block), toBlock: Number(s.to_block) }))), counts };
}
