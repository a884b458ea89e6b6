import type { Command } from 'commander';
import { withConnections, type ConnectionFlags } from './connection-flags.ts';
import { withMetrics, type MetricsFlags } from './metrics-flags.ts';
import type { WorkerFlags } from './worker-flags.ts';

/** `enqueue` and `worker`: the job's chunks as tasks on a graphile-worker queue in the warehouse, read by any number of workers. */
export function registerQueueCommands(program: Command): void {
  withConnections(
    program
      .command('enqueue')
      .description('plan a job as `run` would and queue one task per chunk for `erc20-etl worker` (a chunk is queued once, however often this runs)')
      .argument('<job-file>', 'e.g. jobs/nightly.json'),
    true,
  ).action(async (file: string, flags: ConnectionFlags) => {
    const { enqueue } = await import('./enqueue-action.ts');
    await enqueue(file, flags);
  });

  withConnections(
    withMetrics(
      program
        .command('worker')
        .description('run queued chunk tasks until stopped (SIGINT/SIGTERM finish the current pages first); any number of workers share one queue')
        .option('--concurrency <n>', 'tasks run at once, 1 to 64 (default 4)')
        .option('--once', 'stop when no task is ready instead of waiting for more')
        .option('--schedule', 'also fire the "schedule" of the job files in --jobs (once across all workers)')
        .option('--jobs <dir>', 'where --schedule finds job files (default: jobs)')
        .option('--dead-after <seconds>', 'a worker not heard from for this long is taken for dead and its tasks go to others, 5 to 86400 (default 60)')
        .option('--rpc-timeout <seconds>', 'node jobs: how long one JSON-RPC call may go unanswered before it is asked again in smaller calls (default 30)'),
    ),
    true,
  ).action(async (flags: ConnectionFlags & MetricsFlags & WorkerFlags) => {
    const { worker } = await import('./worker-action.ts');
    await worker(flags);
  });
}
