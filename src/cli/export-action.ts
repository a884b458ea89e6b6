import { ConfigError } from '../common/errors.ts';
import { createLogger, createTerminalLines } from '../common/logger.ts';
import { backfillJob, loadJobFile, rpcTimeoutMs, type BackfillFlags } from '../config/load-job.ts';
import { resolveSettings } from '../config/settings.ts';
import type { JobConfig } from '../config/job-schema.ts';
import type { ConnectionFlags } from './connection-flags.ts';
import { exportJob } from './exporter.ts';
import { limitHeapGrowth } from './heap-growth.ts';
import { summaryText } from './summary.ts';
import { withMetricsServed, type MetricsFlags } from './metrics-flags.ts';

/** `--rpc-timeout`, as commander hands it over. */
export interface SourceFlags {
  rpcTimeout?: string;
}

/** `erc20-etl backfill --contract … --from N --to N [--source node]`: the range as an ad-hoc job, run now. */
export async function backfill(flags: ConnectionFlags & BackfillFlags & MetricsFlags): Promise<void> {
  const job = backfillJob(flags);
  await exportAndPrint(job, flags, 'backfill');
}

/** `erc20-etl run jobs/NAME.json`: the job file, run now. */
export async function runJobFile(file: string, flags: ConnectionFlags & MetricsFlags & SourceFlags): Promise<void> {
  const job = await loadJobFile(file);
  await exportAndPrint(job, flags, 'run', file);
}

async function exportAndPrint(job: Readonly<JobConfig>, flags: ConnectionFlags & MetricsFlags & SourceFlags, command: 'run' | 'backfill', file?: string): Promise<void> {
  if (flags.rpcTimeout !== undefined && job.source !== 'node') {
    const which = file ? `the job file ${file} reads the builder API ("source": "builder")` : 'this backfill reads the builder API (add --source node for a node)';
    throw new ConfigError(`--rpc-timeout applies to node sources only: ${which}.`);
  }
  const timeoutMs = rpcTimeoutMs(flags);
  const settings = resolveSettings({ flags, env: process.env, needs: { database: true, api: true }, source: job.source });
  limitHeapGrowth();
  const terminal = createTerminalLines();
  const logger = createLogger({ terminal });
  const summary = await withMetricsServed(flags, logger, (metrics) =>
    exportJob({ databaseUrl: settings.databaseUrl!, api: settings.api!, logger, terminal, tty: isTty(), rpcTimeoutMs: timeoutMs, ...(metrics && { metrics }) }, job, command),
  );
  process.stdout.write(summaryText(summary));
}

function isTty(): boolean {
  return Boolean(process.stderr.isTTY) && process.env['CI'] !== 'true';
}
