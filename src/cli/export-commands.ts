import type { Command } from 'commander';
import type { BackfillFlags } from '../config/load-job.ts';
import { withConnections, type ConnectionFlags } from './connection-flags.ts';
import { withMetrics, type MetricsFlags } from './metrics-flags.ts';
import type { ReportFlags } from './report-action.ts';

/**
 * `migrate`, `backfill`, `run` and `status`: the exporter's commands. Each action imports its implementation
 * when it runs, so a process loads the code (and the memory) of the one command it runs, and `--help` none.
 */
export function registerExportCommands(program: Command): void {
  withConnections(program.command('migrate').description('create or update the warehouse tables (safe to run twice, and concurrently)'), false).action(
    async (flags: ConnectionFlags) => {
      const { migrate } = await import('./migrate-action.ts');
      await migrate(flags);
    },
  );

  withConnections(
    withMetrics(
      program
        .command('backfill')
        .description('export a block range now (an ad-hoc run, or a re-run that reconciles the range)')
        .option('--contract <address>', 'token contract (repeatable)', (v: string, prev: string[] | undefined) => [...(prev ?? []), v])
        .option('--from <block>', 'first block, inclusive')
        .option('--to <block>', 'last block, inclusive (capped at the chain head)')
        .option('--page-size <n>', 'rows per API page, 1 to 1000 (default 1000)')
        .option('--concurrency <n>', 'chunks read at once (default 4)')
        .option('--header-batch-size <n>', 'erigon_getHeaderByHash calls per JSON-RPC POST, 1 to 1000 (default 100)'),
    ),
    true,
  ).action(async (flags: ConnectionFlags & BackfillFlags & MetricsFlags) => {
    const { backfill } = await import('./export-action.ts');
    await backfill(flags);
  });

  withConnections(
    withMetrics(program.command('run').description('run a job file: its contracts and ranges, or to the chain head').argument('<job-file>', 'e.g. jobs/nightly.json')),
    true,
  ).action(async (file: string, flags: ConnectionFlags & MetricsFlags) => {
    const { runJobFile } = await import('./export-action.ts');
    await runJobFile(file, flags);
  });

  withConnections(
    program
      .command('status')
      .description('per contract: blocks covered, gaps, open ranges, rows, last run; and the lag behind the head when CHAIN_API_URL is set')
      .argument('[job-file]', 'limit to the contracts of this job')
      .option('--json', 'one JSON document instead of a table'),
    true,
  ).action(async (file: string | undefined, flags: ConnectionFlags & { json?: boolean }) => {
    const { printStatus } = await import('./status-action.ts');
    await printStatus(file, flags);
  });

  withConnections(
    program
      .command('report')
      .description('write one self-contained HTML page with charts: daily transfers and volume per token, coverage per contract, recent runs')
      .option('--out <file>', 'where to write the page, e.g. report.html')
      .option('--days <n>', 'days of transfers to chart, counted back from the newest (default 90)')
      .option('--runs <n>', 'recent runs to show (default 30)'),
    false,
  ).action(async (flags: ConnectionFlags & ReportFlags) => {
    const { writeReport } = await import('./report-action.ts');
    await writeReport(flags);
  });
}
