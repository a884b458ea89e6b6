import { sql, type Kysely } from 'kysely';
import type { Database } from './schema.ts';

/** The highest block a job has covered on its chain, per contract (from the coverage ledger). */
export async function lastCoveredBlocks(db: Kysely<Database>, chainId: number, job: string, contracts: readonly string[]): Promise<Map<string, number>> {
  const { rows } = await sql<{ contract_address: string; to_block: string }>`
    SELECT contract_address, max(to_block)::text AS to_block FROM export_coverage
    WHERE chain_id = ${chainId} AND job = ${job} AND contract_address = ANY(${contracts as string[]})
    GROUP BY contract_address`.execute(db);
  return new Map(rows.map((r) => [r.contract_address, Number(r.to_block)]));
}

/** The lowest block a job has covered on its chain, per contract (from the coverage ledger). */
export async function firstCoveredBlocks(db: Kysely<Database>, chainId: number, job: string, contracts: readonly string[]): Promise<Map<string, number>> {
  const { rows } = await sql<{ contract_address: string; from_block: string }>`
    SELECT contract_address, min(from_block)::text AS from_block FROM export_coverage
    WHERE chain_id = ${chainId} AND job = ${job} AND contract_address = ANY(${contracts as string[]})
    GROUP BY contract_address`.execute(db);
  return new Map(rows.map((r) => [r.contract_address, Number(r.from_block)]));
}
