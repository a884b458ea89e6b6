import type { Command } from 'commander';
import { systemClock } from '../common/clock.ts';
import { createLogger } from '../common/logger.ts';
import { createSourceCounters } from '../source/counters.ts';
import { createHttpClient } from '../source/http-client.ts';
import { createRpcClient } from '../source/rpc-client.ts';
import { backfillJob, loadJobFile } from '../config/load-job.ts';
import { resolveSettings } from '../config/settings.ts';
import type { RunSummary } from '../pipeline/run-job.ts';
import { createWarehouse, describeConnectionError } from '../warehouse/db.ts';
import { migrateToLatest } from '../warehouse/migrate.ts';
import { contractStatus } from '../warehouse/status.ts';
import { exportJob } from './exporter.ts';
import { summaryText } from './summary.ts';

interface ConnectionFlags {
  databaseUrl?: string;
  apiUrl?: string;
}

const withConnections = (cmd: Command, api: boolean) => {
  cmd.option('--database-url <url>', 'PostgreSQL URL (default: $DATABASE_URL)');
  if (api) cmd.option('--api-url <url>', 'chain API base URL including the project id (default: $CHAIN_API_URL)');
  return cmd;
};

/** `migrate`, `backfill`, `run` and `status`: the exporter's commands. */
export function registerExportCommands(program: Command): void {
  withConnections(program.command('migrate').description('create or update the warehouse tables (safe to run twice, and concurrently)'), false).action(
    async (flags: ConnectionFlags) => {
      const settings = resolveSettings({ flags, env: process.env, needs: { database: true, api: false } });
      const logger = createLogger();
      const warehouse = createWarehouse({ databaseUrl: settings.databaseUrl!, logger, maxConnections: 2 });
      try {
        const result = await migrateToLatest(warehouse).catch((err: unknown) => {
          throw describeConnectionError(err);
        });
        process.stdout.write(
          result.applied.length
            ? `erc20-etl migrate: applied ${result.applied.join(', ')}\n`
            : `erc20-etl migrate: up to date (${result.alreadyApplied} migration(s) applied before)\n`,
        );
      } finally {
        await warehouse.close();
      }
    },
  );

  withConnections(
    program
      .command('backfill')
      .description('export a block range now (an ad-hoc run, or a re-run that reconciles the range)')
      .option('--contract <address>', 'token contract (repeatable)', (v: string, prev: string[] | undefined) => [...(prev ?? []), v])
      .option('--from <block>', 'first block, inclusive')
      .option('--to <block>', 'last block, inclusive (capped at the chain head)')
      .option('--page-size <n>', 'rows per API page, 1 to 1000 (default 1000)')
      .option('--concurrency <n>', 'chunks read at once (default 4)'),
    true,
  ).action(async (flags: ConnectionFlags & { contract?: string[]; from?: string; to?: string; pageSize?: string; concurrency?: string }) => {
    const job = backfillJob(flags);
    const settings = resolveSettings({ flags, env: process.env, needs: { database: true, api: true } });
    printSummary(await exportJob({ databaseUrl: settings.databaseUrl!, api: settings.api!, logger: createLogger(), tty: isTty() }, job, 'backfill'));
  });

  withConnections(
    program.command('run').description('run a job file: its contracts and ranges, or to the chain head').argument('<job-file>', 'e.g. jobs/nightly.json'),
    true,
  ).action(async (file: string, flags: ConnectionFlags) => {
    const job = await loadJobFile(file);
    const settings = resolveSettings({ flags, env: process.env, needs: { database: true, api: true } });
    printSummary(await exportJob({ databaseUrl: settings.databaseUrl!, api: settings.api!, logger: createLogger(), tty: isTty() }, job, 'run'));
  });

  withConnections(
    program
      .command('status')
      .description('per contract: blocks covered, gaps, open ranges, rows, last run; and the lag behind the head when CHAIN_API_URL is set')
      .argument('[job-file]', 'limit to the contracts of this job')
      .option('--json', 'one JSON document instead of a table'),
    true,
  ).action(async (file: string | undefined, flags: ConnectionFlags & { json?: boolean }) => {
    const job = file ? await loadJobFile(file) : undefined;
    const settings = resolveSettings({ flags, env: process.env, needs: { database: true, api: false } });
    const logger = createLogger();
    const warehouse = createWarehouse({ databaseUrl: settings.databaseUrl!, logger, maxConnections: 2 });
    try {
      const status = await contractStatus(warehouse.db, job?.contracts.map((c) => c.address)).catch((err: unknown) => {
        throw describeConnectionError(err);
      });
      const head = await chainHead(flags, logger);
      if (flags.json) {
        process.stdout.write(`${JSON.stringify({ head: head ?? null, contracts: status }, null, 2)}\n`);
        return;
      }
      const span = (s: { fromBlock: number; toBlock: number }) => `${s.fromBlock}–${s.toBlock}`;
      for (const s of status) {
        const top = s.covered.at(-1)?.toBlock;
        const lag = head !== undefined && top !== undefined ? `${head - top} blocks behind the head (${head})` : 'lag unknown (set CHAIN_API_URL)';
        process.stdout.write(
          `${s.contract}${s.symbol ? ` (${s.symbol})` : ''}\n` +
            `  covered:     ${s.covered.map(span).join(', ') || 'nothing yet'}\n` +
            `  gaps:        ${s.gaps.map(span).join(', ') || 'none'}\n` +
            (s.inProgress.length ? `  in progress: ${s.inProgress.map(span).join(', ')} (the next run resumes it)\n` : '') +
            `  rows:        ${s.rows}\n` +
            `  last run:    ${s.lastRun ? `#${s.lastRun.id} ${s.lastRun.job} ${s.lastRun.status} at ${s.lastRun.startedAt.toISOString()}${s.lastRun.error ? ` — ${s.lastRun.error}` : ''}` : 'none'}\n` +
            `  lag:         ${lag}\n`,
        );
      }
      if (!status.length) process.stdout.write('No contracts exported yet.\n');
    } finally {
      await warehouse.close();
    }
  });
}

async function chainHead(flags: ConnectionFlags, logger: ReturnType<typeof createLogger>): Promise<number | undefined> {
  if (!flags.apiUrl && !process.env['CHAIN_API_URL']) return undefined;
  const { api } = resolveSettings({ flags, env: process.env, needs: { database: false, api: true } });
  const http = createHttpClient({
    endpoint: api!,
    config: { timeoutMs: 10_000, connections: 1, maxResponseBytes: 1 << 20, retries: 2 },
    logger,
    clock: systemClock,
    counters: createSourceCounters(),
  });
  try {
    return await createRpcClient({ http }).blockNumber();
  } catch (err) {
    logger.warn({ msg: 'could not read the chain head; lag unknown', err: api!.redact((err as Error).message) });
    return undefined;
  } finally {
    await http.close();
  }
}

function isTty(): boolean {
  return Boolean(process.stderr.isTTY) && process.env['CI'] !== 'true';
}

function printSummary(s: RunSummary): void {
  process.stdout.write(summaryText(s));
}
