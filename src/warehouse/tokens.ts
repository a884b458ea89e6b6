import { sql, type Kysely } from 'kysely';
import type { Database } from './schema.ts';

export interface TokenRow {
  contractAddress: string;
  name: string | null;
  symbol: string | null;
  decimals: number | null;
}

/** Saves a token's metadata on its chain when it is new or changed; unchanged metadata writes nothing. */
export async function saveToken(db: Kysely<Database>, chainId: number, token: TokenRow, runId: string): Promise<boolean> {
  const { rows } = await sql<{ n: number }>`
    WITH incoming (chain_id, contract_address, name, symbol, decimals) AS (
      VALUES (${chainId}::bigint, ${token.contractAddress}, ${token.name}::text, ${token.symbol}::text, ${token.decimals}::integer)
    ), saved AS (
      INSERT INTO tokens AS k (chain_id, contract_address, name, symbol, decimals, updated_by_run)
      SELECT i.chain_id, i.contract_address, i.name, i.symbol, i.decimals, ${runId} FROM incoming i
      WHERE NOT EXISTS (
        SELECT 1 FROM tokens k2 WHERE k2.chain_id = i.chain_id AND k2.contract_address = i.contract_address
          AND (k2.name, k2.symbol, k2.decimals) IS NOT DISTINCT FROM (i.name, i.symbol, i.decimals))
      ON CONFLICT (chain_id, contract_address) DO UPDATE
        SET name = EXCLUDED.name, symbol = EXCLUDED.symbol, decimals = EXCLUDED.decimals,
            updated_by_run = EXCLUDED.updated_by_run, updated_at = now()
      RETURNING 1
    )
    SELECT count(*)::int AS n FROM saved`.execute(db);
  return (rows[0]?.n ?? 0) > 0;
}
