import type { Logger } from 'pino';
import type { JobConfig } from '../config/job-schema.ts';
import { JobLockedError } from '../pipeline/errors.ts';
import { planRun } from '../pipeline/plan.ts';
import { checkJobNameChain } from '../pipeline/chain-guard.ts';
import { coveredBounds } from '../warehouse/coverage.ts';
import type { Warehouse } from '../warehouse/db.ts';
import { takeEnqueueTurn } from '../warehouse/enqueue-lock.ts';
import { addTaskUnlessRunning } from '../warehouse/queue-tasks.ts';
import { insertRange, openRanges, type RangeState } from '../warehouse/ranges.ts';
import { reopenFailedRuns, setRunSpan, startRun, type QueuedCommand } from '../warehouse/runs.ts';
import { inTransaction, type WarehouseTransaction } from '../warehouse/transaction.ts';
import { chainTasks, chunkJobKey, type ChunkPayload } from './payloads.ts';

export interface EnqueueDeps {
  warehouse: Warehouse;
  logger: Logger;
}

export interface EnqueueResult {
  job: string;
  head: number;
  /** The run that the new ranges belong to; none when nothing new was planned. */
  runId?: string;
  /** Ranges planned now. */
  planned: { contract: string; fromBlock: number; toBlock: number; chunks: number }[];
  /** Open ranges (an earlier enqueue, or a run that stopped) whose unfinished chunks were queued again. */
  resumed: number;
  /** Runs that had ended failed with those ranges open, running again (as queued runs) now that their chunks are queued, with the error each had ended with. */
  reopened: { id: string; error: string | null }[];
  /** Chunk tasks added. */
  queued: number;
  /** Chunks whose task was on the queue already (waiting, or given up after its attempts): it starts afresh. */
  waiting: number;
  /** Chunks skipped because a worker is reading them right now. */
  running: number;
}

/**
 * Turns a job into chunk tasks on the queue, as `run` would read them: first the chunks its open ranges
 * have not finished, then a plan for the contracts that have no open range (the same plan `run` makes).
 * Ranges, chunks and tasks are committed in one transaction, so a task never points at a chunk that is
 * not there, and a failed enqueue leaves nothing behind. Two enqueues of one job take turns; none runs
 * while `erc20-etl run` holds the job. `chainId`: the job's chain, which the caller checked the endpoint serves
 * (`checkEndpointChain`).
 */
export async function enqueueJob(deps: EnqueueDeps, job: Readonly<JobConfig>, head: number, command: QueuedCommand, chainId: number): Promise<EnqueueResult> {
  const result = await inTransaction(deps.warehouse, async (trx) => {
    if (!(await takeEnqueueTurn(trx, job.name))) throw new JobLockedError(job.name);
    await checkJobNameChain(trx, job, chainId);

    const resumed = await openRanges(trx, chainId, job.name);
    // a run that ended failed with ranges open (stopped by a signal, a task given up) goes on with the workers
    const reopened = await reopenFailedRuns(trx, [...new Set(resumed.map((r) => r.createdByRun))], command);
    const busy = new Set(resumed.map((r) => r.contract));
    const contracts = job.contracts.map((c) => c.address);
    const covered = await coveredBounds(trx, chainId, job.name, contracts);
    const plan = planRun({
      contracts: job.contracts.filter((c) => !busy.has(c.address)),
      head,
      finality: job.finality,
      chunks: 2 * job.concurrency,
      lastCovered: covered.last,
      firstCovered: covered.first,
    });
    for (const note of plan.notes) deps.logger[note.level]({ msg: note.message, job: job.name, contract: note.contract });
    for (const contract of busy) {
      deps.logger.info({ msg: 'an earlier range of this contract is still open: its unfinished chunks are queued, and nothing new is planned for it', job: job.name, contract });
    }

    let runId: string | undefined;
    const planned: RangeState[] = [];
    if (plan.ranges.length) {
      runId = await startRun(trx, { chainId, job: job.name, command, contracts });
      for (const r of plan.ranges) {
        planned.push(await insertRange(trx, { chainId, job: job.name, contract: r.contract, fromBlock: r.fromBlock, toBlock: r.toBlock, runId, chunks: r.chunks }));
      }
      await setRunSpan(trx, runId, Math.min(...planned.map((r) => r.fromBlock)), Math.max(...planned.map((r) => r.toBlock)));
    }
    const counts = await queueChunks(trx, job, head, [...resumed, ...planned]);
    return {
      job: job.name,
      head,
      ...(runId !== undefined && { runId }),
      planned: planned.map((r) => ({ contract: r.contract, fromBlock: r.fromBlock, toBlock: r.toBlock, chunks: r.chunks.length })),
      resumed: resumed.length,
      reopened,
      ...counts,
    };
  });
  deps.logger.info({
    msg: 'job enqueued',
    job: job.name,
    run: result.runId,
    head,
    ranges: result.planned.length,
    resumed: result.resumed,
    reopened: result.reopened.map((r) => r.id),
    queued: result.queued,
    waiting: result.waiting,
    running: result.running,
  });
  return result;
}

async function queueChunks(trx: WarehouseTransaction, job: Readonly<JobConfig>, head: number, ranges: readonly RangeState[]) {
  let queued = 0;
  let waiting = 0;
  let running = 0;
  for (const range of ranges) {
    for (const chunk of range.chunks.filter((c) => !c.done)) {
      const payload: ChunkPayload = { job, runId: range.createdByRun, rangeId: range.id, chunkId: chunk.id, head };
      // added unless a worker holds the chunk's task at this moment; a waiting or failed one is replaced
      // (its attempts start again)
      // under its chain's task name: only a worker of that chain takes it
      const added = await addTaskUnlessRunning(trx, { task: chainTasks(range.chainId).chunk, payload, key: chunkJobKey(chunk.id) });
      if (added === 'running') running++;
      else if (added === 'replaced') waiting++;
      else queued++;
    }
  }
  return { queued, waiting, running };
}
