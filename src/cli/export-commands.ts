import type { Command } from 'commander';
import type { BackfillFlags } from '../config/load-job.ts';
import { withConnections, type ConnectionFlags } from './connection-flags.ts';
import { withMetrics, type MetricsFlags } from './metrics-flags.ts';
import type { ReportFlags } from './report-action.ts';
import type { SourceFlags } from './export-action.ts';
import type { ProbeFlags } from './probe-action.ts';

const RPC_TIMEOUT_HELP = 'node sources: how long one JSON-RPC call may go unanswered before it is asked again in smaller calls (default 30)';
const TIME_BUDGET_HELP = "write where the run's wall time went (parse, copy, commit, headers, api, other; seconds, as JSON) to this file";

/**
 * `migrate`, `backfill`, `run`, `status`, `probe` and `report`: the exporter's commands. Each action imports its implementation
 * when it runs, so a process loads the code (and the memory) of the one command it runs, and `--help` none.
 */
export function registerExportCommands(program: Command): void {
  withConnections(
    program
      .command('migrate')
      .description('create or update the warehouse tables (safe to run twice, and concurrently)')
      .option('--chain-id <id>', 'upgrading a warehouse written before chains: the chain its rows are from (default: the chain its runs recorded, else 1)'),
    false,
  ).action(async (flags: ConnectionFlags & { chainId?: string }) => {
    const { migrate } = await import('./migrate-action.ts');
    await migrate(flags);
  });

  withConnections(
    withMetrics(
      program
        .command('backfill')
        .description('export a block range now (an ad-hoc run, or a re-run that reconciles the range)')
        .option('--contract <address>', 'token contract (repeatable)', (v: string, prev: string[] | undefined) => [...(prev ?? []), v])
        .option('--from <block>', 'first block, inclusive')
        .option('--to <block>', 'last block, inclusive (capped at the chain head)')
        .option('--page-size <n>', 'rows per API page, 1 to 1000 (default 1000); builder source only')
        .option('--concurrency <n>', 'chunks read at once (default 4)')
        .option('--header-batch-size <n>', 'headers asked per JSON-RPC POST, 1 to 1000 (default 100)')
        .option(
          '--commit-rows <n>',
          'rows a first load commits at once, shared by its COPY streams (the chunks read at once write through at most two, each on a connection of its own and committing at its share, commitRows / streams), 1 to 1000000 (default 10000; 5000 for --source node)',
        )
        .option('--keep-indexes', 'a first load into an empty token_transfers keeps its lookup indexes up row by row, instead of building them after its rows')
        .option('--source <kind>', "where to read: builder (the hosted builder API, default) or node (any Ethereum node's JSON-RPC: eth_getLogs)")
        .option('--chain <id>', 'the chain id the endpoint must serve (eth_chainId): 1 Ethereum (default), 10 OP Mainnet, 8453 Base, …')
        .option('--rpc-timeout <seconds>', RPC_TIMEOUT_HELP)
        .option('--time-budget <file>', TIME_BUDGET_HELP),
    ),
    true,
  ).action(async (flags: ConnectionFlags & BackfillFlags & MetricsFlags & SourceFlags) => {
    const { backfill } = await import('./export-action.ts');
    await backfill(flags);
  });

  withConnections(
    withMetrics(
      program
        .command('run')
        .description('run a job file: its contracts and ranges, or to the chain head')
        .argument('<job-file>', 'e.g. jobs/nightly.json')
        .option('--rpc-timeout <seconds>', RPC_TIMEOUT_HELP)
        .option('--time-budget <file>', TIME_BUDGET_HELP),
    ),
    true,
  ).action(async (file: string, flags: ConnectionFlags & MetricsFlags & SourceFlags) => {
    const { runJobFile } = await import('./export-action.ts');
    await runJobFile(file, flags);
  });

  withConnections(
    program
      .command('status')
      .description('per chain, then per contract: blocks covered, gaps, open ranges, rows, last run; the lag behind the head when CHAIN_API_URL is set; then the task queue')
      .argument('[job-file]', 'limit to the contracts of this job')
      .option('--json', 'one JSON document instead of a table'),
    true,
  ).action(async (file: string | undefined, flags: ConnectionFlags & { json?: boolean }) => {
    const { printStatus } = await import('./status-action.ts');
    await printStatus(file, flags);
  });

  withConnections(
    program
      .command('probe')
      .description(
        'ask the endpoint what it supports: chain id, head, erigon_getHeaderByHash, for a node the largest eth_getLogs range and answer it takes and its batch limit; exits 1 naming what is missing',
      )
      .option('--source <kind>', "builder (the hosted builder API, default) or node (any Ethereum node's JSON-RPC)")
      .option('--json', 'one JSON object instead of text')
      .option('--rpc-timeout <seconds>', 'how long each call may go unanswered (default 30)'),
    true,
  ).action(async (flags: ProbeFlags) => {
    const { probe } = await import('./probe-action.ts');
    await probe(flags);
  });

  withConnections(
    program
      .command('report')
      .description('write one self-contained HTML page with charts: daily transfers and volume per token, coverage per contract, recent runs')
      .option('--out <file>', 'where to write the page, e.g. report.html')
      .option('--days <n>', "UTC days of transfers to chart, whole, the newest transfer's day last (default 90)")
      .option('--runs <n>', 'recent runs to show (default 30)'),
    false,
  ).action(async (flags: ConnectionFlags & ReportFlags) => {
    const { writeReport } = await import('./report-action.ts');
    await writeReport(flags);
  });
}
