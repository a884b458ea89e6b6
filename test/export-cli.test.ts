import { spawn } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { mkdtemp, readdir, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import pg from 'pg';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { Dataset } from '../src/dataset/types.ts';
import { generateSyntheticDataset } from '../src/devnet/synthetic.ts';
import { BIN, collect, REPO_DIR, runCli } from './helpers/cli.ts';
import { freshDatabase } from './helpers/database.ts';
import { startDevnet, type RunningDevnet } from './helpers/devnet.ts';
import { datasetTransfers, migratedWarehouse, warehouseTransfers } from './helpers/exporter.ts';
import { tryJobLock } from '../src/warehouse/job-lock.ts';

const SECRET_PROJECT = 'proj-SECRET-4242';
const tmp = mkdtempSync(join(tmpdir(), 'erc20-etl-export-cli-'));
afterAll(() => rmSync(tmp, { recursive: true, force: true }));

let dataset: Dataset;
let devnet: RunningDevnet;
beforeAll(async () => {
  dataset = generateSyntheticDataset({ seed: 8, blocks: 400, tokens: 3, transfers: 3000, startBlock: 500 });
  devnet = await startDevnet(dataset, { projectIds: [SECRET_PROJECT] });
});
afterAll(() => devnet.close());

const contracts = () => [...new Set(dataset.transfers.map((t) => t.contractAddress))].sort();
const api = () => `${devnet.origin}/${SECRET_PROJECT}`;

describe('erc20-etl migrate', () => {
  it('is safe to run twice and concurrently', async () => {
    const db = await freshDatabase('cli_migrate');
    try {
      const env = { DATABASE_URL: db.url };
      const results = await Promise.all([runCli(['migrate'], { env }), runCli(['migrate'], { env }), runCli(['migrate'], { env })]);
      for (const r of results) expect(r.code, r.stderr).toBe(0);
      expect(results.filter((r) => /applied 0001_initial/.test(r.stdout))).toHaveLength(1);
      const again = await runCli(['migrate'], { env });
      expect(again.stdout).toMatch(/up to date/);
    } finally {
      await db.drop();
    }
  });
});

describe('erc20-etl usage and configuration errors', () => {
  it('exits 2 and names both missing settings', async () => {
    const r = await runCli(['backfill', '--contract', contracts()[0]!, '--from', '0', '--to', '10'], { env: { DATABASE_URL: '', CHAIN_API_URL: '' } });
    expect(r.code).toBe(2);
    expect(r.stderr).toMatch(/DATABASE_URL/);
    expect(r.stderr).toMatch(/CHAIN_API_URL/);
  });

  it('exits 2 for a bad job file, naming file and field', async () => {
    const file = join(tmp, 'bad.json');
    writeFileSync(file, JSON.stringify({ name: 'bad', contracts: [{ address: '0x12', fromBlock: -1 }], pageSize: 5000 }));
    const r = await runCli(['run', file], { env: { DATABASE_URL: 'postgres://x@127.0.0.1:1/x', CHAIN_API_URL: api() } });
    expect(r.code).toBe(2);
    expect(r.stderr).toMatch(/bad\.json: contracts\[0\]\.address/);
    expect(r.stderr).toMatch(/contracts\[0\]\.fromBlock/);
    expect(r.stderr).toMatch(/pageSize/);
  });

  it('lists every problem of the job file, the settings and the flags at once, instead of one kind at a time', async () => {
    const file = join(tmp, 'bad-all.json');
    writeFileSync(file, JSON.stringify({ name: 'bad', contracts: [{ address: '0x12', fromBlock: 1 }], pageSize: 5000 }));
    const budget = join(tmp, 'no-such-folder', 'budget.json');
    const r = await runCli(['run', file, '--metrics-port', 'abc', '--time-budget', budget], { env: { DATABASE_URL: 'not a url', CHAIN_API_URL: '' } });
    expect(r.code, r.stderr).toBe(2);
    expect(r.stderr).toMatch(/6 problems with what the command was given \(its flags, settings and job file\)/);
    for (const problem of [
      /bad-all\.json: contracts\[0\]\.address/,
      /bad-all\.json: pageSize/,
      /DATABASE_URL is not a URL/,
      /no chain API: set CHAIN_API_URL/,
      /--metrics-port: expected a port number/,
      /--time-budget: cannot write .*budget\.json/,
    ])
      expect(r.stderr).toMatch(problem);

    const flags = await runCli(['backfill', '--contract', 'nope', '--from', '1', '--to', '2', '--metrics-port', '70000'], {
      env: { DATABASE_URL: 'postgres://x@127.0.0.1:1/x', CHAIN_API_URL: '' },
    });
    expect(flags.code, flags.stderr).toBe(2);
    for (const problem of [/--contract/, /no chain API/, /--metrics-port: expected a port number/]) expect(flags.stderr).toMatch(problem);

    // a flag of one value given twice is refused, its values not shown (one may hold a password); repeatable ones collect
    const twice = await runCli(['status', '--database-url', 'postgres://u:pw-one@127.0.0.1:1/x', '--database-url', 'postgres://u:pw-two@127.0.0.1:1/x'], { env: {} });
    expect(twice.code, twice.stderr).toBe(2);
    expect(twice.stderr).toContain('--database-url is given twice; give it once');
    expect(twice.stderr).not.toMatch(/pw-one|pw-two/);
    const toTwice = await runCli(['backfill', '--contract', 'nope', '--contract', 'nope2', '--from', '1', '--to', '2', '--to', '3'], { env: { DATABASE_URL: '' } });
    expect(toTwice.code, toTwice.stderr).toBe(2);
    expect(toTwice.stderr).toContain('--to is given twice; give it once');
    // asked for help, help is shown
    const help = await runCli(['backfill', '--help', '--to', '3', '--to', '4'], { env: {} });
    expect(help.code, help.stderr).toBe(0);
    expect(help.stdout).toContain('Usage: erc20-etl backfill');

    // a command refused leaves an earlier time budget as it was
    const earlier = join(tmp, 'earlier-budget.json');
    writeFileSync(earlier, '{"seconds": {"copy": 1}}\n');
    const refused = await runCli(['run', file, '--time-budget', earlier], { env: { DATABASE_URL: 'not a url', CHAIN_API_URL: api() } });
    expect(refused.code, refused.stderr).toBe(2);
    expect(readFileSync(earlier, 'utf8')).toBe('{"seconds": {"copy": 1}}\n');

    const report = await runCli(['report', '--days', '0', '--runs', 'abc'], { env: { DATABASE_URL: '' } });
    expect(report.code, report.stderr).toBe(2);
    for (const problem of [/--out FILE is required/, /--days: expected a whole number/, /--runs: expected a whole number/, /no database: set DATABASE_URL/])
      expect(report.stderr).toMatch(problem);

    const worker = await runCli(['worker', '--concurrency', '0', '--metrics-port', 'x'], { env: { DATABASE_URL: 'mysql://x@h/db', CHAIN_API_URL: api() } });
    expect(worker.code, worker.stderr).toBe(2);
    for (const problem of [/--concurrency: expected an integer/, /DATABASE_URL must be a postgres/, /--metrics-port: expected a port number/])
      expect(worker.stderr).toMatch(problem);
  });

  it('exits 2 for bad backfill flags, naming each', async () => {
    const r = await runCli(['backfill', '--contract', 'nope', '--from', '9', '--to', '3'], { env: { DATABASE_URL: 'postgres://x@127.0.0.1:1/x', CHAIN_API_URL: api() } });
    expect(r.code).toBe(2);
    expect(r.stderr).toMatch(/--contract/);
    expect(r.stderr).toMatch(/--from \(9\) is greater than --to \(3\)/);
  });
});

describe('erc20-etl backfill and run', () => {
  let target: Awaited<ReturnType<typeof migratedWarehouse>>;
  beforeAll(async () => {
    target = await migratedWarehouse('cli_export');
  });
  afterAll(() => target.drop());

  it('caps a --to beyond the head with a warning, exports exactly, and never prints the project id', async () => {
    const args = ['backfill', ...contracts().flatMap((c) => ['--contract', c]), '--from', '0', '--to', '99999999', '--page-size', '300'];
    const r = await runCli(args, { env: { DATABASE_URL: target.url, CHAIN_API_URL: api() } });
    expect(r.code, r.stderr).toBe(0);
    expect(r.stderr).toMatch(/toBlock 99999999 is beyond the chain head 899/);
    expect(r.stdout).toMatch(/3000 inserted/);
    expect(`${r.stdout}${r.stderr}`).not.toContain(SECRET_PROJECT);
    expect(await warehouseTransfers(target.warehouse)).toEqual(datasetTransfers(dataset));
  });

  it('reads nothing for a range wholly beyond the head, and says so instead of "up to date"', async () => {
    const args = ['backfill', '--contract', contracts()[0]!, '--from', '5000', '--to', '6000'];
    const r = await runCli(args, { env: { DATABASE_URL: target.url, CHAIN_API_URL: api() } });
    expect(r.code, r.stderr).toBe(0);
    expect(r.stderr).toContain('blocks 5000–6000 are all beyond the chain head 899: nothing to read until the chain reaches block 5000');
    expect(r.stderr).not.toContain('reading up to');
    expect(r.stdout).toContain('nothing to read: no contract has blocks left to read up to the chain head 899');
    expect(r.stdout).not.toContain('up to date');
  });

  it('exits 75 at once while another run holds the job’s lock', async () => {
    const file = join(tmp, 'locked.json');
    writeFileSync(file, JSON.stringify({ name: 'locked-job', contracts: [{ address: contracts()[0], fromBlock: 500 }] }));
    const holder = new pg.Client({ connectionString: target.url });
    await holder.connect();
    try {
      await holder.query(`SELECT pg_advisory_lock(hashtextextended('erc20-etl job ' || $1, 0))`, ['locked-job']);
      const r = await runCli(['run', file], { env: { DATABASE_URL: target.url, CHAIN_API_URL: api() } });
      expect(r.code).toBe(75);
      expect(r.stderr).toMatch(/Another run of job "locked-job" is in progress/);
    } finally {
      await holder.end();
    }
    const r = await runCli(['run', file], { env: { DATABASE_URL: target.url, CHAIN_API_URL: api() } });
    expect(r.code, r.stderr).toBe(0);
  });

  it('fails with exit 1 and the API’s message on a wrong project id, without printing it', async () => {
    const r = await runCli(['run', join(tmp, 'locked.json')], { env: { DATABASE_URL: target.url, CHAIN_API_URL: `${devnet.origin}/wrong-SECRET-id` } });
    expect(r.code).toBe(1);
    expect(r.stderr).toMatch(/401|project id/);
    expect(`${r.stdout}${r.stderr}`).not.toContain('wrong-SECRET-id');
  });
});

describe('a header batch larger than the endpoint takes', () => {
  it('fails the run saying to lower --header-batch-size; the next run with a smaller batch finishes it exactly', async () => {
    const limited = await startDevnet(dataset, { projectIds: [SECRET_PROJECT], rpcBatchLimit: 40 });
    const target = await migratedWarehouse('cli_header_batch');
    try {
      const env = { DATABASE_URL: target.url, CHAIN_API_URL: `${limited.origin}/${SECRET_PROJECT}` };
      const args = ['backfill', ...contracts().flatMap((c) => ['--contract', c]), '--from', '500', '--to', '899', '--page-size', '300'];
      const refused = await runCli([...args, '--header-batch-size', '100'], { env });
      expect(refused.code).toBe(1);
      expect(refused.stderr).toContain('refused a batch of 100 erigon_getHeaderByHash calls (HTTP 400, -32600 "batch too large (at most 40)")');
      expect(refused.stderr).toContain('--header-batch-size for backfill');
      // not retried: each refused batch was sent once (two header POSTs may be in flight alongside the pages)
      const refusals = (await limited.stats()).errors['-32600'] ?? 0;
      expect(refusals).toBeGreaterThanOrEqual(1);
      expect(refusals).toBeLessThanOrEqual(2);
      const kept = await warehouseTransfers(target.warehouse);
      expect(kept.length).toBeGreaterThan(0);

      const finished = await runCli([...args, '--header-batch-size', '40'], { env });
      expect(finished.code, finished.stderr).toBe(0);
      expect(await warehouseTransfers(target.warehouse)).toEqual(datasetTransfers(dataset));
      const { rows } = await target.warehouse.pool.query<{ headers: number; blocks: number }>(
        'SELECT (SELECT count(*)::int FROM block_headers) AS headers, (SELECT count(DISTINCT block_hash)::int FROM token_transfers) AS blocks',
      );
      expect(rows[0]!.headers).toBe(rows[0]!.blocks);
      expect(`${refused.stderr}${finished.stdout}${finished.stderr}`).not.toContain(SECRET_PROJECT);
    } finally {
      await target.drop();
      await limited.close();
    }
  });
});

describe('erc20-etl backfill --time-budget', () => {
  let target: Awaited<ReturnType<typeof migratedWarehouse>>;
  beforeAll(async () => {
    target = await migratedWarehouse('cli_time_budget');
  });
  afterAll(() => target.drop());
  const args = () => ['backfill', ...contracts().flatMap((c) => ['--contract', c]), '--from', '500', '--to', '899', '--page-size', '300'];

  it('refuses a file it cannot write before the run starts, naming it', async () => {
    const file = join(tmp, 'no-such-folder', 'budget.json');
    const r = await runCli([...args(), '--time-budget', file], { env: { DATABASE_URL: target.url, CHAIN_API_URL: api() } });
    expect(r.code, r.stderr).toBe(2);
    expect(r.stderr).toContain(`--time-budget: cannot write ${file}`);
    const runs = await target.warehouse.pool.query('SELECT count(*)::int AS n FROM export_runs');
    expect(runs.rows[0].n).toBe(0);
  });

  it('writes the budget of a run that failed too, saying so', async () => {
    const file = join(tmp, 'failed-budget.json');
    const r = await runCli([...args(), '--time-budget', file], { env: { DATABASE_URL: target.url, CHAIN_API_URL: `${devnet.origin}/wrong-SECRET-id` } });
    expect(r.code, r.stderr).toBe(1);
    const report = JSON.parse(readFileSync(file, 'utf8')) as { failed?: boolean; seconds: Record<string, number> };
    expect(report.failed).toBe(true);
    expect(Object.keys(report.seconds)).toEqual(['parse', 'copy', 'commit', 'headers', 'api', 'other']);
    expect(r.stdout).not.toContain('time:');
  });

  it("writes where the run's wall time went, every part, adding up to the run's span", async () => {
    const file = join(tmp, 'budget.json');
    const r = await runCli([...args(), '--time-budget', file], { env: { DATABASE_URL: target.url, CHAIN_API_URL: api() } });
    expect(r.code, r.stderr).toBe(0);
    expect(await warehouseTransfers(target.warehouse)).toEqual(datasetTransfers(dataset));
    const report = JSON.parse(readFileSync(file, 'utf8')) as { startedAt: number; endedAt: number; seconds: Record<string, number> };
    expect(Object.keys(report.seconds)).toEqual(['parse', 'copy', 'commit', 'headers', 'api', 'other']);
    for (const s of Object.values(report.seconds)) expect(s).toBeGreaterThanOrEqual(0);
    // 3,000 rows were parsed and copied
    expect(report.seconds.parse).toBeGreaterThan(0);
    expect(report.seconds.copy).toBeGreaterThan(0);
    const total = Object.values(report.seconds).reduce((a, b) => a + b, 0);
    expect(total).toBeCloseTo((report.endedAt - report.startedAt) / 1000, 3);
    expect(r.stdout).toMatch(/ {2}time: parse \d+\.\d\d s \(\d+ %\), copy .*; in .*budget\.json/);
  });
});

describe('a backfill killed mid-range', () => {
  it('resumes without duplicates or gaps, also when its page keys have expired meanwhile', async () => {
    for (const ttl of [86_400, 1]) {
      const slow = await startDevnet(dataset, { projectIds: [SECRET_PROJECT], faults: { latencyMs: [15, 15] }, pageKeyTtlSeconds: ttl });
      const target = await migratedWarehouse(`cli_kill_${ttl}`);
      try {
        const env = { ...process.env, DATABASE_URL: target.url, CHAIN_API_URL: `${slow.origin}/${SECRET_PROJECT}` };
        const args = [
          BIN,
          'backfill',
          ...contracts().flatMap((c) => ['--contract', c]),
          '--from',
          '500',
          '--to',
          '899',
          '--page-size',
          '40',
          '--concurrency',
          '2',
          '--commit-rows',
          '40',
        ];
        // a commit per page (each chunk's share of 40 rows): the kill finds chunks part-way, their page keys stored
        const child = spawn(process.execPath, args, { cwd: REPO_DIR, env });
        const done = collect(child, 120_000);
        // wait until a few pages are committed, then kill it without warning
        for (let i = 0; i < 600; i++) {
          const { rows } = await target.warehouse.pool.query<{ pages: string }>('SELECT coalesce(sum(pages), 0)::text AS pages FROM export_chunks');
          if (Number(rows[0]?.pages) >= 5) break;
          await new Promise((r) => setTimeout(r, 50));
        }
        child.kill('SIGKILL');
        await done;
        const committed = await warehouseTransfers(target.warehouse);
        expect(committed.length).toBeGreaterThan(0);
        expect(committed.length).toBeLessThan(3000);
        // no committed position is ahead of its rows: every block above a chunk's resume point is complete
        const chunks = await target.warehouse.pool.query<{
          contract: string;
          from_block: string;
          to_block: string;
          resume_to_block: string | null;
          done: boolean;
          page_key: string | null;
        }>('SELECT r.contract_address AS contract, c.from_block, c.to_block, c.resume_to_block, c.done, c.page_key FROM export_chunks c JOIN export_ranges r ON r.id = c.range_id');
        expect(chunks.rows.some((c) => !c.done && c.page_key !== null)).toBe(true);
        const have = new Set(committed.map((t) => `${t.transactionHash}:${t.logIndex}`));
        for (const c of chunks.rows) {
          if (c.resume_to_block === null) continue;
          const above = dataset.transfers.filter((t) => t.contractAddress === c.contract && t.blockNumber > Number(c.resume_to_block) && t.blockNumber <= Number(c.to_block));
          for (const t of above) expect(have.has(`${t.transactionHash}:${t.logIndex}`)).toBe(true);
        }
        if (ttl === 1) await new Promise((r) => setTimeout(r, 1500));
        const resumed = await collect(spawn(process.execPath, args, { cwd: REPO_DIR, env }), 120_000);
        expect(resumed.code, resumed.stderr).toBe(0);
        if (ttl === 1) expect(resumed.stderr).toMatch(/page key refused/);
        expect(await warehouseTransfers(target.warehouse)).toEqual(datasetTransfers(dataset));
        const runs = await target.warehouse.db.selectFrom('export_runs').select(['status']).orderBy('id').execute();
        expect(runs.map((r) => r.status)).toEqual(['failed', 'succeeded']);
      } finally {
        await target.drop();
        await slow.close();
      }
    }
  });
});

describe('erc20-etl status', () => {
  it('on a warehouse that is not migrated, exits 1 and says to run migrate (and so does report, writing nothing)', async () => {
    const db = await freshDatabase('cli_status_unmigrated');
    const dir = await mkdtemp(join(tmpdir(), 'erc20-etl-unmigrated-'));
    try {
      const out = join(dir, 'report.html');
      for (const args of [['status'], ['report', '--out', out]]) {
        const r = await runCli(args, { env: { DATABASE_URL: db.url } });
        expect(r.code, r.stderr).toBe(1);
        expect(r.stderr).toMatch(/The warehouse is not migrated \(\d+ migration\(s\) pending: 0001_initial, .*\)\. Run `erc20-etl migrate` first\./);
        expect(r.stderr).not.toMatch(/unexpected failure|does not exist/);
      }
      expect(await readdir(dir)).toEqual([]);
    } finally {
      await rm(dir, { recursive: true, force: true });
      await db.drop();
    }
  });

  it('ends quietly, with exit 0, when its reader closes the pipe before it prints (status | head)', async () => {
    const target = await migratedWarehouse('cli_status_pipe');
    try {
      const child = spawn(process.execPath, [BIN, 'status'], { cwd: REPO_DIR, env: { ...process.env, DATABASE_URL: target.url, CHAIN_API_URL: '' } });
      // the reading end goes before the command writes a byte
      child.stdout.destroy();
      const r = await collect(child, 60_000);
      expect(r.stderr).not.toMatch(/EPIPE|Unhandled|unexpected failure/);
      expect(r.code, r.stderr).toBe(0);
    } finally {
      await target.drop();
    }
  });

  it('shows a run whose process is gone as ended without finishing, and one whose process holds its job as running', async () => {
    const target = await migratedWarehouse('cli_status_gone');
    try {
      const [a] = contracts();
      const first = await runCli(['backfill', '--contract', a!, '--from', '500', '--to', '510'], { env: { DATABASE_URL: target.url, CHAIN_API_URL: api() } });
      expect(first.code, first.stderr).toBe(0);
      // a `run` of job "gone" still marked running, as a process killed mid-run leaves it; and a queued run of another job
      await target.warehouse.pool.query(`INSERT INTO export_runs (chain_id, job, command, contracts) VALUES (1, 'queued', 'enqueue', ARRAY[$1]), (1, 'gone', 'run', ARRAY[$1])`, [
        a,
      ]);
      const status = async () => {
        const text = await runCli(['status'], { env: { DATABASE_URL: target.url, CHAIN_API_URL: '' } });
        const json = await runCli(['status', '--json'], { env: { DATABASE_URL: target.url, CHAIN_API_URL: '' } });
        expect(text.code, text.stderr).toBe(0);
        return { text: text.stdout, lastRun: (JSON.parse(json.stdout) as { contracts: { lastRun: unknown }[] }).contracts[0]!.lastRun };
      };
      // the report's runs table says what status says
      const reportRow = async (run: string) => {
        const dir = mkdtempSync(join(tmpdir(), 'erc20-etl-report-gone-'));
        try {
          const r = await runCli(['report', '--out', join(dir, 'r.html')], { env: { DATABASE_URL: target.url } });
          expect(r.code, r.stderr).toBe(0);
          // the cells after the run's own
          return readFileSync(join(dir, 'r.html'), 'utf8').split(`<td>#${run}</td>`)[1]!.split('</tr>')[0]!;
        } finally {
          rmSync(dir, { recursive: true, force: true });
        }
      };
      const gone = await status();
      expect(gone.lastRun).toMatchObject({ id: '3', job: 'gone', status: 'running', abandoned: true });
      expect(gone.text).toMatch(/last run: +#3 gone ended without finishing \(no process holds its job: it was killed or crashed; the job's next run resumes its work\)/);
      expect(await reportRow('3')).toContain('<td>ended without finishing (killed or crashed)</td>');
      // blocks the gone run left open: the next run resumes them; while a run works, it is reading them
      await target.warehouse.pool.query(`INSERT INTO export_ranges (chain_id, job, contract_address, from_block, to_block, created_by_run) VALUES (1, 'gone', $1, 511, 520, 3)`, [
        a,
      ]);
      expect((await status()).text).toMatch(/in progress: 511–520 \(the next run resumes it\)/);
      // a live `run` holds its job (job-lock.ts)
      const lock = await tryJobLock(target.warehouse, 'gone');
      expect(lock).toBeDefined();
      try {
        const live = await status();
        expect(live.lastRun).toMatchObject({ id: '3', status: 'running', abandoned: false });
        expect(live.text).toMatch(/last run: +#3 gone running, chain 1/);
        expect(await reportRow('3')).toContain('<td>running</td>');
        expect(live.text).toMatch(/in progress: 511–520 \(run #3 is reading it\)/);
      } finally {
        await lock?.release();
      }
      // a queued run is running while its tasks wait, whoever holds its job
      await target.warehouse.pool.query(`DELETE FROM export_ranges WHERE job = 'gone'`);
      await target.warehouse.pool.query(`DELETE FROM export_runs WHERE job = 'gone'`);
      expect((await status()).lastRun).toMatchObject({ id: '2', job: 'queued', status: 'running', abandoned: false });
    } finally {
      await target.drop();
    }
  });

  it('shows per contract the blocks covered, gaps, rows, the last run and the lag', async () => {
    const target = await migratedWarehouse('cli_status');
    try {
      const env = { DATABASE_URL: target.url, CHAIN_API_URL: api() };
      const [a] = contracts();
      for (const [from, to] of [
        ['500', '600'],
        ['700', '799'],
      ]) {
        const r = await runCli(['backfill', '--contract', a!, '--from', from!, '--to', to!], { env });
        expect(r.code, r.stderr).toBe(0);
      }
      const r = await runCli(['status'], { env });
      expect(r.code, r.stderr).toBe(0);
      const rows = dataset.transfers.filter(
        (t) => t.contractAddress === a && ((t.blockNumber >= 500 && t.blockNumber <= 600) || (t.blockNumber >= 700 && t.blockNumber <= 799)),
      ).length;
      expect(r.stdout).toContain(a);
      expect(r.stdout).toMatch(/covered: +500–600, 700–799/);
      expect(r.stdout).toMatch(/gaps: +601–699/);
      expect(r.stdout).toMatch(new RegExp(`rows: +${rows}\\b`));
      expect(r.stdout).toMatch(/last run: +#2 backfill-[0-9a-f]{8} succeeded/);
      expect(r.stdout).toMatch(/lag: +100 blocks behind the head \(899\)/);
      expect(r.stdout).not.toContain(SECRET_PROJECT);
      // a job file that ends the contract at block 799: read to its end, it lags 0, as the lag metric says
      const dir = mkdtempSync(join(tmpdir(), 'erc20-etl-status-'));
      try {
        const file = join(dir, 'bounded.json');
        writeFileSync(file, JSON.stringify({ name: 'bounded', chain: 1, contracts: [{ address: a, fromBlock: 500, toBlock: 799 }] }));
        const bounded = await runCli(['status', file], { env });
        expect(bounded.code, bounded.stderr).toBe(0);
        expect(bounded.stdout).toMatch(/lag: +0 blocks behind its toBlock \(799\) in the job file; the head is 899/);
        expect(bounded.stdout).not.toContain('not read:');
        const boundedJson = JSON.parse((await runCli(['status', file, '--json'], { env })).stdout) as { contracts: { contract: string; lag: number | null }[] };
        expect(boundedJson.contracts).toEqual([expect.objectContaining({ contract: a, lag: 0, notRead: [] })]);
      } finally {
        rmSync(dir, { recursive: true, force: true });
      }
      const withHead = JSON.parse((await runCli(['status', '--json'], { env })).stdout) as { contracts: { contract: string; lag: number | null }[] };
      expect(withHead.contracts).toEqual([expect.objectContaining({ contract: a, lag: 100 })]);
      const json = await runCli(['status', '--json'], { env: { DATABASE_URL: target.url, CHAIN_API_URL: '' } });
      const parsed = JSON.parse(json.stdout) as { head: number | null; contracts: { contract: string; rows: number; lag: number | null }[] };
      expect(parsed.head).toBeNull();
      expect(parsed.contracts).toEqual([expect.objectContaining({ contract: a, rows, lag: null })]);
    } finally {
      await target.drop();
    }
  });

  it("shows, with a job file, the job's blocks before the first its runs covered as not read, up to its toBlock", async () => {
    const target = await migratedWarehouse('cli_status_not_read');
    const dir = mkdtempSync(join(tmpdir(), 'erc20-etl-status-'));
    try {
      const env = { DATABASE_URL: target.url, CHAIN_API_URL: api() };
      const [a] = contracts();
      const file = join(dir, 'moved.json');
      const job = (contract: { fromBlock: number; toBlock?: number }) => writeFileSync(file, JSON.stringify({ name: 'moved', chain: 1, contracts: [{ address: a, ...contract }] }));
      const notRead = async () => {
        const text = await runCli(['status', file], { env });
        expect(text.code, text.stderr).toBe(0);
        const json = JSON.parse((await runCli(['status', file, '--json'], { env })).stdout) as { contracts: { notRead: unknown }[] };
        return { text: text.stdout, json: json.contracts[0]?.notRead };
      };
      job({ fromBlock: 700 });
      // nothing covered by the job yet: its first run reads it all, nothing to say
      expect((await notRead()).json).toEqual([]);
      const run = await runCli(['run', file], { env });
      expect(run.code, run.stderr).toBe(0);
      // blocks another job covered are not the job's own
      const other = await runCli(['backfill', '--contract', a!, '--from', '500', '--to', '599'], { env });
      expect(other.code, other.stderr).toBe(0);
      job({ fromBlock: 450 });
      const moved = await notRead();
      expect(moved.text).toMatch(/not read: +450–699 \(the job file's blocks before the first its runs covered; its next run reads them\)/);
      expect(moved.json).toEqual([{ fromBlock: 450, toBlock: 699 }]);
      job({ fromBlock: 450, toBlock: 650 });
      expect((await notRead()).json).toEqual([{ fromBlock: 450, toBlock: 650 }]);
      job({ fromBlock: 700 });
      const same = await notRead();
      expect(same.json).toEqual([]);
      expect(same.text).not.toContain('not read:');
    } finally {
      rmSync(dir, { recursive: true, force: true });
      await target.drop();
    }
  });
});
