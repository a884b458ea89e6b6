import { sql, type Kysely } from 'kysely';
import type { Database } from './schema.ts';

/** One token's totals over every transfer the warehouse holds; counts as text (BIGINT). */
export interface TokenTotals {
  /** Its symbol, else the start of its address marked unknown. */
  token: string;
  transfers: string;
  /** The sum of values scaled by the token's decimals, rounded to 2 places; null when they are unknown. */
  volume: string | null;
  senders: string;
  blocks: string;
}

/** What {@link topTokens} asks, in short, for a caption. */
export const TOP_TOKENS_QUERY = 'SELECT … FROM token_transfers_enriched GROUP BY chain_id, token';

/** Every token's totals per chain (from the enriched view), most transfers first; a chain other than 1 is named. */
export async function topTokens(db: Kysely<Database>): Promise<TokenTotals[]> {
  const { rows } = await sql<TokenTotals>`
    SELECT coalesce(token_symbol, left(contract_address, 10) || '… (unknown)')
             || CASE WHEN chain_id = 1 THEN '' ELSE ' (chain ' || chain_id || ')' END AS token,
           count(*) AS transfers,
           round(sum(value_scaled), 2)::text AS volume,
           count(DISTINCT from_address) AS senders,
           count(DISTINCT block_number) AS blocks
    FROM token_transfers_enriched
    GROUP BY chain_id, 1 ORDER BY count(*) DESC, 1`.execute(db);
  return rows;
}
