import { sql, type Kysely } from 'kysely';
import type { Database } from './schema.ts';

/** The highest block a job has covered on its chain, per contract (from the coverage ledger). */
export async function lastCoveredBlocks(db: Kysely<Database>, chainId: number, job: string, contracts: readonly string[]): Promise<Map<string, number>> {
  return coveredEnd(db, sql`max(to_block)`, { chainId, job, contracts });
}

/** The lowest block a job has covered on its chain, per contract (from the coverage ledger). */
export async function firstCoveredBlocks(db: Kysely<Database>, chainId: number, job: string, contracts: readonly string[]): Promise<Map<string, number>> {
  return coveredEnd(db, sql`min(from_block)`, { chainId, job, contracts });
}

async function coveredEnd(db: Kysely<Database>, end: ReturnType<typeof sql>, of: { chainId: number; job: string; contracts: readonly string[] }): Promise<Map<string, number>> {
  const { rows } = await sql<{ contract_address: string; block: string }>`
    SELECT contract_address, ${end}::text AS block FROM export_coverage
    WHERE chain_id = ${of.chainId} AND job = ${of.job} AND contract_address = ANY(${of.contracts as string[]})
    GROUP BY contract_address`.execute(db);
  return new Map(rows.map((r) => [r.contract_address, Number(r.block)]));
}
