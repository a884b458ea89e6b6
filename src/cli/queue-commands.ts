import type { Command } from 'commander';
import type { ConnectionFlags } from './connection-flags.ts';
import { withMetrics, type MetricsFlags } from './metrics-flags.ts';
import type { WorkerFlags } from './worker-flags.ts';

const connections = (cmd: Command) =>
  cmd
    .option('--database-url <url>', 'PostgreSQL URL (default: $DATABASE_URL)')
    .option('--api-url <url>', "chain API base URL including the project id (default: $CHAIN_API_URL); never put in the queue: each process reads its own");

/** `enqueue` and `worker`: the job's chunks as tasks on a graphile-worker queue in the warehouse, read by any number of workers. */
export function registerQueueCommands(program: Command): void {
  connections(
    program
      .command('enqueue')
      .description('plan a job as `run` would and queue one task per chunk for `erc20-etl worker` (a chunk is queued once, however often this runs)')
      .argument('<job-file>', 'e.g. jobs/nightly.json'),
  ).action(async (file: string, flags: ConnectionFlags) => {
    const { enqueue } = await import('./enqueue-action.ts');
    await enqueue(file, flags);
  });

  connections(
    withMetrics(
      program
        .command('worker')
        .description('run queued chunk tasks until stopped (SIGINT/SIGTERM finish the current pages first); any number of workers share one queue')
        .option('--concurrency <n>', 'tasks run at once, 1 to 64 (default 4)')
        .option('--once', 'stop when no task is ready instead of waiting for more')
        .option('--schedule', 'also fire the "schedule" of the job files in --jobs (once across all workers)')
        .option('--jobs <dir>', 'where --schedule finds job files', 'jobs')
        .option('--dead-after <seconds>', "a worker not heard from for this long is taken for dead and its tasks go to others, 5 to 86400 (default 60)"),
    ),
  ).action(async (flags: ConnectionFlags & MetricsFlags & WorkerFlags) => {
    const { worker } = await import('./worker-action.ts');
    await worker(flags);
  });
}
