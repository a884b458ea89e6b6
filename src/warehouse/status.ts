import { sql, type Kysely } from 'kysely';
import { gaps, mergeSpans, type Span } from '../common/spans.ts';
import type { Database, RunStatus } from './schema.ts';
import { runAbandoned } from './runs.ts';
import { skippedLogsOfRun, type SkippedCounts } from './skipped-logs.ts';

export interface ContractStatus {
  /** The chain (decimal text): a contract's address on two chains is two entries. */
  chainId: string;
  contract: string;
  symbol: string | null;
  covered: Span[];
  gaps: Span[];
  /** Ranges a run left open: resumed by the job's next run. */
  inProgress: Span[];
  rows: number;
  /** The last run of the chain that touched the contract, with that chain (decimal text). */
  lastRun: {
    id: string;
    job: string;
    chainId: string;
    status: RunStatus;
    startedAt: Date;
    finishedAt: Date | null;
    error: string | null;
    /**
     * A `run` or `backfill` still marked running whose job no process holds (its lock went with the connection): the
     * process was killed or crashed, and the job's next run resumes its work. Queued runs are never abandoned so:
     * their workers hold the job only while on a task.
     */
    abandoned: boolean;
  } | null;
  /**
   * Logs with the Transfer topic that the last run (`lastRun`) read for the contract and skipped as not ERC-20
   * transfers (a node source's ERC-721 and other shapes); zeros when it skipped none, null when there is no run.
   * The last run's counts, not a sum: runs that re-read blocks would count the same logs again.
   */
  skippedLogs: SkippedCounts | null;
}

/**
 * Per chain and contract (by chain id, then address): the blocks covered (merged), the gaps between them, open ranges,
 * rows in the warehouse, the last run of the chain that touched it and the logs that run skipped. `job` limits it to a
 * job's chain and contracts; otherwise every contract of every chain the warehouse knows.
 */
export async function contractStatus(db: Kysely<Database>, job?: { chainId: number; contracts: readonly string[] }): Promise<ContractStatus[]> {
  const known = job
    ? job.contracts.map((contract) => ({ chain: String(job.chainId), contract }))
    : // BIGINT: ordered as a number, read as text
      (
        await sql<{ chain: string; contract: string }>`
          SELECT chain_id AS chain, contract_address AS contract FROM export_coverage
          UNION SELECT chain_id, contract_address FROM export_ranges
          UNION SELECT chain_id, contract_address FROM tokens ORDER BY 1, 2`.execute(db)
      ).rows;
  const out: ContractStatus[] = [];
  for (const { chain, contract } of known) {
    const coverage = await db.selectFrom('export_coverage').select(['from_block', 'to_block']).where('chain_id', '=', chain).where('contract_address', '=', contract).execute();
    const open = await db
      .selectFrom('export_ranges')
      .select(['from_block', 'to_block'])
      .where('chain_id', '=', chain)
      .where('contract_address', '=', contract)
      .where('status', '=', 'open')
      .execute();
    const rows = await db
      .selectFrom('token_transfers')
      .select(sql<string>`count(*)`.as('n'))
      .where('chain_id', '=', chain)
      .where('contract_address', '=', contract)
      .executeTakeFirst();
    const token = await db.selectFrom('tokens').select('symbol').where('chain_id', '=', chain).where('contract_address', '=', contract).executeTakeFirst();
    const run = await db
      .selectFrom('export_runs')
      .select(['id', 'job', 'chain_id', 'status', 'started_at', 'finished_at', 'error'])
      .select(runAbandoned.as('abandoned'))
      .where('chain_id', '=', chain)
      .where(sql<boolean>`${contract} = ANY(contracts)`)
      .orderBy('id', 'desc')
      .limit(1)
      .executeTakeFirst();
    const skipped = run ? ((await skippedLogsOfRun(db, run.id)).get(contract) ?? { erc721: 0, other: 0 }) : null;
    const covered = mergeSpans(coverage.map((c) => ({ fromBlock: Number(c.from_block), toBlock: Number(c.to_block) })));
    out.push({
      chainId: chain,
      contract,
      symbol: token?.symbol ?? null,
      covered,
      gaps: gaps(covered),
      inProgress: open.map((o) => ({ fromBlock: Number(o.from_block), toBlock: Number(o.to_block) })),
      rows: Number(rows?.n ?? 0),
      lastRun: run
        ? {
            id: run.id,
            job: run.job,
            chainId: String(run.chain_id),
            status: run.status,
            startedAt: run.started_at,
            finishedAt: run.finished_at,
            error: run.error,
            abandoned: run.abandoned,
          }
        : null,
      skippedLogs: skipped,
    });
  }
  return out;
}

/** The chains the warehouse holds transfers or runs of, as decimal text, in order. */
export async function chainsHeld(db: Kysely<Database>): Promise<string[]> {
  const { rows } = await sql<{ chain_id: string }>`
    SELECT chain_id::text AS chain_id FROM (SELECT chain_id FROM token_transfers UNION SELECT chain_id FROM export_runs) c ORDER BY c.chain_id`.execute(db);
  return rows.map((r) => r.chain_id);
}
