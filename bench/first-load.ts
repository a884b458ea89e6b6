import { createReadStream, createWriteStream } from 'node:fs';
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { pipeline } from 'node:stream/promises';
import copyStreams from 'pg-copy-streams';
import { createBenchDatabase, withClient, type BenchPostgres } from './bench-database.ts';
import { checkpoint, readTruth } from './copy-baseline.ts';
import { startDevnetProcess, type DevnetProcess } from './devnet-process.ts';
import type { Probes } from './exporter-process.ts';
import { backfillArgs, measureLoad, type LoadFigures } from './measure-load.ts';
import { medianPair, pairRatiosText, ratioText, type PairRatio } from './pairs.ts';
import { postgresCpuProbe } from './postgres-cpu.ts';
import { clockTicksPerSecond } from './proc-stat.ts';
import { TARGETS, type TargetRow } from './targets.ts';

/** The server settings a bulk load's speed turns on (issue 18), shown beside every first-load figure. */
export const SHOWN_SETTINGS = ['max_wal_size', 'shared_buffers', 'synchronous_commit', 'wal_level', 'full_page_writes'] as const;

export interface ServerSettings {
  /** `SHOW server_version`. */
  version: string;
  /** Each of `SHOWN_SETTINGS` as the server shows it (`1GB`, `128MB`, `on`, …). */
  settings: Record<string, string>;
}

/** Reads the server's version and `SHOWN_SETTINGS` from the server itself (not from what the bench asked for). */
export async function readServerSettings(url: string): Promise<ServerSettings> {
  return withClient(url, async (c) => {
    const version = (await c.query<{ server_version: string }>('SHOW server_version')).rows[0]!.server_version;
    const { rows } = await c.query<{ name: string; setting: string }>('SELECT name, current_setting(name) AS setting FROM unnest($1::text[]) AS name', [[...SHOWN_SETTINGS]]);
    return { version, settings: Object.fromEntries(rows.map((r) => [r.name, r.setting])) };
  });
}

/**
 * One line naming a server and its settings.
 *
 * @example describeServer({ version: '18.4', settings: { max_wal_size: '1GB', … } })
 * // → 'PostgreSQL 18.4; max_wal_size 1GB, shared_buffers 128MB, synchronous_commit on, wal_level replica, full_page_writes on'
 */
export function describeServer(s: ServerSettings): string {
  return `PostgreSQL ${s.version}; ${SHOWN_SETTINGS.map((n) => `${n} ${s.settings[n] ?? 'unknown'}`).join(', ')}`;
}

export interface FirstLoadSize {
  transfers: number;
  blocks: number;
  tokens: number;
}

/** A plain COPY of what a first load wrote (transfers and headers), into empty copies of the two tables. */
export interface CopyBackBaseline {
  transfers: number;
  headers: number;
  seconds: number;
}

export interface FirstLoadComparison {
  size: FirstLoadSize;
  /** The load and the plain COPY of the median pair (`medianPair`). */
  load: LoadFigures;
  copy: CopyBackBaseline;
  /** copy.seconds ÷ load.wallSeconds: the first load's rows per second over the plain COPY's. */
  ratio: number;
  /** Every pair (a first load into a fresh database, then the plain COPY of its rows), in the order they ran. */
  pairs: PairRatio[];
}

/** A server the comparison ran on, how it is labelled, and its figures by size (a size that failed: its error). */
export interface FirstLoadServer {
  label: string;
  server: ServerSettings;
  /** A labelled extra (the tuned server): its figures are shown, not held to the target. */
  extra: boolean;
  sizes: ({ ok: true; value: FirstLoadComparison } | { ok: false; size: FirstLoadSize; error: string })[];
}

/**
 * The plain-COPY baseline of issue 18, as a user measures it: the rows a first load wrote, taken back out of the
 * warehouse (`COPY … TO`), then, after a CHECKPOINT, `COPY … FROM` into empty copies of token_transfers and
 * block_headers made `LIKE … INCLUDING ALL` (same columns and indexes), timed together. The copies are dropped.
 *
 * @example await copyBackBaseline(db.url, tmp) // → { transfers: 200000, headers: 6101, seconds: 2.5 }
 */
export async function copyBackBaseline(databaseUrl: string, dir: string): Promise<CopyBackBaseline> {
  const tables = ['token_transfers', 'block_headers'] as const;
  return withClient(databaseUrl, async (client) => {
    const counts: number[] = [];
    for (const table of tables) {
      const out = client.query(copyStreams.to(`COPY ${table} TO STDOUT`));
      await pipeline(out, createWriteStream(join(dir, `${table}.copy`)));
      counts.push(out.rowCount ?? 0);
      await client.query(`DROP TABLE IF EXISTS bench_${table}`);
      await client.query(`CREATE TABLE bench_${table} (LIKE ${table} INCLUDING ALL)`);
    }
    await checkpoint(client);
    try {
      const started = performance.now();
      for (const [i, table] of tables.entries()) {
        const into = client.query(copyStreams.from(`COPY bench_${table} FROM STDIN`));
        await pipeline(createReadStream(join(dir, `${table}.copy`), { highWaterMark: 1 << 20 }), into);
        if (into.rowCount !== counts[i]) throw new Error(`the plain COPY into bench_${table} loaded ${into.rowCount} rows, expected ${counts[i]}`);
      }
      const seconds = (performance.now() - started) / 1000;
      return { transfers: counts[0]!, headers: counts[1]!, seconds };
    } finally {
      for (const table of tables) await client.query(`DROP TABLE IF EXISTS bench_${table}`);
      await checkpoint(client);
    }
  });
}

export interface CompareOptions {
  postgres: BenchPostgres;
  sizes: readonly FirstLoadSize[];
  /** Pairs per size, each a first load then its plain COPY; the figure is the median pair's. */
  pairs: number;
  pageSize: number;
  concurrency: number;
  runTimeoutMs: number;
  note(line: string): void;
}

/**
 * Issue 18's comparison on one server, per size: a reference server on a synthetic chain, then `o.pairs` pairs, each
 * a fresh migrated database, a `backfill` of every contract timed end to end (the CLI process's wall time, start-up
 * and shutdown included, as a cron sees it), then the plain COPY of the rows it wrote (`copyBackBaseline`). The
 * figure is the median pair's (`medianPair`), every pair's ratio beside it. A size that fails is reported and the
 * others go on.
 *
 * @example await compareFirstLoads({ postgres, sizes: [{ transfers: 200_000, blocks: 20_000, tokens: 4 }], pairs: 3, pageSize: 1000, concurrency: 4, runTimeoutMs: 1_200_000, note })
 * // → [{ ok: true, value: { ratio: 0.64, load: { wallSeconds: 3.9, … }, copy: { seconds: 2.5, … }, pairs: [ … three … ], … } }]
 */
export async function compareFirstLoads(o: CompareOptions): Promise<FirstLoadServer['sizes']> {
  const ticksPerSecond = clockTicksPerSecond();
  const postgresCpu = await postgresCpuProbe(o.postgres.serverUrl, ticksPerSecond);
  const out: FirstLoadServer['sizes'] = [];
  for (const size of o.sizes) {
    try {
      out.push({ ok: true, value: await compareOne(o, size, { ticksPerSecond, postgresCpu }) });
    } catch (err) {
      const error = err instanceof Error ? err.message : String(err);
      o.note(`first load of ${fmt(size.transfers)} transfers: failed: ${error}`);
      out.push({ ok: false, size, error });
    }
  }
  return out;
}

/** One pair's figures: the first load, the plain COPY of its rows, and copy.seconds ÷ load.wallSeconds. */
type MeasuredPair = Pick<FirstLoadComparison, 'load' | 'copy' | 'ratio'>;

/** How the bench reads the CPU of the machine's processes: clock ticks per second, and PostgreSQL's probe where it has one. */
interface CpuProbes {
  ticksPerSecond: number;
  postgresCpu: (() => number | undefined) | undefined;
}

async function compareOne(o: CompareOptions, size: FirstLoadSize, cpu: CpuProbes): Promise<FirstLoadComparison> {
  o.note(`first load: reference server with ${fmt(size.transfers)} transfers of ${size.tokens} contracts over ${fmt(size.blocks)} blocks`);
  const devnet = await startDevnetProcess(size, []);
  try {
    const truth = await readTruth(devnet.origin);
    if (truth.rows !== size.transfers) throw new Error(`the server's truth has ${truth.rows} transfers, expected ${size.transfers}`);
    const measured: MeasuredPair[] = [];
    for (let k = 1; k <= o.pairs; k++) measured.push(await comparePair(o, size, cpu, devnet, truth, o.pairs > 1 ? ` (pair ${k} of ${o.pairs})` : ''));
    const median = medianPair(measured);
    const pairs = measured.map((m) => ({ ratio: m.ratio, loadSeconds: m.load.wallSeconds, copySeconds: m.copy.seconds, peakRssMb: m.load.peakRssMb }));
    return { size, ...median, pairs };
  } finally {
    await devnet.stop();
  }
}

/** One pair: a first load into a fresh database, then the plain COPY of the rows it wrote; the database is dropped after. */
async function comparePair(o: CompareOptions, size: FirstLoadSize, cpu: CpuProbes, devnet: DevnetProcess, truth: { distinctBlocks: number }, which: string): Promise<MeasuredPair> {
  const db = await createBenchDatabase(o.postgres.serverUrl, `first_${size.transfers}`);
  const tmp = await mkdtemp(join(tmpdir(), 'erc20-etl-bench-'));
  try {
    const probes: Probes = { ticksPerSecond: cpu.ticksPerSecond, serverPid: devnet.pid, serverStats: devnet.stats, ...(cpu.postgresCpu && { postgresCpu: cpu.postgresCpu }) };
    const ctx = {
      devnet,
      db,
      postgres: o.postgres,
      probes,
      statements: false,
      chain: { transfers: size.transfers, distinctBlocks: truth.distinctBlocks },
      pageSize: o.pageSize,
      concurrency: o.concurrency,
      timeoutMs: o.runTimeoutMs,
      budgetFile: join(tmp, 'time-budget.json'),
      note: o.note,
    };
    await withClient(db.url, checkpoint);
    o.note(`first load: backfill of ${fmt(size.transfers)} transfers (the whole CLI process timed)${which}`);
    const load = await measureLoad(ctx, backfillArgs(devnet, size.blocks, o), { rows: size.transfers, newBlocks: truth.distinctBlocks });
    if (!load.exact) throw new Error('the warehouse does not hold exactly the chain after the first load');
    o.note(`first load: plain COPY of the ${fmt(size.transfers)} transfers and ${fmt(truth.distinctBlocks)} headers it wrote`);
    const copy = await copyBackBaseline(db.url, tmp);
    return { load, copy, ratio: copy.seconds / load.wallSeconds };
  } finally {
    await rm(tmp, { recursive: true, force: true });
    await db.drop();
  }
}

/** The shortest wall time a load's processes' CPU allows on this machine, and the ratio that caps. */
export interface CpuCeiling {
  cores: number;
  /** All CPU seconds of the exporter, the reference server and PostgreSQL, spread over every core. */
  floorSeconds: number;
  /** copy ÷ floor: no first load on this machine that spends this CPU can do better. */
  maxRatio: number;
}

/**
 * How well a first load could do on this machine at best: its three processes (exporter, reference server,
 * PostgreSQL) share the cores, so its wall time is at least their CPU seconds ÷ cores, however well they overlap;
 * the plain COPY has the machine to itself. Undefined when a CPU figure is missing.
 *
 * @example cpuCeiling({ exporter: 4.2, server: 1.0, postgres: 5.3 }, 3.77, 2) // → { cores: 2, floorSeconds: 5.25, maxRatio: 0.718… }
 */
export function cpuCeiling(cpu: LoadFigures['cpuSeconds'], copySeconds: number, cores: number): CpuCeiling | undefined {
  const { exporter, server, postgres } = cpu;
  if (exporter === undefined || server === undefined || postgres === undefined || cores < 1) return undefined;
  const floorSeconds = (exporter + server + postgres) / cores;
  return { cores, floorSeconds, maxRatio: copySeconds / floorSeconds };
}

/**
 * The table's rows: per server, per size, the first load ÷ plain COPY against the target (a labelled extra
 * server's without one), with both times.
 *
 * @example firstLoadRows([{ label: 'embedded, initdb defaults', extra: false, server, sizes }])[0]
 * // → { figure: 'first load ÷ plain COPY, 200,000 transfers (embedded, initdb defaults)', measured: '0.64 (3.9 s vs 2.5 s)', target: '≥ 0.8', ok: false }
 */
export function firstLoadRows(servers: readonly FirstLoadServer[]): TargetRow[] {
  const rows: TargetRow[] = [];
  for (const s of servers) {
    for (const r of s.sizes) {
      const transfers = r.ok ? r.value.size.transfers : r.size.transfers;
      const figure = `first load ÷ plain COPY, ${fmt(transfers)} transfers (${s.label})`;
      const target = s.extra ? '' : `≥ ${TARGETS.firstLoadVsCopy}`;
      if (!r.ok) {
        rows.push({ figure, measured: `failed: ${r.error.split('\n')[0]}`, target: 'completes', ok: false });
        continue;
      }
      const { ratio, load, copy, pairs } = r.value;
      const spread = pairs.length > 1 ? `; pairs ${pairRatiosText(pairs, TARGETS.firstLoadVsCopy)}` : '';
      const measured = `${ratioText(ratio, TARGETS.firstLoadVsCopy)} (${load.wallSeconds.toFixed(1)} s vs ${copy.seconds.toFixed(1)} s${spread})`;
      rows.push({ figure, measured, target, ...(!s.extra && { ok: ratio >= TARGETS.firstLoadVsCopy }) });
    }
  }
  return rows;
}

function fmt(n: number): string {
  return Math.round(n).toLocaleString('en-US');
}
