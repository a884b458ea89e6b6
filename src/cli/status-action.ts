import { systemClock } from '../common/clock.ts';
import { EtlError } from '../common/errors.ts';
import { createLogger, type Logger } from '../common/logger.ts';
import { loadJobFile } from '../config/load-job.ts';
import { checkAll } from '../config/check-all.ts';
import { resolveSettings } from '../config/settings.ts';
import { jobChain, type JobConfig, type SourceKind } from '../config/job-schema.ts';
import { contractLag } from '../pipeline/contract-lag.ts';
import { createSourceCounters } from '../common/source-counters.ts';
import { createHttpClient } from '../source/http-client.ts';
import { createRpcClient } from '../source/rpc-client.ts';
import { chainId as askChainId } from '../source/node-rpc.ts';
import { createWarehouse, describeConnectionError } from '../warehouse/db.ts';
import { lacksPrivilege } from '../warehouse/pg-errors.ts';
import { contractStatus, type ContractStatus } from '../warehouse/status.ts';
import { coveredBounds } from '../warehouse/coverage.ts';
import { queueStatus, type QueueStatus } from '../queue/queue-status.ts';
import { pausedAutovacuum, unbuiltIndexes } from '../warehouse/deferred-indexes.ts';
import type { ConnectionFlags } from './connection-flags.ts';
import { ensureMigrated } from './exporter.ts';
import { skippedText } from './summary.ts';
import { printable, printableLine } from '../common/printable.ts';

/**
 * `erc20-etl status [job-file] [--json]`: per chain and contract, what the warehouse holds (with the logs its last run
 * skipped as not ERC-20 transfers), and, for the chain `CHAIN_API_URL` serves when it is set, the lag behind its head.
 */
export async function printStatus(file: string | undefined, flags: ConnectionFlags & { json?: boolean }): Promise<void> {
  const [job, settings] = await checkAll([() => (file ? loadJobFile(file) : undefined), () => resolveSettings({ flags, env: process.env, needs: { database: true, api: false } })]);
  const logger = createLogger();
  const warehouse = createWarehouse({ databaseUrl: settings.databaseUrl!, logger, maxConnections: 2 });
  try {
    // an unmigrated warehouse is told to migrate, not shown a missing relation
    await ensureMigrated(warehouse).catch((err: unknown) => {
      throw err instanceof EtlError ? err : describeConnectionError(err);
    });
    const contracts = await contractStatus(warehouse.db, job && { chainId: jobChain(job).chain, contracts: job.contracts.map((c) => c.address) }).catch((err: unknown) => {
      throw describeConnectionError(err);
    });
    // where the job's own runs begin, per contract: its blocks before that are read by its next run
    const jobFirst = job
      ? await coveredBounds(
          warehouse.db,
          jobChain(job).chain,
          job.name,
          job.contracts.map((c) => c.address),
        ).then(
          (bounds) => bounds.first,
          (err: unknown) => {
            throw describeConnectionError(err);
          },
        )
      : new Map<string, number>();
    const notReadOf = (s: ContractStatus) => notRead(jobContract(job, s), jobFirst.get(s.contract));
    // a role that may read the transfers but not the queue still sees them, and is told what it misses
    let queueUnreadable: string | undefined;
    const queue = await queueStatus(warehouse.db).catch((err: unknown) => {
      if (!lacksPrivilege(err)) throw describeConnectionError(err);
      queueUnreadable = `${(err as Error).message}: grant this role the queue's tables as README "Database privileges" shows to see it`;
      return undefined;
    });
    // lookup indexes a first load builds after its rows: one going on, or one stopped before it built them
    const unbuilt = await unbuiltIndexes(warehouse.db).catch((err: unknown) => {
      throw describeConnectionError(err);
    });
    // and autovacuum it paused on token_transfers meanwhile
    const paused = await pausedAutovacuum(warehouse.db).catch((err: unknown) => {
      throw describeConnectionError(err);
    });
    const endpoint = await chainHead(flags, logger, job?.source ?? 'any');
    const chains = [...new Set(contracts.map((c) => c.chainId))];
    if (flags.json) {
      const known = endpoint && 'head' in endpoint ? endpoint : undefined;
      const head = known?.head ?? null;
      process.stdout.write(
        `${JSON.stringify(
          {
            head,
            headChainId: known?.chainId ?? null,
            chains,
            // lag: blocks left to the head, or to the job file's toBlock (null where the head is not known)
            // notRead (with a job file): its blocks of the contract before the first covered, which its next run reads
            contracts: contracts.map((c) => ({ ...c, ...(job && { notRead: notReadOf(c) }), lag: lagOf(c, endpoint, boundOf(job, c)) ?? null })),
            queue: queue ?? null,
            ...(queueUnreadable && { queueUnreadable }),
            ...(unbuilt?.length && { unbuiltIndexes: unbuilt }),
            ...(paused && { pausedAutovacuum: paused }),
          },
          null,
          2,
        )}\n`,
      );
      return;
    }
    const span = (s: { fromBlock: number; toBlock: number }) => `${s.fromBlock}–${s.toBlock}`;
    if (chains.length) process.stdout.write(`${chains.length} chain(s): ${chains.join(', ')}\n`);
    let chainShown: string | undefined;
    for (const s of contracts) {
      if (s.chainId !== chainShown) {
        chainShown = s.chainId;
        process.stdout.write(`chain ${s.chainId}\n`);
      }
      const lag = lagText(s, endpoint, boundOf(job, s));
      const before = notReadOf(s);
      process.stdout.write(
        `${s.contract}${s.symbol ? ` (${printable(s.symbol)})` : ''}\n` +
          `  covered:     ${s.covered.map(span).join(', ') || 'nothing yet'}\n` +
          (before.length ? `  not read:    ${before.map(span).join(', ')} (the job file's blocks before the first its runs covered; its next run reads them)\n` : '') +
          `  gaps:        ${s.gaps.map(span).join(', ') || 'none'}\n` +
          (s.inProgress.length ? `  in progress: ${s.inProgress.map(span).join(', ')} (${inProgressText(s.lastRun)})\n` : '') +
          `  rows:        ${s.rows}\n` +
          (s.lastRun && s.skippedLogs && (s.skippedLogs.erc721 || s.skippedLogs.other)
            ? `  skipped:     ${skippedText(s.skippedLogs)} in run #${s.lastRun.id} (not ERC-20 transfers, not stored)\n`
            : '') +
          `  last run:    ${s.lastRun ? lastRunText(s.lastRun) : 'none'}\n` +
          `  lag:         ${lag}\n`,
      );
    }
    if (!contracts.length) process.stdout.write('No contracts exported yet.\n');
    if (queue) process.stdout.write(queueText(queue));
    if (queueUnreadable) process.stdout.write(`queue: not readable by this role (${queueUnreadable})\n`);
    if (unbuilt?.length) process.stdout.write(unbuiltText(unbuilt));
    if (paused) process.stdout.write(pausedText(paused, (unbuilt?.length ?? 0) > 0));
  } finally {
    await warehouse.close();
  }
}

/** The lookup indexes a first load dropped to build after its rows, and who builds them. */
function unbuiltText(unbuilt: NonNullable<Awaited<ReturnType<typeof unbuiltIndexes>>>): string {
  const runs = [...new Set(unbuilt.map((i) => (i.runId === null ? 'a run' : `run #${i.runId}`)))].join(', ');
  return (
    `indexes:     ${unbuilt.map((i) => i.name).join(', ')} not built yet: the first load of ${runs} builds them after its rows; ` +
    'if it stopped before, the next run or `erc20-etl migrate` (as the owner of the tables) builds them\n'
  );
}

/** Autovacuum a first load paused on token_transfers, and who resumes it. */
function pausedText(paused: NonNullable<Awaited<ReturnType<typeof pausedAutovacuum>>>, unbuilt: boolean): string {
  const run = paused.runId === null ? 'a run' : `run #${paused.runId}`;
  return (
    `autovacuum:  paused on token_transfers by the first load of ${run}; ` +
    (unbuilt ? 'it resumes once the lookup indexes are built (the same runs build them)\n' : 'the next run by the owner of the tables, or `erc20-etl migrate`, resumes it\n')
  );
}

/** Who finishes the blocks in progress: the last run while it works, else the next. */
function inProgressText(run: ContractStatus['lastRun']): string {
  return run && run.status === 'running' && !run.abandoned ? `run #${run.id} is reading it` : 'the next run resumes it';
}

/** The queue in two or three lines: what waits, what runs, who works it, and the last error. */
function queueText(q: QueueStatus): string {
  const workers = q.workers.length
    ? `${q.workers.length} worker process(es) heard from in the last minute (${q.workers.map((w) => `${w.host}:${w.pid}`).join(', ')})`
    : 'no worker heard from in the last minute';
  return (
    `queue: ${q.waiting} task(s) waiting, ${q.running} running, ${q.givenUp} given up${q.givenUp ? ' (`erc20-etl enqueue` queues their chunks afresh)' : ''}\n` +
    `  ${workers}\n` +
    (q.lastError ? `  last error: ${printableLine(q.lastError)}\n` : '')
  );
}

/** The last run in a line: its id, job, status (a run no process holds any more said so), chain, start and error. */
function lastRunText(run: NonNullable<ContractStatus['lastRun']>): string {
  const status = run.abandoned ? "ended without finishing (no process holds its job: it was killed or crashed; the job's next run resumes its work)" : run.status;
  return `#${run.id} ${run.job} ${status}, chain ${run.chainId}, at ${run.startedAt.toISOString()}${run.error ? ` — ${printableLine(run.error)}` : ''}`;
}

/**
 * How far a contract's coverage is behind the head of the endpoint's chain, or behind its `toBlock` (`bound`) when the
 * job file ends it before the head, as the lag metric counts it (`contractLag`); unknown for other chains.
 */
function lagText(s: ContractStatus, endpoint: EndpointHead | undefined, bound: number | undefined): string {
  if (endpoint === undefined) return 'unknown (set CHAIN_API_URL)';
  if ('unknown' in endpoint) return `unknown (${endpoint.unknown})`;
  if (endpoint.chainId !== s.chainId) return `unknown (CHAIN_API_URL serves chain ${endpoint.chainId}: point it at a chain ${s.chainId} endpoint)`;
  const lag = lagOf(s, endpoint, bound);
  if (lag === undefined) return 'unknown (nothing covered yet)';
  return bound !== undefined && bound < endpoint.head
    ? `${lag} blocks behind its toBlock (${bound}) in the job file; the head is ${endpoint.head}`
    : `${lag} blocks behind the head (${endpoint.head})`;
}

/** The lag in blocks (`contractLag`), when the endpoint's head is known, of the contract's chain, and something is covered. */
function lagOf(s: ContractStatus, endpoint: EndpointHead | undefined, bound: number | undefined): number | undefined {
  const top = s.covered.at(-1)?.toBlock;
  if (endpoint === undefined || 'unknown' in endpoint || endpoint.chainId !== s.chainId || top === undefined) return undefined;
  return contractLag(endpoint.head, bound, top);
}

/** The last block the job file asks of the contract (its `toBlock`), when status was given one of its chain. */
function boundOf(job: JobConfig | undefined, s: ContractStatus): number | undefined {
  return jobContract(job, s)?.toBlock;
}

/** The job file's entry of the contract, on the job's chain. */
function jobContract(job: JobConfig | undefined, s: ContractStatus): JobConfig['contracts'][number] | undefined {
  if (!job || String(jobChain(job).chain) !== s.chainId) return undefined;
  return job.contracts.find((c) => c.address.toLowerCase() === s.contract.toLowerCase());
}

/**
 * The job file's blocks of the contract (up to its `toBlock`) before the first block the job's runs covered, which its
 * next run reads; none when the job has covered nothing yet (its first run reads them all).
 */
function notRead(entry: JobConfig['contracts'][number] | undefined, first: number | undefined): { fromBlock: number; toBlock: number }[] {
  if (!entry || first === undefined || entry.fromBlock >= first) return [];
  return [{ fromBlock: entry.fromBlock, toBlock: Math.min(first - 1, entry.toBlock ?? Number.POSITIVE_INFINITY) }];
}

/** The endpoint's chain head and chain, or why they are not known. */
type EndpointHead = { head: number; chainId: string } | { unknown: string };

/**
 * The chain head from `eth_blockNumber`, which a builder API and a node both answer, and the chain it is of
 * (`eth_chainId`); undefined without an API URL; why not, when the endpoint did not answer them.
 */
async function chainHead(flags: ConnectionFlags, logger: Logger, source: SourceKind | 'any'): Promise<EndpointHead | undefined> {
  if (!flags.apiUrl && !process.env['CHAIN_API_URL']) return undefined;
  const { api } = resolveSettings({ flags, env: process.env, needs: { database: false, api: true }, source });
  const http = createHttpClient({
    endpoint: api!,
    config: { timeoutMs: 10_000, connections: 1, maxResponseBytes: 1 << 20, retries: 2 },
    logger,
    clock: systemClock,
    counters: createSourceCounters(),
  });
  try {
    const head = await createRpcClient({ http }).blockNumber();
    if (head === undefined) return { unknown: 'CHAIN_API_URL does not answer eth_blockNumber' };
    return { head, chainId: String(await askChainId(http)) };
  } catch (err) {
    logger.warn({ msg: 'could not read the chain head or its chain id (eth_blockNumber, eth_chainId); lag unknown', err: api!.redact((err as Error).message) });
    return { unknown: 'CHAIN_API_URL did not answer eth_blockNumber and eth_chainId: see the warning above' };
  } finally {
    await http.close();
  }
}
