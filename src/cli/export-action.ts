import { ConfigError } from '../common/errors.ts';
import { createLogger, createTerminalLines } from '../common/logger.ts';
import { backfillJob, loadJobFile, rpcTimeoutMs, type BackfillFlags } from '../config/load-job.ts';
import { resolveSettings } from '../config/settings.ts';
import type { JobConfig } from '../config/job-schema.ts';
import type { ConnectionFlags } from './connection-flags.ts';
import { exportJob } from './exporter.ts';
import { limitHeapGrowth } from './heap-growth.ts';
import { budgetText, summaryText } from './summary.ts';
import { constants } from 'node:fs';
import { access, writeFile } from 'node:fs/promises';
import { dirname, resolve } from 'node:path';
import { createTimeBudget } from '../common/time-budget.ts';
import { checkMetricsFlags, withMetricsServed, type MetricsFlags } from './metrics-flags.ts';
import { checkAll } from '../config/check-all.ts';
import { redactedError } from '../config/api-url.ts';

/** `--rpc-timeout` and `--time-budget`, as commander hands them over. */
export interface SourceFlags {
  rpcTimeout?: string;
  timeBudget?: string;
}

/** `erc20-etl backfill --contract … --from N --to N [--source node]`: the range as an ad-hoc job, run now. */
export async function backfill(flags: ConnectionFlags & BackfillFlags & MetricsFlags & Pick<SourceFlags, 'timeBudget'>): Promise<void> {
  await exportAndPrint(() => backfillJob(flags), flags, 'backfill');
}

/** `erc20-etl run jobs/NAME.json`: the job file, run now. */
export async function runJobFile(file: string, flags: ConnectionFlags & MetricsFlags & SourceFlags): Promise<void> {
  await exportAndPrint(() => loadJobFile(file), flags, 'run', file);
}

async function exportAndPrint(
  readJob: () => Readonly<JobConfig> | Promise<Readonly<JobConfig>>,
  flags: ConnectionFlags & MetricsFlags & SourceFlags,
  command: 'run' | 'backfill',
  file?: string,
): Promise<void> {
  const jobRead = Promise.resolve().then(readJob);
  // the settings depend on the job's source: a job that cannot be read is checked against either kind of endpoint
  const known = await jobRead.catch(() => undefined);
  const budgetFile = flags.timeBudget;
  const [job, timeoutMs, settings] = await checkAll([
    () => jobRead,
    () => {
      if (flags.rpcTimeout !== undefined && known && known.source !== 'node') {
        const which = file ? `the job file ${file} reads the builder API ("source": "builder")` : 'this backfill reads the builder API (add --source node for a node)';
        throw new ConfigError(`--rpc-timeout applies to node sources only: ${which}.`);
      }
      // a backfill's job is made of its flags, --rpc-timeout checked with them: a bad one is said once, by the job
      if (command === 'backfill' && !known) return undefined;
      return rpcTimeoutMs(flags);
    },
    () => resolveSettings({ flags, env: process.env, needs: { database: true, api: true }, source: known?.source ?? 'any' }),
    () => checkMetricsFlags(flags),
    // a file that cannot be written stops the run before it starts, not after; checked without writing it, so a
    // command refused for another problem leaves an earlier budget as it was
    () => (budgetFile === undefined ? undefined : budgetWritable(budgetFile)),
  ]);
  if (budgetFile !== undefined) await writeBudget(budgetFile, {});
  const budget = budgetFile === undefined ? undefined : createTimeBudget();
  limitHeapGrowth();
  const terminal = createTerminalLines();
  const logger = createLogger({ terminal });
  const exported = withMetricsServed(flags, logger, (metrics) =>
    exportJob(
      { databaseUrl: settings.databaseUrl!, api: settings.api!, logger, terminal, tty: isTty(), rpcTimeoutMs: timeoutMs, ...(metrics && { metrics }), ...(budget && { budget }) },
      job,
      command,
    ),
  ).catch((err: unknown) => {
    throw redactedError(err, settings.api!);
  });
  if (!budget || budgetFile === undefined) {
    process.stdout.write(summaryText(await exported));
    return;
  }
  // a failed run's budget is written too (`"failed": true`): where its time went before it stopped
  const failed = await exported.then(
    () => false,
    () => true,
  );
  const report = budget.report();
  await writeBudget(budgetFile, failed ? { ...report, failed } : report);
  const summary = await exported;
  process.stdout.write(summaryText(summary));
  process.stdout.write(budgetText(report, budgetFile));
}

/** Whether the time budget's file can be written (its folder, and the file if it is there), without writing it. */
async function budgetWritable(file: string): Promise<void> {
  try {
    await access(dirname(resolve(file)), constants.W_OK);
    await access(file, constants.W_OK).catch((err: NodeJS.ErrnoException) => {
      if (err.code !== 'ENOENT') throw err;
    });
  } catch (err) {
    throw budgetError(file, err);
  }
}

const budgetError = (file: string, err: unknown) => new ConfigError(`--time-budget: cannot write ${file} (${(err as Error).message}); name a file in a folder you may write to.`);

/** Writes the time budget's JSON, or says which file could not be written and why. */
async function writeBudget(file: string, report: object): Promise<void> {
  try {
    await writeFile(file, `${JSON.stringify(report, null, 2)}\n`);
  } catch (err) {
    throw budgetError(file, err);
  }
}

function isTty(): boolean {
  return Boolean(process.stderr.isTTY) && process.env['CI'] !== 'true';
}
