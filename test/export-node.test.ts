import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { sql } from 'kysely';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { readDataset } from '../src/dataset/read.ts';
import type { Dataset } from '../src/dataset/types.ts';
import { LOGS_ERROR_STYLES } from '../src/devnet/logs-limit-errors.ts';
import type { DevnetConfig } from '../src/devnet/server.ts';
import type { Warehouse } from '../src/warehouse/db.ts';
import { contractsOf, writeFigures } from './helpers/chaos.ts';
import { runCli } from './helpers/cli.ts';
import { startDevnet, type RunningDevnet } from './helpers/devnet.ts';
import { job, migratedWarehouse, runExport } from './helpers/exporter.ts';
import { FIXTURE_DIR } from './helpers/fixtures.ts';

// The mainnet fixture exported end to end by a node job (`"source": "node"`: eth_getLogs, eth_getBlockByHash,
// eth_call) and by a builder job, each from the reference server over HTTP into a PostgreSQL warehouse of its
// own: the warehouses are equal table by table. The job is the same but for its source: each contract from 3
// blocks below its first transfer to 3 above its last (a node reads a range in spans of at most 100,000 blocks,
// so a job from block 0 would cost some 200 eth_getLogs calls per contract, 45,000 in all, and prove nothing more).

/** The most Transfer logs one contract has in one block of the fixture (WETH in block 15,000,000). */
const MOST_LOGS_OF_A_CONTRACT_IN_A_BLOCK = 56;
/**
 * A range cap well below the spans of the busy contracts (USDT and WETH: blocks 10,000,000–18,000,000), so the
 * adaptive range meets it, and a results cap the fixture's WETH exceeds across blocks 16,000,000–16,000,003
 * (57 logs) while no contract exceeds it in one block: both force splits, neither fails the run.
 */
const CAPS = { maxRange: 50_000, maxResults: MOST_LOGS_OF_A_CONTRACT_IN_A_BLOCK };
/** Chunks read at once, for both jobs: each contract is planned in 2 × CONCURRENCY chunks. */
const CONCURRENCY = 2;

type Target = Awaited<ReturnType<typeof migratedWarehouse>>;

/** Each contract's job range: its transfers' blocks, 3 more on each side. */
function fixtureContracts(dataset: Dataset): { address: string; fromBlock: number; toBlock: number }[] {
  return contractsOf(dataset).map((address) => {
    const blocks = dataset.transfers.filter((t) => t.contractAddress === address).map((t) => t.blockNumber);
    return { address, fromBlock: Math.max(0, Math.min(...blocks) - 3), toBlock: Math.max(...blocks) + 3 };
  });
}

/**
 * A warehouse's tables as comparable values: every column of every row, as PostgreSQL renders it to JSON,
 * but for what says which run did it or when (run ids, `fetched_at`, `updated_at`), which differ between any
 * two warehouses; those are returned apart.
 */
async function tablesOf(warehouse: Warehouse) {
  const rows = async (query: ReturnType<typeof sql<{ row: Record<string, unknown> }>>) => (await query.execute(warehouse.db)).rows.map((r) => r.row);
  return {
    transfers: await rows(sql`SELECT to_jsonb(t) - ARRAY['inserted_by_run', 'updated_by_run'] AS row FROM token_transfers t ORDER BY block_number, log_index, transaction_hash`),
    headers: await rows(sql`SELECT to_jsonb(h) - ARRAY['fetched_by_run', 'fetched_at'] AS row FROM block_headers h ORDER BY hash`),
    tokens: await rows(sql`SELECT to_jsonb(k) - ARRAY['updated_by_run', 'updated_at'] AS row FROM tokens k ORDER BY contract_address`),
    runsOfRows: (
      await sql<{ inserted: string; updated: string; n: string }>`
        SELECT inserted_by_run::text AS inserted, updated_by_run::text AS updated, count(*)::text AS n FROM token_transfers GROUP BY 1, 2 ORDER BY 1, 2`.execute(warehouse.db)
    ).rows,
  };
}

/** Each row's physical version (`xmin`) by its key: a rewritten row gets a new one. */
async function rowVersions(warehouse: Warehouse): Promise<{ k: string; x: string }[]> {
  return (await sql<{ k: string; x: string }>`SELECT transaction_hash || ':' || log_index AS k, xmin::text AS x FROM token_transfers ORDER BY 1`.execute(warehouse.db)).rows;
}

interface NodeCase {
  name: string;
  devnet: Partial<DevnetConfig>;
  /** Whether the caps must have refused some eth_getLogs calls (the run split its spans). */
  refuses: boolean;
}

const CASES: readonly NodeCase[] = [
  { name: 'a node without erigon_* (--no-erigon), no caps', devnet: { erigon: false }, refuses: false },
  ...LOGS_ERROR_STYLES.map(
    (style): NodeCase => ({
      name: `--no-erigon, ${style}’s refusals, caps of ${CAPS.maxRange} blocks and ${CAPS.maxResults} logs`,
      devnet: { erigon: false, logsLimits: { maxRange: CAPS.maxRange, maxResults: CAPS.maxResults, style } },
      refuses: true,
    }),
  ),
];

interface CaseFigures {
  case: string;
  ms: number;
  ethGetLogs: number;
  refused: number;
  learnedRange: number;
  headerCalls: Record<string, number>;
}

describe('a node job exports the mainnet fixture exactly as a builder job does', () => {
  let dataset: Dataset;
  let builderDevnet: RunningDevnet;
  let builder: Target;
  let expected: Awaited<ReturnType<typeof tablesOf>>;
  let blocks: number;
  /** eth_call answers -32000 (a revert) for the getters of tokens the fixture lacks: counted once, by the first case. */
  let reverts: number | undefined;
  let tmp: string;
  const targets: Target[] = [];
  const devnets: RunningDevnet[] = [];
  const figures: CaseFigures[] = [];

  const fixtureJob = (name: string, source: 'builder' | 'node') => job(name, fixtureContracts(dataset), { source, concurrency: CONCURRENCY });

  beforeAll(async () => {
    dataset = await readDataset(FIXTURE_DIR);
    blocks = new Set(dataset.transfers.map((t) => t.blockHash)).size;
    tmp = await mkdtemp(join(tmpdir(), 'erc20-etl-export-node-'));
    builderDevnet = await startDevnet(dataset);
    builder = await migratedWarehouse('export_node_builder');
    const summary = await runExport(builder.url, builderDevnet.base, fixtureJob('mainnet-fixture', 'builder'));
    expect(summary.totals.rowsInserted).toBe(dataset.transfers.length);
    expected = await tablesOf(builder.warehouse);
  });
  afterAll(async () => {
    await writeFigures('export-node', { contracts: dataset ? contractsOf(dataset).length : 0, transfers: dataset?.transfers.length, caps: CAPS, cases: figures });
    for (const target of targets) await target.drop();
    for (const devnet of devnets) await devnet.close();
    await builder?.drop();
    await builderDevnet?.close();
    if (tmp) await rm(tmp, { recursive: true, force: true });
  });

  /** A reference server as `config` says and a fresh warehouse, both closed after the file's tests. */
  const serveNode = async (label: string, config: Partial<DevnetConfig>) => {
    const devnet = await startDevnet(dataset, config);
    devnets.push(devnet);
    const target = await migratedWarehouse(label);
    targets.push(target);
    return { devnet, target };
  };

  /** Exports the fixture by a node job and expects the builder job's warehouse; returns the server's counts. */
  async function expectNodeExportEqual(c: NodeCase, devnet: RunningDevnet, target: Target, name: string) {
    const started = performance.now();
    const summary = await runExport(target.url, devnet.base, fixtureJob(name, 'node'));
    const ms = Math.round(performance.now() - started);
    expect(summary.totals).toMatchObject({ rowsInserted: dataset.transfers.length, rowsUpdated: 0, rowsRemoved: 0, headersFetched: blocks });
    const got = await tablesOf(target.warehouse);
    expect(got.transfers).toEqual(expected.transfers);
    expect(got.headers).toEqual(expected.headers);
    // the devnet's eth_call answers are the dataset's tokens, as its builder pages' metadata are: the getters of a
    // token it lacks revert (or answer 0x), unknown, NULL, as the builder API's empty metadata is. Nothing differs.
    expect(got.tokens).toEqual(expected.tokens);
    expect(got.runsOfRows).toEqual([{ inserted: String(summary.runId), updated: String(summary.runId), n: String(dataset.transfers.length) }]);

    const stats = await devnet.stats();
    // each block's header once, by eth_getBlockByHash, after one refused batch of erigon_getHeaderByHash
    expect(stats.rpcCalls.eth_getBlockByHash).toBe(blocks);
    expect(stats.errors['-32601']).toBeGreaterThan(0);
    // the builder API was never asked
    expect(stats.getTokenTransfers).toBe(0);
    const { '-32601': _notErigon, ...errors } = stats.errors;
    reverts ??= errors['-32000'] ?? 0;
    const refused = Object.values(errors).reduce((a, n) => a + n, 0) - reverts;
    if (c.refuses) expect(refused, 'eth_getLogs calls refused as too large').toBeGreaterThan(0);
    else expect(errors, 'errors but eth_call reverts').toEqual(reverts ? { '-32000': reverts } : {});
    // the range the run learned is kept for the job and this endpoint's host, never above the cap
    const learned = await target.warehouse.db.selectFrom('logs_ranges').selectAll().execute();
    expect(learned.map((r) => ({ job: r.job, host: r.endpoint_host, run: String(r.run_id) }))).toEqual([
      { job: name, host: new URL(devnet.origin).host, run: String(summary.runId) },
    ]);
    if (c.devnet.logsLimits) expect(Number(learned[0]!.blocks)).toBeLessThanOrEqual(CAPS.maxRange);
    figures.push({
      case: c.name,
      ms,
      ethGetLogs: stats.rpcCalls.eth_getLogs ?? 0,
      refused,
      learnedRange: Number(learned[0]!.blocks),
      headerCalls: { eth_getBlockByHash: stats.rpcCalls.eth_getBlockByHash ?? 0, erigon_getHeaderByHash: stats.rpcCalls.erigon_getHeaderByHash ?? 0 },
    });
    return summary;
  }

  it('the builder job’s warehouse is the fixture: every transfer, a header for each of their blocks, a token row per contract', () => {
    expect(expected.transfers).toHaveLength(dataset.transfers.length);
    expect(expected.headers).toHaveLength(blocks);
    expect(expected.tokens).toHaveLength(contractsOf(dataset).length);
    // the results cap is what CAPS says of it: no contract's block exceeds it, one contract's few blocks do
    const perBlock = new Map<string, number>();
    for (const t of dataset.transfers) perBlock.set(`${t.contractAddress} ${t.blockNumber}`, (perBlock.get(`${t.contractAddress} ${t.blockNumber}`) ?? 0) + 1);
    expect(Math.max(...perBlock.values())).toBe(MOST_LOGS_OF_A_CONTRACT_IN_A_BLOCK);
    const weth = dataset.transfers.filter((t) => t.contractAddress === '0xc02aaa39b223fe8d0a0e5c4f27ead9083c756cc2' && t.blockNumber >= 16_000_000 && t.blockNumber <= 16_000_003);
    expect(weth.length).toBeGreaterThan(CAPS.maxResults);
  });

  it(`${CASES[0]!.name}: equal; a second run over the same span rewrites no row and stores no header; status as after the builder job`, async () => {
    const c = CASES[0]!;
    const { devnet, target } = await serveNode('export_node_again', c.devnet);
    const first = await expectNodeExportEqual(c, devnet, target, 'mainnet-fixture');
    const before = await rowVersions(target.warehouse);
    const tablesBefore = await tablesOf(target.warehouse);
    await fetch(`${devnet.origin}/__control/reset-stats`, { method: 'POST' });
    const second = await runExport(target.url, devnet.base, fixtureJob('mainnet-fixture', 'node'));
    expect(second.totals).toMatchObject({ rowsInserted: 0, rowsUpdated: 0, rowsUnchanged: dataset.transfers.length, rowsRemoved: 0, headersFetched: 0 });
    expect(await rowVersions(target.warehouse)).toEqual(before);
    expect(await tablesOf(target.warehouse)).toEqual(tablesBefore);
    // the node source takes each block's time and logsBloom from the headers the first run stored (the rows are
    // proven in those blooms before they are compared): it asks the node for no header
    const { rpcCalls } = await devnet.stats();
    expect(rpcCalls.eth_getBlockByHash ?? 0).toBe(0);
    expect(rpcCalls.eth_getLogs).toBeGreaterThan(0);
    const runs = await target.warehouse.db
      .selectFrom('export_runs')
      .select(['id', 'status', 'rows_inserted', 'rows_unchanged', 'rows_updated', 'headers_fetched'])
      .orderBy('id')
      .execute();
    const n = String(dataset.transfers.length);
    expect(runs).toEqual([
      { id: String(first.runId), status: 'succeeded', rows_inserted: n, rows_unchanged: '0', rows_updated: '0', headers_fetched: String(blocks) },
      { id: String(second.runId), status: 'succeeded', rows_inserted: '0', rows_unchanged: n, rows_updated: '0', headers_fetched: '0' },
    ]);

    // status of the node job's warehouse, with the node as CHAIN_API_URL, and of the builder job's: the same
    // coverage, gaps, rows and symbols per contract; the node's head is the fixture's newest block
    const file = join(tmp, 'mainnet-fixture-node.json');
    await writeFile(file, JSON.stringify({ name: 'mainnet-fixture', source: 'node', contracts: fixtureContracts(dataset) }));
    const status = async (databaseUrl: string, apiUrl: string) => {
      const out = await runCli(['status', file, '--json'], { env: { DATABASE_URL: databaseUrl, CHAIN_API_URL: apiUrl } });
      expect(out.code, out.stderr).toBe(0);
      return JSON.parse(out.stdout) as { head: number | null; contracts: { contract: string; lastRun: { id: string | number; status: string } | null; skippedLogs: unknown }[] };
    };
    const node = await status(target.url, devnet.base);
    const built = await status(builder.url, builderDevnet.base);
    expect(node.head).toBe(Math.max(...dataset.headers.map((h) => Number(BigInt(h.number!)))));
    expect(node.contracts.map((s) => s.contract)).toEqual(contractsOf(dataset));
    expect(node.contracts.filter((s) => s.lastRun?.status !== 'succeeded' || String(s.lastRun.id) !== String(second.runId))).toEqual([]);
    // the fixture's contracts emitted no Transfer-topic log of another shape
    expect(node.contracts.filter((s) => JSON.stringify(s.skippedLogs) !== JSON.stringify({ erc721: 0, other: 0 }))).toEqual([]);
    const comparable = (s: typeof node) => s.contracts.map(({ lastRun: _run, skippedLogs: _skipped, ...rest }) => rest);
    expect(comparable(node)).toEqual(comparable(built));
    const text = await runCli(['status', file], { env: { DATABASE_URL: target.url, CHAIN_API_URL: devnet.base } });
    expect(text.code, text.stderr).toBe(0);
    const weth = '0xc02aaa39b223fe8d0a0e5c4f27ead9083c756cc2';
    const wethRows = dataset.transfers.filter((t) => t.contractAddress === weth).length;
    expect(text.stdout).toMatch(
      new RegExp(`${weth} \\(WETH\\)\\n {2}covered: +\\d+–\\d+\\n {2}gaps: +none\\n {2}rows: +${wethRows}\\n {2}last run: +#${second.runId} mainnet-fixture succeeded`),
    );
    expect(text.stdout).not.toContain('skipped');
  }, 120_000);

  for (const [i, c] of CASES.slice(1).entries()) {
    it(`${c.name}: token_transfers row for row, block_headers header for header (every column), tokens the same`, async () => {
      const { devnet, target } = await serveNode(`export_node_${i}`, c.devnet);
      await expectNodeExportEqual(c, devnet, target, 'mainnet-fixture');
    }, 120_000);
  }
});
