import { sql, type Kysely } from 'kysely';
import type { Database } from './schema.ts';

/** Per contract, the lowest and the highest block a job has covered on its chain. */
export interface CoveredBounds {
  first: Map<string, number>;
  last: Map<string, number>;
}

/** The lowest and the highest block a job has covered on its chain, per contract (from the coverage ledger), in one query. */
export async function coveredBounds(db: Kysely<Database>, chainId: number, job: string, contracts: readonly string[]): Promise<CoveredBounds> {
  const { rows } = await sql<{ contract_address: string; first: string; last: string }>`
    SELECT contract_address, min(from_block)::text AS first, max(to_block)::text AS last FROM export_coverage
    WHERE chain_id = ${chainId} AND job = ${job} AND contract_address = ANY(${contracts as string[]})
    GROUP BY contract_address`.execute(db);
  return {
    first: new Map(rows.map((r) => [r.contract_address, Number(r.first)])),
    last: new Map(rows.map((r) => [r.contract_address, Number(r.last)])),
  };
}

/** The highest block a job has covered on its chain, per contract (from the coverage ledger). */
export async function lastCoveredBlocks(db: Kysely<Database>, chainId: number, job: string, contracts: readonly string[]): Promise<Map<string, number>> {
  return (await coveredBounds(db, chainId, job, contracts)).last;
}
