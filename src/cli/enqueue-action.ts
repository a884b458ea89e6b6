import { systemClock } from '../common/clock.ts';
import { EtlError, FatalError } from '../common/errors.ts';
import { createLogger } from '../common/logger.ts';
import { loadJobFile } from '../config/load-job.ts';
import { checkEndpointChain } from '../pipeline/chain-guard.ts';
import { checkAll } from '../config/check-all.ts';
import { redactedError } from '../config/api-url.ts';
import { resolveSettings } from '../config/settings.ts';
import { enqueueJob, type EnqueueResult } from '../queue/enqueue.ts';
import { installQueue } from '../queue/install.ts';
import { createWarehouse } from '../warehouse/db.ts';
import { retryStatement } from '../warehouse/statement-retry.ts';
import { createSource } from './api-clients.ts';
import type { ConnectionFlags } from './connection-flags.ts';
import { ensureMigrated } from './exporter.ts';

/**
 * `erc20-etl enqueue jobs/NAME.json`: plans the job as `run` would (to the chain head it asks the API
 * for) and puts one task per chunk on the queue for `erc20-etl worker` processes; prints what it queued.
 */
export async function enqueue(file: string, flags: ConnectionFlags): Promise<void> {
  const jobRead = loadJobFile(file);
  const known = await jobRead.catch(() => undefined);
  const [job, settings] = await checkAll([() => jobRead, () => resolveSettings({ flags, env: process.env, needs: { database: true, api: true }, source: known?.source ?? 'any' })]);
  const logger = createLogger();
  const warehouse = createWarehouse({ databaseUrl: settings.databaseUrl!, logger, maxConnections: 3 });
  const source = createSource({ api: settings.api!, logger, clock: systemClock, warehouse, concurrency: 1, job });
  try {
    await ensureMigrated(warehouse);
    // before the queue is installed: nothing is written for an endpoint of another chain
    const chainId = await checkEndpointChain({ source, logger }, job);
    await installQueue(settings.databaseUrl!, logger);
    const { head } = await source.chainHead(job.contracts.map((c) => c.address));
    // one transaction, tried again whole when PostgreSQL drops it; a try whose COMMIT went through while its answer was
    // lost left its ranges and tasks, which the next try finds as open ranges and tasks queued already
    const result = await retryStatement(() => enqueueJob({ warehouse, logger }, job, head, 'enqueue', chainId).catch(notTriedAgain), {
      clock: systemClock,
      onRetry: (err, attempt) => logger.warn({ msg: 'PostgreSQL failed while enqueueing the job; trying again', job: job.name, attempt, err: err.message }),
    }).catch((err: unknown) => {
      throw err instanceof NotTriedAgain ? err.cause : err;
    });
    process.stdout.write(enqueueText(result));
  } catch (err) {
    throw redactedError(err, settings.api!);
  } finally {
    await source.close().catch(() => undefined);
    await warehouse.close().catch(() => undefined);
  }
}

/** An error of the enqueue's own (the job held by a run, a chain refused), carried past the retries unchanged. */
class NotTriedAgain extends FatalError {}

/** Only PostgreSQL's failures are tried again: the tool's own errors (the job's lock taken: exit 75) end the enqueue as they are. */
function notTriedAgain(err: unknown): never {
  if (err instanceof EtlError) throw new NotTriedAgain(err.message, { cause: err });
  throw err;
}

/** What `enqueue` prints: one line per planned range, then the tasks. */
export function enqueueText(r: EnqueueResult): string {
  const lines = [`erc20-etl enqueue: job ${r.job}, chain head ${r.head}${r.runId ? `, run ${r.runId}` : ''}`];
  for (const p of r.planned) lines.push(`  ${p.contract}  blocks ${p.fromBlock}–${p.toBlock} in ${p.chunks} chunk(s)`);
  if (r.resumed) lines.push(`  ${r.resumed} open range(s) of earlier runs: their unfinished chunks queued again`);
  for (const run of r.reopened) {
    const why = run.error?.split('\n', 1)[0] ?? 'no reason recorded';
    lines.push(`  run ${run.id} had ended failed with ranges open (${why}): running again as a queued run, which the workers that finish its ranges end`);
  }
  const already = [r.waiting && `${r.waiting} were queued already`, r.running && `${r.running} are being read by a worker now`].filter(Boolean).join(', ');
  lines.push(`  ${r.queued} chunk task(s) queued${already ? ` (${already})` : ''}; run \`erc20-etl worker\` to work through them`);
  return `${lines.join('\n')}\n`;
}
