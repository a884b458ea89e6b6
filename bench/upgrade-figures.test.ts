import { describe, expect, it } from 'vitest';
import {
  CHAIN_PRIMARY_KEY,
  fillStatements,
  formatUpgrade,
  oldWarehouseSize,
  upgradeProblems,
  upgradeTargetRows,
  type UpgradeBenchResult,
  type UpgradeObservation,
  type UpgradeRun,
} from './upgrade-figures.ts';

const rows = { token_transfers: 1_000_000, block_headers: 30_304, tokens: 4, export_coverage: 4, export_runs: 1 };

const observation = (over: Partial<UpgradeObservation> = {}): UpgradeObservation => ({
  before: rows,
  after: {
    token_transfers: { rows: 1_000_000, onChain: 1_000_000 },
    block_headers: { rows: 30_304, onChain: 30_304 },
    tokens: { rows: 4, onChain: 4 },
    export_coverage: { rows: 4, onChain: 4 },
    export_runs: { rows: 1, onChain: 1 },
  },
  primaryKey: CHAIN_PRIMARY_KEY,
  stdout: 'erc20-etl migrate: applied 0008_run_chain, 0009_chain_keys\nerc20-etl migrate: the task queue (schema graphile_worker) is ready\n',
  ...over,
});

const run = (seconds: number, over: Partial<UpgradeRun> = {}): UpgradeRun => ({
  args: [],
  chainId: 1,
  rows,
  databaseBytes: { before: 400 * 2 ** 20, after: 430 * 2 ** 20 },
  fillSeconds: 21.4,
  seconds,
  peakRssMb: 95,
  problems: [],
  ...over,
});

const result = (first: UpgradeBenchResult['runs'][number]['result'], second: UpgradeBenchResult['runs'][number]['result']): UpgradeBenchResult => ({
  size: oldWarehouseSize(1_000_000),
  server: { version: '15.10', maintenanceWorkMem: '64MB' },
  runs: [
    { args: [], chainId: 1, result: first },
    { args: ['--chain-id', '8453'], chainId: 8453, result: second },
  ],
});

describe('oldWarehouseSize', () => {
  it('puts 33 transfers in a block: a million transfers span 30,304 blocks of 4 contracts', () => {
    expect(oldWarehouseSize(1_000_000)).toEqual({ transfers: 1_000_000, blocks: 30_304, contracts: 4, firstBlock: 18_000_000 });
    expect(oldWarehouseSize(32).blocks).toBe(1);
    expect(oldWarehouseSize(33).blocks).toBe(2);
  });

  it('refuses a size that is not a positive integer', () => {
    expect(() => oldWarehouseSize(0)).toThrow(/positive integer/);
    expect(() => oldWarehouseSize(1.5)).toThrow(/positive integer/);
  });
});

describe('fillStatements', () => {
  const statements = fillStatements(oldWarehouseSize(1_000_000));

  it('fills the run, then the transfers, headers, tokens and the coverage counted from the transfers', () => {
    expect(statements.map((s) => /^INSERT INTO (\w+)/.exec(s)?.[1])).toEqual(['export_runs', 'token_transfers', 'block_headers', 'tokens', 'export_coverage']);
    expect(statements[1]).toContain('generate_series(1, 1000000)');
    expect(statements[2]).toContain('generate_series(18000000, 18030303)');
  });

  it("gives a transfer's block_hash and its header's hash the same expression of the block number", () => {
    expect(statements[1]).toContain("md5((b)::text) || md5('b' || (b)::text)");
    expect(statements[2]).toContain("md5((n)::text) || md5('b' || (n)::text), n,");
  });

  it('holds no statement that cannot run on its own (VACUUM, CHECKPOINT are the caller’s)', () => {
    for (const s of statements) expect(s).not.toMatch(/;|VACUUM|CHECKPOINT/);
  });
});

describe('upgradeProblems', () => {
  it('finds nothing when every row is there, of the chain, keyed by chain, 0009 applied', () => {
    expect(upgradeProblems(observation(), 1)).toEqual([]);
  });

  it('names a table that lost rows, rows of another chain, the wrong key and a migrate that applied nothing', () => {
    const o = observation({
      after: { ...observation().after, token_transfers: { rows: 999_999, onChain: 999_999 }, tokens: { rows: 4, onChain: 0 } },
      primaryKey: 'PRIMARY KEY (transaction_hash, log_index)',
      stdout: 'erc20-etl migrate: up to date (9 migration(s) applied before)\n',
    });
    expect(upgradeProblems(o, 8453)).toEqual([
      'migrate did not say it applied 0009_chain_keys',
      'token_transfers: 999,999 rows after, 1,000,000 before',
      'tokens: 4 rows, 0 of chain 8453',
      `token_transfers' key is PRIMARY KEY (transaction_hash, log_index), not ${CHAIN_PRIMARY_KEY}`,
    ]);
  });

  it('says when a table had nothing to upgrade', () => {
    const o = observation({ before: { ...rows, block_headers: 0 }, after: { ...observation().after, block_headers: { rows: 0, onChain: 0 } } });
    expect(upgradeProblems(o, 1)).toEqual(['block_headers: no rows before the upgrade']);
  });
});

describe('upgradeTargetRows', () => {
  it('holds each run to 300 s, passing exactly at it, and checks its rows', () => {
    const rows = upgradeTargetRows({ ok: true, value: result({ ok: true, value: run(300) }, { ok: true, value: run(300.1, { chainId: 8453 }) }) });
    expect(rows).toEqual([
      { figure: 'upgrade of 1,000,000 transfers: `erc20-etl migrate`, spawn to exit, s', measured: '300.0', target: '≤ 300', ok: true },
      {
        figure: 'upgrade of 1,000,000 transfers: `erc20-etl migrate`: every row kept, of chain 1; transfers keyed (transaction_hash, log_index, chain_id)',
        measured: 'yes',
        target: 'yes',
        ok: true,
      },
      { figure: 'upgrade of 1,000,000 transfers: `erc20-etl migrate --chain-id 8453`, spawn to exit, s', measured: '300.1', target: '≤ 300', ok: false },
      {
        figure: 'upgrade of 1,000,000 transfers: `erc20-etl migrate --chain-id 8453`: every row kept, of chain 8453; transfers keyed (transaction_hash, log_index, chain_id)',
        measured: 'yes',
        target: 'yes',
        ok: true,
      },
    ]);
  });

  it('fails a run whose rows did not come through, and says why', () => {
    const [, check] = upgradeTargetRows({ ok: true, value: result({ ok: true, value: run(3, { problems: ['tokens: 4 rows, 0 of chain 1', 'x'] }) }, { ok: false, error: 'e' }) });
    expect(check).toMatchObject({ measured: 'tokens: 4 rows, 0 of chain 1; x', ok: false });
  });

  it('gives one ✗ row for a run or a part that failed, with the first line of its error', () => {
    const rows = upgradeTargetRows({ ok: true, value: result({ ok: true, value: run(3) }, { ok: false, error: 'erc20-etl migrate exited with 1: boom\nstack' }) });
    expect(rows[2]).toEqual({
      figure: 'upgrade of 1,000,000 transfers: `erc20-etl migrate --chain-id 8453`: failed',
      measured: 'erc20-etl migrate exited with 1: boom',
      target: 'completes',
      ok: false,
    });
    expect(upgradeTargetRows({ ok: false, error: 'connect ECONNREFUSED' })).toEqual([
      { figure: 'upgrade: failed', measured: 'connect ECONNREFUSED', target: 'completes', ok: false },
    ]);
  });
});

describe('formatUpgrade', () => {
  it('prints the server, then per run its time, the rows, the database size and the untimed fill', () => {
    const text = formatUpgrade(result({ ok: true, value: run(2.94) }, { ok: false, error: 'boom' }));
    expect(text.split('\n')).toEqual([
      '',
      'upgrade of a warehouse written before chains (0007_node_source → the latest schema), `erc20-etl migrate` timed spawn to exit; PostgreSQL 15.10, maintenance_work_mem 64MB:',
      '  `erc20-etl migrate`: 2.9 s, peak RSS 95 MB; 1,000,000 transfers, 30,304 headers, 4 tokens, 4 coverage rows, 1 run, chain 1 after; database 400 MB before, 430 MB after; filled in 21.4 s (not timed)',
      '  `erc20-etl migrate --chain-id 8453`: failed: boom',
      '',
    ]);
  });
});
