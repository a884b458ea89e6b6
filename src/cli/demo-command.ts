import { spawnSync } from 'node:child_process';
import { existsSync } from 'node:fs';
import { readdir, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { pino } from 'pino';
import { systemClock } from '../common/clock.ts';
import { chooseLogLevel } from '../common/log-format.ts';
import { createLogger } from '../common/logger.ts';
import { loadJobFile } from '../config/load-job.ts';
import { createChainStore } from '../devnet/chain-store.ts';
import { createRng } from '../devnet/rng.ts';
import { createDevnet } from '../devnet/server.ts';
import { generateSyntheticDataset, SYNTHETIC_DEFAULTS } from '../devnet/synthetic.ts';
import { parseApiUrl } from '../config/api-url.ts';
import { ConfigError } from '../common/errors.ts';
import { packageRoot } from '../common/package-root.ts';
import { closeAndAwaitConnections } from '../warehouse/close-connections.ts';
import { ensureDatabase } from '../warehouse/databases.ts';
import { createWarehouse } from '../warehouse/db.ts';
import { livePostmasterPid, startEmbeddedPostgres } from '../local-postgres/embedded-postgres.ts';
import { localStateDir, runningAsRoot, stateDirFor } from '../local-postgres/state-dir.ts';
import { migrateToLatest } from '../warehouse/migrate.ts';
import { TOP_TOKENS_QUERY, topTokens } from '../warehouse/top-tokens.ts';
import { exportJob } from './exporter.ts';
import { summaryText } from './summary.ts';

const PROJECT_DIR = packageRoot();
const DEMO_DATABASE = 'erc20_demo';

export interface DemoOptions {
  /** Leave PostgreSQL running after the demo, with a psql command line to query it, until Ctrl-C. */
  keep?: boolean;
}

/**
 * `erc20-etl demo` (what `npm run demo` runs): a real export, offline. The reference server serves the
 * default synthetic chain (with realistic token amounts), an embedded PostgreSQL keeps its data in `demo-pg` of
 * the project's local state folder (`.data`, or as root a folder in the system's temporary folder: see
 * `localStateDir`), `jobs/demo.json` runs, and one analytics query answers. Run again, it finds its data and
 * changes nothing. With `keep`, PostgreSQL stays up until SIGINT/SIGTERM.
 */
export async function runDemo(options: DemoOptions = {}): Promise<void> {
  const started = performance.now();
  const logger = createLogger({ level: chooseLogLevel(process.env, 'warn') });
  const out = (line: string) => process.stdout.write(`${line}\n`);

  const dataset = generateSyntheticDataset(SYNTHETIC_DEFAULTS, { amounts: 'realistic' });
  const rng = createRng(SYNTHETIC_DEFAULTS.seed);
  const devnet = createDevnet({
    config: { host: '127.0.0.1', port: 0, projectIds: ['demo'], chainId: 1, faults: {}, pageKeyTtlSeconds: 86_400, seed: SYNTHETIC_DEFAULTS.seed },
    logger: pino({ level: 'silent' }),
    clock: systemClock,
    chain: createChainStore(dataset),
    random: () => rng.next(),
  });
  const origin = await devnet.listen();
  const d = SYNTHETIC_DEFAULTS;
  out(`reference server: synthetic chain (seed ${d.seed}: ${d.blocks} blocks from ${d.startBlock}, ${d.tokens} tokens, ${d.transfers} transfers) at ${origin}/<project-id>`);

  let postgres: Awaited<ReturnType<typeof startEmbeddedPostgres>> | undefined;
  try {
    const stateDir = await localStateDir(PROJECT_DIR);
    const dataDir = join(stateDir, DEMO_DATA_FOLDER);
    postgres = await startEmbeddedPostgres({ dataDir, stateDir, logger });
    const databaseUrl = await ensureDatabase(postgres.url, DEMO_DATABASE);
    out(`PostgreSQL: embedded, data in ${runningAsRoot() ? dataDir : join('.data', DEMO_DATA_FOLDER)}, listening on 127.0.0.1:${postgres.port}, database ${DEMO_DATABASE}`);
    const warehouse = createWarehouse({ databaseUrl, logger, maxConnections: 2 });
    try {
      const migrated = await migrateToLatest(warehouse);
      out(migrated.applied.length ? `migrate: applied ${migrated.applied.join(', ')}` : 'migrate: up to date');
      const job = await loadJobFile(join(PROJECT_DIR, 'jobs', 'demo.json'));
      const summary = await exportJob({ databaseUrl, api: parseApiUrl(`${origin}/demo`), logger, tty: false }, job, 'run');
      out('');
      process.stdout.write(summaryText(summary));
      out('');
      out(`Top tokens by transfers (${TOP_TOKENS_QUERY}):`);
      const rows = await topTokens(warehouse.db);
      out(
        table(
          ['token', 'transfers', 'volume (scaled by decimals)', 'senders', 'blocks'],
          rows.map((r) => [r.token, r.transfers, abbreviate(r.volume), r.senders, r.blocks]),
        ),
      );
      out('');
    } finally {
      await closeAndAwaitConnections(warehouse);
    }
    await devnet.close();
    if (options.keep) {
      out(`done in ${seconds(started)} s. PostgreSQL keeps running (--keep); query the warehouse with:`);
      out(`  psql ${shellQuote(databaseUrl)}`);
      if (!onPath('psql')) out("  (psql is not installed here: any PostgreSQL client will do, e.g. Debian's postgresql-client package)");
      out('Press Ctrl-C to stop it.');
      await untilSignalled();
      out('stopping PostgreSQL');
    } else {
      out(`done in ${seconds(started)} s. To query the warehouse yourself, run \`npm run demo -- --keep\` (PostgreSQL stays up until Ctrl-C), or see README for docker-compose.`);
    }
  } finally {
    await postgres?.stop();
    await devnet.close();
  }
}

/**
 * `erc20-etl demo --clean`: removes what the demo keeps on this machine: its data folder and, as root, the
 * project's copy of the PostgreSQL binaries (and the project's state folder, once nothing else is in it).
 */
export async function cleanDemo(): Promise<void> {
  // what was there before this command (finding the state folder makes it): only that is said to be removed
  const stateDirWas = existsSync(stateDirFor({ projectDir: PROJECT_DIR, asRoot: runningAsRoot(), tmpDir: tmpdir() }));
  const stateDir = await localStateDir(PROJECT_DIR);
  const dataDir = join(stateDir, DEMO_DATA_FOLDER);
  const dataDirWas = existsSync(dataDir);
  let removed = 0;
  const pid = await livePostmasterPid(dataDir);
  if (pid !== undefined) {
    throw new ConfigError(
      `The demo's PostgreSQL (pid ${pid}) is still running with its data in ${dataDir}.`,
      [],
      `Stop it first (Ctrl-C in the demo that keeps it, or kill -INT ${pid}), then clean again.`,
    );
  }
  await rm(dataDir, { recursive: true, force: true });
  if (dataDirWas) {
    process.stdout.write(`removed ${dataDir}\n`);
    removed++;
  }
  if (!runningAsRoot()) {
    if (!removed) process.stdout.write(`nothing to remove: the demo keeps nothing in ${stateDir}\n`);
    return;
  }
  const entries = await readdir(stateDir);
  for (const name of entries.filter((entry) => entry.startsWith('postgres-'))) {
    await rm(join(stateDir, name), { recursive: true, force: true });
    process.stdout.write(`removed ${join(stateDir, name)}\n`);
    removed++;
  }
  const left = (await readdir(stateDir)).filter((entry) => entry !== 'project.txt' && entry !== 'test-pg');
  const tests = await readdir(join(stateDir, 'test-pg')).catch(() => []);
  if (left.length === 0 && tests.length === 0) {
    await rm(stateDir, { recursive: true, force: true });
    if (stateDirWas) {
      process.stdout.write(`removed ${stateDir}\n`);
      removed++;
    }
  }
  if (!removed) process.stdout.write(`nothing to remove: the demo keeps nothing in ${stateDir}\n`);
}

const DEMO_DATA_FOLDER = 'demo-pg';

function untilSignalled(): Promise<void> {
  return new Promise((resolve) => {
    const done = () => {
      process.off('SIGINT', done);
      process.off('SIGTERM', done);
      resolve();
    };
    process.once('SIGINT', done);
    process.once('SIGTERM', done);
  });
}

function onPath(command: string): boolean {
  return spawnSync('sh', ['-c', `command -v ${command}`], { stdio: 'ignore' }).status === 0;
}

function shellQuote(text: string): string {
  return `'${text.replace(/'/g, `'\\''`)}'`;
}

function seconds(since: number): string {
  return ((performance.now() - since) / 1000).toFixed(1);
}

/** A volume can be as large as 2^256: show its integer digits grouped, at most 24 of them. */
function abbreviate(volume: string | null): string {
  if (volume === null) return 'n/a (decimals unknown)';
  const [int = '0', frac] = volume.split('.');
  if (int.length > 24) return `${int.slice(0, 6)}…e${int.length - 1}`;
  return `${int.replace(/\B(?=(\d{3})+(?!\d))/g, ',')}${frac ? `.${frac}` : ''}`;
}

function table(head: string[], rows: string[][]): string {
  const widths = head.map((h, i) => Math.max(h.length, ...rows.map((r) => (r[i] ?? '').length)));
  const line = (cells: string[]) => cells.map((c, i) => (i === 0 ? c.padEnd(widths[i]!) : c.padStart(widths[i]!))).join('  ');
  return [line(head), widths.map((w) => '-'.repeat(w)).join('  '), ...rows.map(line)].join('\n');
}
