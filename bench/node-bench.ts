import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { LogsErrorStyle } from '../src/devnet/logs-limit-errors.ts';
import type { DevnetStats } from '../src/devnet/stats.ts';
import { createBenchDatabase, withClient, type BenchDatabase, type BenchPostgres } from './bench-database.ts';
import { plainCopyBaseline, readTruth, type CopyBaseline } from './copy-baseline.ts';
import { startDevnetProcess, type DevnetProcess } from './devnet-process.ts';
import type { ChainFigures, ChainSize, Outcome } from './exporter-bench.ts';
import type { Probes } from './exporter-process.ts';
import { backfillArgs, measureLoad, type LoadFigures } from './measure-load.ts';
import { medianPair, type PairRatio } from './pairs.ts';
import { postgresCpuProbe } from './postgres-cpu.ts';
import { clockTicksPerSecond } from './proc-stat.ts';
import { logsCallFigures, startRpcTap, type LogsCallFigures } from './rpc-tap.ts';
import { lastLearnedLogsRange } from './run-ledger.ts';
import { enableStatements } from './statements.ts';

export interface NodeBenchOptions {
  postgres: BenchPostgres;
  /** The chain: the dense chain of the builder figures. */
  chain: ChainSize;
  tokens: number;
  /** The reference server's `--logs-max-results`: the results cap every `eth_getLogs` answer must stay under. */
  maxResults: number;
  /** One reference server per style (`--logs-error-style`), each with its two runs over `styleBlocks`. */
  styles: readonly LogsErrorStyle[];
  /** The newest blocks of the chain each style's two runs read (through the tap). */
  styleBlocks: number;
  /**
   * The first style's server also serves the whole chain to `pairs` first loads, each timed against a plain COPY of
   * the same rows, then a second run after the last; the exporter talks to it directly there (no tap), and the server
   * counts.
   */
  full: boolean;
  /** The whole chain's first loads, each after a plain COPY into a fresh database; the figure is the median pair's. */
  pairs: number;
  pageSize: number;
  concurrency: number;
  runTimeoutMs: number;
  statements?: boolean;
  note(line: string): void;
}

/** `eth_getLogs` calls of one run as the reference server counted them: no tap between it and the exporter. */
export interface ServerLogsCounts {
  calls: number;
  /** Calls refused for size: over the results cap or the block-range cap (`/__stats`' `rpcOutcomes`). */
  refused: number;
  /** JSON-RPC and HTTP errors of the run, by code: anything beside the refusals would show here. */
  errors: Record<string, number>;
}

export interface NodeFullResult {
  style: LogsErrorStyle;
  chain: ChainFigures;
  /** The plain COPY and the first load of the median pair (`medianPair`). */
  copy: CopyBaseline;
  first: LoadFigures & { logs: ServerLogsCounts };
  /** first.rowsPerSecond ÷ copy.rowsPerSecond */
  firstLoadVsCopy: number;
  /** Every pair (a plain COPY, then a first load into a fresh database), in the order they ran. */
  pairs: NodePair[];
  /** The range stored for the job and host after the last pair's first load: where the second run starts. */
  learnedRange?: number;
  second: LoadFigures & { logs: ServerLogsCounts };
}

/** A plain COPY of the whole chain and a first load into a fresh database, timed one after the other. */
export interface NodePair {
  copy: CopyBaseline;
  first: LoadFigures & { logs: ServerLogsCounts };
  /** first.rowsPerSecond ÷ copy.rowsPerSecond */
  ratio: number;
}

/**
 * The pairs as `pairsText` prints them.
 *
 * @example nodePairRatios(full.pairs) // → [{ ratio: 0.98, loadSeconds: 18.9, copySeconds: 18.6, peakRssMb: 187 }, …]
 */
export function nodePairRatios(pairs: readonly NodePair[]): PairRatio[] {
  return pairs.map((p) => ({ ratio: p.ratio, loadSeconds: p.first.wallSeconds, copySeconds: p.copy.seconds, peakRssMb: p.first.peakRssMb }));
}

/** One run through the tap. */
export interface NodeRun {
  load: LoadFigures;
  /** What crossed the wire. */
  logs: LogsCallFigures;
  /** The eth_getLogs calls the server counted: equal to `logs.calls` unless the tap missed some. */
  serverCalls: number;
  /** The range stored for the job and the tap's host after the run. */
  learnedRange?: number;
}

export interface NodeStyleResult {
  style: LogsErrorStyle;
  maxResults: number;
  /** The blocks read, and the chain's transfers and distinct blocks in them. */
  span: { fromBlock: number; toBlock: number; transfers: number; distinctBlocks: number };
  first: NodeRun;
  /** The same span again: it starts from the range the first run stored. */
  second: NodeRun;
}

export interface NodeBenchResult {
  maxResults: number;
  /** Undefined when not asked for (`full: false`). */
  full?: Outcome<NodeFullResult>;
  styles: { style: LogsErrorStyle; result: Outcome<NodeStyleResult> }[];
}

/** The plain-COPY baseline's rows as COPY text, in the full scenario's temporary folder. */
const COPY_FILE = 'transfers.copy';

/**
 * The node source's figures (issue 16): for each error style, a reference server with `--logs-max-results` and
 * that style, on the dense chain. Each style's server gets two backfills of its newest `styleBlocks` blocks
 * (`--source node`, a fresh database) through a tap that counts every `eth_getLogs` call, refusal and log
 * answered; the second starts from the range the first stored. The first style's server also gets, first,
 * the whole chain: `pairs` pairs of a plain COPY of its rows and a timed first load, each in a fresh database (the
 * figures are the median pair's), then a second run after the last, straight to the server (its counters then count
 * the calls and refusals). A failed part is reported and the others go on.
 *
 * @example
 * const node = await benchNode({ postgres, chain: { transfers: 1e6, blocks: 1e5 }, tokens: 3, maxResults: 10_000,
 *   styles: ['infura', 'reth'], styleBlocks: 20_000, full: true, pairs: 3, pageSize: 1000, concurrency: 4, runTimeoutMs: 1_200_000, note });
 * node.styles[0].result.ok && node.styles[0].result.value.first.logs.refused // → 2
 */
export async function benchNode(o: NodeBenchOptions): Promise<NodeBenchResult> {
  const ticksPerSecond = clockTicksPerSecond();
  const postgresCpu = await postgresCpuProbe(o.postgres.serverUrl, ticksPerSecond);
  const attempt = async <T>(label: string, work: () => Promise<T>): Promise<Outcome<T>> => {
    try {
      return { ok: true, value: await work() };
    } catch (err) {
      const error = err instanceof Error ? err.message : String(err);
      o.note(`${label}: failed: ${error}`);
      return { ok: false, error };
    }
  };
  const probesOf = (devnet: DevnetProcess): Probes => ({ ticksPerSecond, serverPid: devnet.pid, serverStats: devnet.stats, ...(postgresCpu && { postgresCpu }) });
  const withDatabase = async <T>(label: string, work: (db: BenchDatabase, statements: boolean) => Promise<T>): Promise<T> => {
    const db = await createBenchDatabase(o.postgres.serverUrl, label);
    try {
      const statements = o.statements === true && (await withClient(db.url, enableStatements));
      return await work(db, statements);
    } finally {
      await db.drop();
    }
  };
  const learned = (db: BenchDatabase) => withClient(db.url, lastLearnedLogsRange);
  const nodeArgs = (devnet: DevnetProcess, blocks: number) => [...backfillArgs(devnet, blocks, { concurrency: o.concurrency }), '--source', 'node'];

  /** The span's counts, from the first server's truth: every server of the bench serves the same chain. */
  let spanTruth: NodeStyleResult['span'] | undefined;

  const fullPart = async (devnet: DevnetProcess, style: LogsErrorStyle): Promise<NodeFullResult> => {
    const tmp = await mkdtemp(join(tmpdir(), 'erc20-etl-bench-'));
    try {
      const fromBlock = devnet.head - o.styleBlocks + 1;
      const truth = await readTruth(devnet.origin, join(tmp, COPY_FILE), fromBlock);
      if (truth.rows !== o.chain.transfers) throw new Error(`the server's truth has ${truth.rows} transfers, expected ${o.chain.transfers}`);
      spanTruth ??= { fromBlock, toBlock: devnet.head, transfers: truth.from!.rows, distinctBlocks: truth.from!.distinctBlocks };
      const chain = { ...o.chain, tokens: devnet.contracts.length, distinctBlocks: truth.distinctBlocks, serverStartupSeconds: devnet.startupSeconds };
      const measured: NodePair[] = [];
      let after: Pick<NodeFullResult, 'second' | 'learnedRange'> | undefined;
      for (let k = 1; k <= o.pairs; k++) {
        const which = o.pairs > 1 ? ` (pair ${k} of ${o.pairs})` : '';
        await withDatabase(`node_full_${style}`, async (db, statements) => {
          const ctx = {
            devnet,
            db,
            postgres: o.postgres,
            probes: probesOf(devnet),
            statements,
            chain,
            pageSize: o.pageSize,
            concurrency: o.concurrency,
            timeoutMs: o.runTimeoutMs,
            note: o.note,
          };
          o.note(`node ${style}: plain COPY of ${fmt(chain.transfers)} rows into a copy of token_transfers${which}`);
          const copy = await plainCopyBaseline(db.url, join(tmp, COPY_FILE), chain.transfers, postgresCpu);
          o.note(`node ${style}: first load (backfill --source node of ${fmt(chain.transfers)} transfers, straight to the server)${which}`);
          const first = await measureLoad(ctx, nodeArgs(devnet, chain.blocks), { rows: chain.transfers, newBlocks: chain.distinctBlocks });
          measured.push({ copy, first: { ...first, logs: serverLogsCounts(await devnet.stats()) }, ratio: first.rowsPerSecond / copy.rowsPerSecond });
          if (k < o.pairs) return;
          // the last pair's warehouse gets the second run
          const learnedRange = await learned(db);
          o.note(`node ${style}: second run of the same span (from the learned range, ${learnedRange ?? 'none'} blocks)`);
          const second = await measureLoad(ctx, nodeArgs(devnet, chain.blocks), { rows: chain.transfers, newBlocks: 0 });
          after = { second: { ...second, logs: serverLogsCounts(await devnet.stats()) }, ...(learnedRange !== undefined && { learnedRange }) };
        });
      }
      if (!after) throw new Error(`the whole chain's second run did not run (pairs: ${o.pairs})`);
      const median = medianPair(measured);
      return {
        style,
        chain,
        copy: median.copy,
        first: median.first,
        firstLoadVsCopy: median.ratio,
        pairs: measured,
        ...after,
      };
    } finally {
      await rm(tmp, { recursive: true, force: true });
    }
  };

  const stylePart = (devnet: DevnetProcess, style: LogsErrorStyle) =>
    withDatabase(`node_${style}`, async (db, statements) => {
      const fromBlock = devnet.head - o.styleBlocks + 1;
      if (!spanTruth) {
        const truth = await readTruth(devnet.origin, undefined, fromBlock);
        spanTruth = { fromBlock, toBlock: devnet.head, transfers: truth.from!.rows, distinctBlocks: truth.from!.distinctBlocks };
      }
      const span = spanTruth;
      if (span.fromBlock !== fromBlock || span.toBlock !== devnet.head) throw new Error(`this server's chain ends at ${devnet.head}, the first one's at ${span.toBlock}`);
      const tap = await startRpcTap(devnet.apiUrl);
      try {
        const ctx = {
          devnet: { ...devnet, apiUrl: tap.url },
          db,
          postgres: o.postgres,
          probes: probesOf(devnet),
          statements,
          chain: span,
          pageSize: o.pageSize,
          concurrency: o.concurrency,
          timeoutMs: o.runTimeoutMs,
          note: o.note,
        };
        const run = async (newBlocks: number): Promise<NodeRun> => {
          tap.take();
          const load = await measureLoad(ctx, nodeArgs(devnet, o.styleBlocks), { rows: span.transfers, newBlocks });
          const logs = logsCallFigures(tap.take());
          const serverCalls = (await devnet.stats()).rpcCalls['eth_getLogs'] ?? 0;
          const learnedRange = await learned(db);
          o.note(
            `  eth_getLogs: ${logs.calls} calls, ${logs.refused} refused, ${fmt(logs.meanLogs)} logs per answer (largest ${fmt(logs.maxLogs)}); ` +
              `learned range ${learnedRange ?? 'none'}`,
          );
          return { load, logs, serverCalls, ...(learnedRange !== undefined && { learnedRange }) };
        };
        o.note(`node ${style}: first run (backfill --source node of blocks ${span.fromBlock}–${span.toBlock}, ${fmt(span.transfers)} transfers, through the tap)`);
        const first = await run(span.distinctBlocks);
        o.note(`node ${style}: second run of the same span`);
        const second = await run(0);
        return { style, maxResults: o.maxResults, span, first, second };
      } finally {
        await tap.close();
      }
    });

  let full: Outcome<NodeFullResult> | undefined;
  const styles: NodeBenchResult['styles'] = [];
  for (const [i, style] of o.styles.entries()) {
    const withFull = o.full && i === 0;
    const flags = ['--logs-max-results', String(o.maxResults), '--logs-error-style', style];
    o.note(`node ${style}: starting the reference server (${fmt(o.chain.transfers)} transfers over ${fmt(o.chain.blocks)} blocks, ${flags.join(' ')})`);
    let devnet: DevnetProcess;
    try {
      devnet = await startDevnetProcess({ ...o.chain, tokens: o.tokens }, flags);
    } catch (err) {
      const error = err instanceof Error ? err.message : String(err);
      o.note(`node ${style}: failed: ${error}`);
      if (withFull) full = { ok: false, error };
      styles.push({ style, result: { ok: false, error } });
      continue;
    }
    try {
      if (withFull) full = await attempt(`node ${style} (whole chain)`, () => fullPart(devnet, style));
      styles.push({ style, result: await attempt(`node ${style}`, () => stylePart(devnet, style)) });
    } finally {
      await devnet.stop();
    }
  }
  return { maxResults: o.maxResults, ...(full && { full }), styles };
}

/**
 * The server's count of a run's `eth_getLogs` calls, and of its refusals for size: calls refused over the results
 * cap or the block-range cap, as `/__stats` counts them per method (a code alone would not do: arbitrum's
 * -32000 is also the tokens' metadata reverts'; `errors` shows every error by code beside them).
 *
 * @example serverLogsCounts({ …, rpcCalls: { eth_getLogs: 44 }, errors: { '-32005': 3 }, rpcOutcomes: { eth_getLogs: { answered: 41, refused: { resultsCap: 3 } } } })
 * // → { calls: 44, refused: 3, errors: { '-32005': 3 } }
 */
export function serverLogsCounts(stats: DevnetStats): ServerLogsCounts {
  const refused = stats.rpcOutcomes['eth_getLogs']?.refused ?? {};
  return { calls: stats.rpcCalls['eth_getLogs'] ?? 0, refused: (refused['resultsCap'] ?? 0) + (refused['rangeCap'] ?? 0), errors: stats.errors };
}

function fmt(n: number): string {
  return Number.isFinite(n) ? Math.round(n).toLocaleString('en-US') : 'n/a';
}
