import type { Outcome } from './exporter-bench.ts';
import { TARGETS, type TargetRow } from './targets.ts';

/**
 * Issue 17's upgrade, the pure part: the warehouse the version before chains wrote (its rows made by SQL on the
 * server), what must hold once `erc20-etl migrate` has keyed it by chain, and the bench's rows and lines.
 */

/** The last migration before chains keyed the tables: the schema the old warehouse is in. */
export const BEFORE_CHAINS = '0007_node_source';
/** The migration that keys every table by chain, which `migrate` must apply. */
const CHAIN_KEYS = '0009_chain_keys';
/** The key token_transfers must have after the upgrade, as `pg_get_constraintdef` writes it. */
export const CHAIN_PRIMARY_KEY = 'PRIMARY KEY (transaction_hash, log_index, chain_id)';
/** The tables the old warehouse has rows in; each must keep them all, every one of the chain named. */
export const FILLED_TABLES = ['token_transfers', 'block_headers', 'tokens', 'export_coverage', 'export_runs'] as const;
export type FilledTable = (typeof FILLED_TABLES)[number];

const TRANSFERS_PER_BLOCK = 33;
const CONTRACTS = 4;
const FIRST_BLOCK = 18_000_000;
const FIRST_TIMESTAMP = 1_700_000_000;
const JOB = 'bench-upgrade';

export interface OldWarehouseSize {
  transfers: number;
  /** Distinct blocks of the transfers (33 a block): one header each. */
  blocks: number;
  contracts: number;
  firstBlock: number;
}

/** @example oldWarehouseSize(1_000_000) // → { transfers: 1000000, blocks: 30304, contracts: 4, firstBlock: 18000000 } */
export function oldWarehouseSize(transfers: number): OldWarehouseSize {
  if (!Number.isSafeInteger(transfers) || transfers < 1) throw new Error(`transfers must be a positive integer, got ${transfers}`);
  return { transfers, blocks: Math.floor(transfers / TRANSFERS_PER_BLOCK) + 1, contracts: CONTRACTS, firstBlock: FIRST_BLOCK };
}

/** A random-looking 32-byte hash (`0x` and 64 hex digits) of a block number, the same in the transfers and the headers. */
const blockHash = (n: string) => `'0x' || md5((${n})::text) || md5('b' || (${n})::text)`;
/** A 20-byte address of contract K (0 ≤ K < contracts). */
const contractAddress = (k: string) => `'0x' || md5('token' || (${k})::text) || substr(md5('token.' || (${k})::text), 1, 8)`;
/** A 20-byte address made from a number. */
const address = (n: string) => `'0x' || md5((${n})::text) || substr(md5('a' || (${n})::text), 1, 8)`;

/**
 * The statements that fill a database at `BEFORE_CHAINS` as the exporter of that version left it after one run:
 * the run, its transfers (random-looking hashes, `size.contracts` contracts, 33 a block, numeric values,
 * timestamps), one header per block with every NOT NULL column filled, a token per contract and a coverage row
 * per contract. One statement each, in order; VACUUM ANALYZE and CHECKPOINT are left to the caller.
 *
 * @example for (const statement of fillStatements(oldWarehouseSize(1_000_000))) await client.query(statement);
 */
export function fillStatements(size: OldWarehouseSize): string[] {
  const { transfers, blocks, contracts, firstBlock } = size;
  for (const n of [transfers, blocks, contracts, firstBlock]) if (!Number.isSafeInteger(n) || n < 0) throw new Error(`not a size: ${n}`);
  const lastBlock = firstBlock + blocks - 1;
  const blockOf = (i: string) => `${firstBlock} + (${i}) / ${TRANSFERS_PER_BLOCK}`;
  const timestampOf = (b: string) => `${FIRST_TIMESTAMP} + 12 * ((${b}) - ${firstBlock})`;
  return [
    `INSERT INTO export_runs (job, command, contracts, from_block, to_block, status, finished_at, rows_inserted, headers_fetched)
     SELECT '${JOB}', 'run', array_agg(${contractAddress('k')} ORDER BY k), ${firstBlock}, ${lastBlock}, 'succeeded', now(), ${transfers}, ${blocks}
     FROM generate_series(0, ${contracts - 1}) k`,
    `INSERT INTO token_transfers (transaction_hash, log_index, contract_address, from_address, to_address, value, block_number, block_hash,
       block_timestamp, transaction_index, inserted_by_run, updated_by_run)
     SELECT '0x' || md5(i::text) || md5((-i)::text), i % 7, ${contractAddress(`i % ${contracts}`)}, ${address('i')}, ${address('i + 1')},
       (i::bigint * 1000003)::numeric * 1000000000, b, ${blockHash('b')}, to_timestamp(${timestampOf('b')}), i % 100, 1, 1
     FROM (SELECT i, ${blockOf('i')} AS b FROM generate_series(1, ${transfers}) i) s`,
    `INSERT INTO block_headers (hash, number, parent_hash, sha3_uncles, miner, state_root, transactions_root, receipts_root, logs_bloom,
       difficulty, gas_limit, gas_used, timestamp, extra_data, mix_hash, nonce, base_fee_per_gas, hash_verified, fetched_by_run)
     SELECT ${blockHash('n')}, n, ${blockHash('n - 1')}, '0x' || md5('u') || md5('u.'), ${address('-n')},
       '0x' || md5('s' || n) || md5('s.' || n), '0x' || md5('t' || n) || md5('t.' || n), '0x' || md5('r' || n) || md5('r.' || n),
       '0x' || repeat('0', 512), 0, 30000000, 12000000 + n % 1000, ${timestampOf('n')}, '0x', '0x' || md5('m' || n) || md5('m.' || n),
       '0x0000000000000000', 1000000000 + n % 100000, true, 1
     FROM generate_series(${firstBlock}, ${lastBlock}) n`,
    `INSERT INTO tokens (contract_address, name, symbol, decimals, updated_by_run)
     SELECT ${contractAddress('k')}, 'Bench Token ' || k, 'BT' || k, 18, 1 FROM generate_series(0, ${contracts - 1}) k`,
    `INSERT INTO export_coverage (job, contract_address, from_block, to_block, row_count, run_id)
     SELECT '${JOB}', contract_address, ${firstBlock}, ${lastBlock}, count(*), 1 FROM token_transfers GROUP BY contract_address`,
  ];
}

/** What the bench saw of one upgrade: rows before, rows and their chain after, token_transfers' key, migrate's output. */
export interface UpgradeObservation {
  before: Record<FilledTable, number>;
  after: Record<FilledTable, { rows: number; onChain: number }>;
  /** `pg_get_constraintdef` of token_transfers' primary key after. */
  primaryKey: string | undefined;
  /** What `erc20-etl migrate` wrote to stdout. */
  stdout: string;
}

/**
 * What went wrong in an upgrade that exited 0: a table that lost or gained rows, rows of another chain than
 * `chainId`, token_transfers not keyed by chain, migration 0009 not applied. Empty when all is well.
 *
 * @example upgradeProblems(observation, 8453) // → ['token_transfers: 1,000,000 rows, 0 of chain 8453']
 */
export function upgradeProblems(o: UpgradeObservation, chainId: number): string[] {
  const problems: string[] = [];
  if (!o.stdout.includes(CHAIN_KEYS)) problems.push(`migrate did not say it applied ${CHAIN_KEYS}`);
  for (const table of FILLED_TABLES) {
    const before = o.before[table];
    const after = o.after[table];
    if (before === 0) problems.push(`${table}: no rows before the upgrade`);
    if (after.rows !== before) problems.push(`${table}: ${int(after.rows)} rows after, ${int(before)} before`);
    if (after.onChain !== after.rows) problems.push(`${table}: ${int(after.rows)} rows, ${int(after.onChain)} of chain ${chainId}`);
  }
  if (o.primaryKey !== CHAIN_PRIMARY_KEY) problems.push(`token_transfers' key is ${o.primaryKey ?? 'missing'}, not ${CHAIN_PRIMARY_KEY}`);
  return problems;
}

/** One upgrade, timed from spawn to exit, on a freshly filled database. */
export interface UpgradeRun {
  /** `migrate`'s arguments past the command: none, or `--chain-id N`. */
  args: string[];
  chainId: number;
  /** Rows of each filled table before the upgrade. */
  rows: Record<FilledTable, number>;
  /** `pg_database_size` after the fill, and after the upgrade. */
  databaseBytes: { before: number; after: number };
  /** The fill, VACUUM ANALYZE and CHECKPOINT: not part of the figure. */
  fillSeconds: number;
  /** `erc20-etl migrate`, the compiled CLI, spawn to exit. */
  seconds: number;
  peakRssMb: number;
  /** What `upgradeProblems` found; empty when every row is there, of the chain, and the key is the chain's. */
  problems: string[];
}

export interface UpgradeBenchResult {
  size: OldWarehouseSize;
  server: { version: string; maintenanceWorkMem: string };
  runs: { args: string[]; chainId: number; result: Outcome<UpgradeRun> }[];
}

/** How a run is named: the command a user types. */
const command = (args: readonly string[]) => `\`erc20-etl ${['migrate', ...args].join(' ')}\``;

/**
 * The upgrade's rows of the targets table: per run, its time against "minutes, not hours" (`TARGETS.upgradeSeconds`)
 * and whether every row came through as the chain's with the chain's key. A run or part that failed gives one ✗ row.
 *
 * @example upgradeTargetRows(outcome)[0] // → { figure: 'upgrade of 1,000,000 transfers: `erc20-etl migrate`, spawn to exit, s', measured: '2.9', target: '≤ 300', ok: true }
 */
export function upgradeTargetRows(outcome: Outcome<UpgradeBenchResult>): TargetRow[] {
  if (!outcome.ok) return [{ figure: 'upgrade: failed', measured: firstLine(outcome.error), target: 'completes', ok: false }];
  const rows: TargetRow[] = [];
  const label = `upgrade of ${int(outcome.value.size.transfers)} transfers`;
  for (const { args, chainId, result } of outcome.value.runs) {
    const name = `${label}: ${command(args)}`;
    if (!result.ok) {
      rows.push({ figure: `${name}: failed`, measured: firstLine(result.error), target: 'completes', ok: false });
      continue;
    }
    const r = result.value;
    rows.push({ figure: `${name}, spawn to exit, s`, measured: r.seconds.toFixed(1), target: `≤ ${int(TARGETS.upgradeSeconds)}`, ok: r.seconds <= TARGETS.upgradeSeconds });
    rows.push({
      figure: `${name}: every row kept, of chain ${chainId}; transfers keyed (transaction_hash, log_index, chain_id)`,
      measured: r.problems.length ? firstLine(r.problems.join('; ')) : 'yes',
      target: 'yes',
      ok: r.problems.length === 0,
    });
  }
  return rows;
}

/**
 * The upgrade's figures, a line per run: what the warehouse held, its size, the time, the server.
 *
 * @example formatUpgrade(result) // → '\nupgrade of a warehouse written before chains (…):\n  `erc20-etl migrate`: 2.9 s …\n'
 */
export function formatUpgrade(u: UpgradeBenchResult): string {
  const lines = [
    `\nupgrade of a warehouse written before chains (${BEFORE_CHAINS} → the latest schema), \`erc20-etl migrate\` timed spawn to exit; ` +
      `PostgreSQL ${u.server.version}, maintenance_work_mem ${u.server.maintenanceWorkMem}:`,
  ];
  for (const { args, result } of u.runs) {
    if (!result.ok) {
      lines.push(`  ${command(args)}: failed: ${result.error}`);
      continue;
    }
    const r = result.value;
    lines.push(
      `  ${command(args)}: ${r.seconds.toFixed(1)} s, peak RSS ${int(r.peakRssMb)} MB; ${int(r.rows.token_transfers)} transfers, ${int(r.rows.block_headers)} headers, ` +
        `${int(r.rows.tokens)} tokens, ${int(r.rows.export_coverage)} coverage rows, ${int(r.rows.export_runs)} run${r.rows.export_runs === 1 ? '' : 's'}, chain ${r.chainId} after; ` +
        `database ${mb(r.databaseBytes.before)} MB before, ${mb(r.databaseBytes.after)} MB after; filled in ${r.fillSeconds.toFixed(1)} s (not timed)`,
    );
  }
  return `${lines.join('\n')}\n`;
}

function mb(bytes: number): string {
  return int(bytes / 2 ** 20);
}

function int(n: number): string {
  return Number.isFinite(n) ? Math.round(n).toLocaleString('en-US') : 'n/a';
}

function firstLine(text: string): string {
  const line = text.split('\n')[0] ?? '';
  return line.length > 100 ? `${line.slice(0, 99)}…` : line;
}
