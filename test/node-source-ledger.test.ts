import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import { createServer, type Server } from 'node:http';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { pino } from 'pino';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createSource } from '../src/cli/api-clients.ts';
import { systemClock } from '../src/common/clock.ts';
import { parseApiUrl } from '../src/config/api-url.ts';
import { readDataset } from '../src/dataset/read.ts';
import { generateSyntheticDataset } from '../src/devnet/synthetic.ts';
import { checkHeader } from '../src/source/header-check.ts';
import { learnedLogsStart, saveLogsRange } from '../src/warehouse/logs-ranges.ts';
import { startRun } from '../src/warehouse/runs.ts';
import { recordSkippedLogs, skippedLogsOfRun } from '../src/warehouse/skipped-logs.ts';
import { contractStatus } from '../src/warehouse/status.ts';
import { runCli } from './helpers/cli.ts';
import { startDevnet, type RunningDevnet } from './helpers/devnet.ts';
import { migratedWarehouse } from './helpers/exporter.ts';
import { FIXTURE_DIR } from './helpers/fixtures.ts';

/**
 * What a node source keeps in the warehouse (migration 0007): the eth_getLogs range learned per job and endpoint
 * host, and the logs each run skipped per contract; and how `backfill --source node`, `run`, `enqueue`, `worker`
 * and `status` use them.
 */

const SECRET = 'node-SECRET-91ab';
const USDT = '0xdac17f958d2ee523a2206206994597c13d831ec7';
const USDC = '0xa0b86991c6218b36c1d19d4a2e9eb0ce3606eb48';
const WETH = '0xc02aaa39b223fe8d0a0e5c4f27ead9083c756cc2';

let target: Awaited<ReturnType<typeof migratedWarehouse>>;
let tmp: string;
beforeAll(async () => {
  target = await migratedWarehouse('node_ledger');
  tmp = await mkdtemp(join(tmpdir(), 'erc20-etl-node-ledger-'));
});
afterAll(async () => {
  await target?.drop();
  await rm(tmp, { recursive: true, force: true });
});

describe('recordSkippedLogs', () => {
  it('adds per run and contract what each call (a run, or each of its tasks) skipped, writing nothing for none', async () => {
    const db = target.warehouse.db;
    const run = await startRun(db, { chainId: 1, job: 'skips', command: 'run', contracts: [USDT, USDC] });
    const other = await startRun(db, { chainId: 1, job: 'skips', command: 'run', contracts: [USDT] });
    await recordSkippedLogs(db, run, new Map());
    await recordSkippedLogs(
      db,
      run,
      new Map([
        [USDT.toUpperCase().replace('0X', '0x'), { erc721: 3, other: 0 }],
        [USDC, { erc721: 0, other: 0 }],
      ]),
    );
    await recordSkippedLogs(db, run, new Map([[USDT, { erc721: 2, other: 1 }]]));
    await recordSkippedLogs(db, other, new Map([[USDT, { erc721: 0, other: 7 }]]));
    expect(await skippedLogsOfRun(db, run)).toEqual(new Map([[USDT, { erc721: 5, other: 1 }]]));
    expect(await skippedLogsOfRun(db, other)).toEqual(new Map([[USDT, { erc721: 0, other: 7 }]]));
    await expect(recordSkippedLogs(db, run, new Map([[USDC, { erc721: 1.5, other: 0 }]]))).rejects.toThrow(/integers ≥ 0/);
    await expect(recordSkippedLogs(db, run, new Map([[USDC, { erc721: -1, other: 2 }]]))).rejects.toThrow(/integers ≥ 0/);
  });

  it("shows in status: the last run's counts per contract", async () => {
    const db = target.warehouse.db;
    const [usdt, usdc] = await contractStatus(db, { chainId: 1, contracts: [USDT, USDC] });
    // the last run of USDT is `other` above; USDC's last run skipped nothing
    expect(usdt?.skippedLogs).toEqual({ erc721: 0, other: 7 });
    expect(usdc?.skippedLogs).toEqual({ erc721: 0, other: 0 });
    expect((await contractStatus(db, { chainId: 1, contracts: [WETH] }))[0]?.skippedLogs).toBeNull();

    const file = join(tmp, 'skips.json');
    await writeFile(file, JSON.stringify({ name: 'skips', contracts: [USDT, USDC].map((address) => ({ address, fromBlock: 0 })) }));
    const text = await runCli(['status', file], { env: { DATABASE_URL: target.url, CHAIN_API_URL: '' } });
    expect(text.code, text.stderr).toBe(0);
    expect(text.stdout).toMatch(new RegExp(`${USDT}\\n(?:.*\\n)*? {2}skipped: {5}7 other-shaped Transfer log\\(s\\) in run #\\d+ \\(not ERC-20 transfers, not stored\\)\\n`));
    expect(text.stdout.split(`${USDC}\n`)[1]).not.toMatch(/skipped/);
    const json = await runCli(['status', file, '--json'], { env: { DATABASE_URL: target.url, CHAIN_API_URL: '' } });
    const contracts = (JSON.parse(json.stdout) as { contracts: { contract: string; skippedLogs: unknown }[] }).contracts;
    expect(contracts.find((c) => c.contract === USDT)?.skippedLogs).toEqual({ erc721: 0, other: 7 });
  });

  it('refuses counts String() writes in other than digits, writing none of the call; writes nothing for NaN, and -0 as 0', async () => {
    const db = target.warehouse.db;
    // contracts of their own, so that no other test's last run changes
    const [first, second] = [`0x${'11'.repeat(20)}`, `0x${'22'.repeat(20)}`];
    const run = await startRun(db, { chainId: 1, job: 'skips-odd', command: 'run', contracts: [first, second] });
    for (const bad of [Number.POSITIVE_INFINITY, 1e21, Number.NaN]) {
      const counts = new Map([
        [first, { erc721: 1, other: 0 }],
        [second, { erc721: 1, other: bad }],
      ]);
      await expect(recordSkippedLogs(db, run, counts), String(bad)).rejects.toThrow(`skipped-log counts must be integers ≥ 0, got 1 and ${bad} for ${second}`);
    }
    expect(await skippedLogsOfRun(db, run)).toEqual(new Map());
    await recordSkippedLogs(db, run, new Map([[first, { erc721: Number.NaN, other: Number.NaN }]]));
    await recordSkippedLogs(db, run, new Map([[second, { erc721: -0, other: 1 }]]));
    expect(await skippedLogsOfRun(db, run)).toEqual(new Map([[second, { erc721: 0, other: 1 }]]));
  });
});

describe('learned eth_getLogs ranges', () => {
  it('keeps one range per chain, job and endpoint host, the newest', async () => {
    const db = target.warehouse.db;
    const learnedLogsRange = async (chain: number, job: string, host: string) => (await learnedLogsStart(db, chain, job, host)).blocks;
    expect(await learnedLogsRange(1, 'nightly', 'mainnet.example.org')).toBeUndefined();
    await saveLogsRange(db, { chainId: 1, job: 'nightly', endpointHost: 'mainnet.example.org', blocks: 2000 });
    await saveLogsRange(db, { chainId: 1, job: 'nightly', endpointHost: 'other.example.org:8545', blocks: 50 });
    await saveLogsRange(db, { chainId: 1, job: 'nightly', endpointHost: 'mainnet.example.org', blocks: 1500 });
    expect(await learnedLogsRange(1, 'nightly', 'mainnet.example.org')).toBe(1500);
    expect(await learnedLogsRange(1, 'nightly', 'other.example.org:8545')).toBe(50);
    expect(await learnedLogsRange(1, 'weekly', 'mainnet.example.org')).toBeUndefined();
    // the same job name and host on another chain learns its own
    expect(await learnedLogsRange(8453, 'nightly', 'mainnet.example.org')).toBeUndefined();
    await saveLogsRange(db, { chainId: 8453, job: 'nightly', endpointHost: 'mainnet.example.org', blocks: 30 });
    expect(await learnedLogsRange(8453, 'nightly', 'mainnet.example.org')).toBe(30);
    expect(await learnedLogsRange(1, 'nightly', 'mainnet.example.org')).toBe(1500);
    await expect(saveLogsRange(db, { chainId: 1, job: 'nightly', endpointHost: 'x', blocks: 0 })).rejects.toThrow(RangeError);
  });

  it('keeps the block limit a run met with its answers since, clears it when the run found it gone, and keeps it when the run knew of none', async () => {
    const db = target.warehouse.db;
    const at = { chainId: 1, job: 'limits', endpointHost: 'rpc.example.org' };
    const start = () => learnedLogsStart(db, 1, 'limits', 'rpc.example.org');
    expect(await start()).toEqual({ blocks: undefined, blockLimit: undefined });
    await saveLogsRange(db, { ...at, blocks: 280, blockLimit: { blocks: 312, answers: 40 } });
    expect(await start()).toEqual({ blocks: 280, blockLimit: { blocks: 312, answers: 40 } });
    // per chain, job and host, as the range
    expect((await learnedLogsStart(db, 10, 'limits', 'rpc.example.org')).blockLimit).toBeUndefined();
    expect((await learnedLogsStart(db, 1, 'limits', 'other.example.org')).blockLimit).toBeUndefined();
    // a run (a task started before the limit was stored) that knew of none leaves it as it is
    await saveLogsRange(db, { ...at, blocks: 290 });
    expect(await start()).toEqual({ blocks: 290, blockLimit: { blocks: 312, answers: 40 } });
    await saveLogsRange(db, { ...at, blocks: 281, blockLimit: { blocks: 307, answers: 75 } });
    expect(await start()).toEqual({ blocks: 281, blockLimit: { blocks: 307, answers: 75 } });
    // a run that found it gone clears it
    await saveLogsRange(db, { ...at, blocks: 900, blockLimit: 'gone' });
    expect(await start()).toEqual({ blocks: 900, blockLimit: undefined });
    await expect(saveLogsRange(db, { ...at, blocks: 900, blockLimit: { blocks: 0, answers: 0 } })).rejects.toThrow(/block limit must be an integer from 1/);
    await expect(saveLogsRange(db, { ...at, blocks: 900, blockLimit: { blocks: 300, answers: -1 } })).rejects.toThrow(/block limit's answers must be an integer from 0/);
  });
});

describe('erc20-etl with a node source', () => {
  let devnet: RunningDevnet;
  let proxy: Server;
  let proxyOrigin: string;
  /** The blocks of each eth_getLogs call, in the order they came. */
  const spans: number[] = [];
  beforeAll(async () => {
    // the real mainnet fixture, served as geth serves it (no erigon_*), with a block limit QuickNode states in its refusals
    devnet = await startDevnet(await readDataset(FIXTURE_DIR), { projectIds: [SECRET], erigon: false, logsLimits: { maxRange: 1000, style: 'quicknode' } });
    // in front of it, what notes the span of every eth_getLogs call
    proxy = createServer((req, res) => {
      let body = '';
      req.on('data', (d: Buffer) => (body += d.toString()));
      req.on('end', async () => {
        for (const call of [JSON.parse(body) as unknown].flat() as { method?: string; params?: { fromBlock: string; toBlock: string }[] }[]) {
          const filter = call.params?.[0];
          if (call.method === 'eth_getLogs' && filter) spans.push(Number(filter.toBlock) - Number(filter.fromBlock) + 1);
        }
        const answer = await fetch(`${devnet.origin}${req.url}`, { method: 'POST', headers: { 'content-type': 'application/json' }, body });
        res.writeHead(answer.status, { 'content-type': 'application/json' });
        res.end(await answer.text());
      });
    });
    await new Promise<void>((r) => proxy.listen(0, '127.0.0.1', r));
    proxyOrigin = `http://127.0.0.1:${(proxy.address() as { port: number }).port}`;
  });
  afterAll(async () => {
    await new Promise((r) => proxy?.close(r));
    await devnet?.close();
  });
  const api = () => `${proxyOrigin}/${SECRET}`;
  const refused = async () => (await devnet.stats()).errors['-32614'] ?? 0;
  const host = () => new URL(proxyOrigin).host;

  it('backfill --source node keeps the range it learned for the endpoint host (never the URL), and the next run starts there', async () => {
    const args = ['backfill', '--source', 'node', '--contract', USDT, '--contract', USDC, '--from', '17990000', '--to', '18000000', '--rpc-timeout', '10'];
    const env = { DATABASE_URL: target.url, CHAIN_API_URL: api() };
    const before = await refused();
    spans.length = 0;
    const first = await runCli(args, { env });
    expect(first.code, first.stderr).toBe(0);
    expect(`${first.stdout}${first.stderr}`).not.toMatch(/node-secret-91ab/i);
    const refusedFirst = (await refused()) - before;
    expect(refusedFirst).toBeGreaterThan(0);
    // the calls the node got and the ones it refused, as the node counted them
    expect(first.stdout).toContain(
      `  eth_getLogs: ${spans.length} calls, ${refusedFirst} refused and asked again in smaller calls; 1000 blocks per call learned, the next run of the job starts there\n`,
    );
    const { rows } = await target.warehouse.pool.query<{ job: string; endpoint_host: string; blocks: number }>(
      'SELECT job, endpoint_host, blocks FROM logs_ranges WHERE endpoint_host = $1',
      [host()],
    );
    expect(rows).toEqual([{ job: expect.stringMatching(/^backfill-[0-9a-f]{8}$/), endpoint_host: host(), blocks: 1000 }]);

    // the first run started at 2,000 blocks, the source's default; the second where the first ended (blocks read in
    // full are sized by the rows stored: the second run is told of none)
    expect(spans[0]).toBe(2000);
    await target.warehouse.db.deleteFrom('export_coverage').execute();
    spans.length = 0;
    const second = await runCli(args, { env });
    expect(second.code, second.stderr).toBe(0);
    expect(spans[0]).toBe(1000);
  });

  it("a run's node source gives the pipeline its own header checks once it has read a page, so the headers its pages hashed are not hashed again", async () => {
    const source = createSource({
      api: parseApiUrl(`${devnet.origin}/${SECRET}`),
      logger: pino({ level: 'silent' }),
      clock: systemClock,
      warehouse: target.warehouse,
      concurrency: 1,
      job: { name: 'checks', source: 'node', headerBatchSize: 100 },
    });
    try {
      // made at its first call: nothing to give before
      expect(source.checks).toBeUndefined();
      const page = await source.fetchPage({ contract: USDT, fromBlock: 17_999_000, toBlock: 18_000_000, pageSize: 50 });
      const row = page.transfers[0]!;
      expect(source.checks?.chain).toBe(1);
      // the header the page checked, as the pipeline is served it: the source's checks know its hash holds
      const raw = (await source.headersByHash([row.blockHash])).get(row.blockHash) as Record<string, unknown>;
      const expected = { hash: row.blockHash, number: row.blockNumber, timestamp: row.blockTimestamp };
      expect(source.checks?.checkHeader(raw, expected).hashVerified).toBe(true);
      // which is memory, not hashing: a field changed in that very object (a bug, never done) still passes them
      const changed = Object.assign(raw, { gasUsed: '0x1' });
      expect(source.checks?.checkHeader(changed, expected).hashVerified).toBe(true);
      expect(() => checkHeader(1, { ...changed }, expected)).toThrow(/does not hash to|altered/);
    } finally {
      await source.close();
    }
  });

  it('run: a job file\'s "logsRange" is the first range; --rpc-timeout is refused for a builder job', async () => {
    const file = join(tmp, 'node-job.json');
    await writeFile(file, JSON.stringify({ name: 'node-job', source: 'node', logsRange: 500, contracts: [{ address: WETH, fromBlock: 17995000, toBlock: 18000000 }] }));
    spans.length = 0;
    const r = await runCli(['run', file, '--rpc-timeout', '5'], { env: { DATABASE_URL: target.url, CHAIN_API_URL: api() } });
    expect(r.code, r.stderr).toBe(0);
    expect(spans[0]).toBe(500);

    const builder = join(tmp, 'builder-job.json');
    await writeFile(builder, JSON.stringify({ name: 'builder-job', contracts: [{ address: WETH, fromBlock: 0, toBlock: 10 }] }));
    const refusedFlag = await runCli(['run', builder, '--rpc-timeout', '5'], { env: { DATABASE_URL: target.url, CHAIN_API_URL: api() } });
    expect(refusedFlag.code).toBe(2);
    expect(refusedFlag.stderr).toContain(`--rpc-timeout applies to node sources only: the job file ${builder} reads the builder API ("source": "builder").`);

    // a bad --rpc-timeout is one problem, said once, among the others
    const bad = await runCli(['backfill', '--source', 'node', '--contract', WETH, '--from', '1', '--to', '2', '--rpc-timeout', '0'], {
      env: { DATABASE_URL: '', CHAIN_API_URL: '' },
    });
    expect(bad.code).toBe(2);
    expect(bad.stderr.match(/--rpc-timeout: expected seconds from 0\.1 to 3600/g)).toHaveLength(1);
    expect(bad.stderr).toMatch(/no database: set DATABASE_URL/);
  });

  it('enqueue and a worker read a node job, and the worker keeps the range its task learned', async () => {
    const file = join(tmp, 'queued-node.json');
    await writeFile(file, JSON.stringify({ name: 'queued-node', source: 'node', contracts: [{ address: USDT, fromBlock: 17998000, toBlock: 18000000 }], concurrency: 1 }));
    const env = { DATABASE_URL: target.url, CHAIN_API_URL: api() };
    const enqueued = await runCli(['enqueue', file], { env });
    expect(enqueued.code, enqueued.stderr).toBe(0);
    const worker = await runCli(['worker', '--once', '--dead-after', '5', '--rpc-timeout', '10'], { env });
    expect(worker.code, worker.stderr).toBe(0);
    expect(`${worker.stdout}${worker.stderr}`).not.toMatch(/node-secret-91ab/i);
    expect((await learnedLogsStart(target.warehouse.db, 1, 'queued-node', host())).blocks).toBe(1000);
  }, 120_000);
});

describe('a block limit the provider does not state, kept for the next run', () => {
  it("the job's next run starts under the limit its first run met (Ankr's words, 300 blocks), and is refused at most once", async () => {
    const options = { seed: 7, blocks: 12_000, tokens: 2, transfers: 36_000, startBlock: 18_000_000 };
    const chain = generateSyntheticDataset(options);
    const devnet = await startDevnet(chain, { projectIds: [SECRET], erigon: false, logsLimits: { maxRange: 300, style: 'ankr' } });
    try {
      const refused = async () => (await devnet.stats()).rpcOutcomes.eth_getLogs?.refused.rangeCap ?? 0;
      const contracts = [...new Set(chain.transfers.map((t) => t.contractAddress))];
      const file = join(tmp, 'block-limit.json');
      const env = { DATABASE_URL: target.url, CHAIN_API_URL: `${devnet.origin}/${SECRET}` };
      const run = async (toBlock: number) => {
        await writeFile(
          file,
          // one chunk at a time: the calls, and so the refusals, come in the same order in every run of the test
          JSON.stringify({
            name: 'block-limit',
            chain: 1,
            source: 'node',
            concurrency: 1,
            contracts: contracts.map((address) => ({ address, fromBlock: options.startBlock, toBlock })),
          }),
        );
        const before = await refused();
        const r = await runCli(['run', file], { env });
        expect(r.code, r.stderr).toBe(0);
        const { rows } = await target.warehouse.pool.query<{ blocks: number; block_limit: number | null; block_limit_answers: number }>(
          "SELECT blocks, block_limit, block_limit_answers FROM logs_ranges WHERE job = 'block-limit'",
        );
        return { refused: (await refused()) - before, kept: rows[0], said: r.stdout.split('\n').find((l) => l.startsWith('  eth_getLogs:')) };
      };
      // the first run meets the limit the hard way, and keeps the span it found refused with the range that worked
      const first = await run(options.startBlock + 3_999);
      expect(first.refused).toBeGreaterThan(1);
      expect(first.kept?.blocks).toBeLessThanOrEqual(300);
      expect(first.kept?.block_limit).toBeGreaterThan(300);
      expect(first.kept?.block_limit).toBeLessThanOrEqual(600);
      // each next run over the next blocks starts under it, and only comes closer to it: refused less each time
      const second = await run(options.startBlock + 7_999);
      const figures = () => JSON.stringify({ first, second, third });
      let third: Awaited<ReturnType<typeof run>> | undefined;
      expect(second.refused, figures()).toBeLessThan(first.refused);
      expect(second.kept?.block_limit, figures()).toBeLessThanOrEqual(first.kept!.block_limit!);
      // its answers are counted on from the run before (unless the run met it lower, which starts them again)
      if (second.kept?.block_limit === first.kept?.block_limit) expect(second.kept!.block_limit_answers, figures()).toBeGreaterThan(first.kept!.block_limit_answers);
      third = await run(options.startBlock + options.blocks - 1);
      expect(third.refused, figures()).toBeLessThanOrEqual(1);
      expect(third.kept?.block_limit, figures()).toBeLessThanOrEqual(second.kept!.block_limit!);
      expect(third.said).toMatch(new RegExp(`the next run of the job starts there and stays under the ${third.kept?.block_limit}-block span the node refused as too wide`));
    } finally {
      await devnet.close();
    }
  }, 180_000);
});
