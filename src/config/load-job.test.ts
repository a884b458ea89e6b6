import { mkdir, mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { ConfigError } from '../common/errors.ts';
import { backfillJob, loadJobFile, parseJobText, rpcTimeoutMs } from './load-job.ts';

const USDC = '0xa0b86991c6218b36c1d19d4a2e9eb0ce3606eb48';
const DAI = '0x6b175474e89094c44da98b954eedeac495271d0f';
const USDT = '0xdac17f958d2ee523a2206206994597c13d831ec7';

let dir: string;
beforeAll(async () => {
  dir = await mkdtemp(join(tmpdir(), 'erc20-etl-jobs-'));
});
afterAll(async () => {
  await rm(dir, { recursive: true, force: true });
});

async function writeJob(name: string, content: unknown): Promise<string> {
  const path = join(dir, name);
  await writeFile(path, typeof content === 'string' ? content : JSON.stringify(content, null, 2));
  return path;
}

async function configErrorOf(promise: Promise<unknown>): Promise<ConfigError> {
  const err = await promise.then(
    () => {
      throw new Error('expected a ConfigError, but the job was accepted');
    },
    (e: unknown) => e,
  );
  expect(err).toBeInstanceOf(ConfigError);
  return err as ConfigError;
}

function configErrorOfSync(fn: () => unknown): ConfigError {
  try {
    fn();
  } catch (e) {
    expect(e).toBeInstanceOf(ConfigError);
    return e as ConfigError;
  }
  throw new Error('expected a ConfigError, but it was accepted');
}

const valid = { name: 'nightly', contracts: [{ address: USDC, fromBlock: 100 }] };

describe('loadJobFile', () => {
  it('reads a valid job, fills in defaults and lower-cases addresses', async () => {
    const path = await writeJob('ok.json', {
      $schema: './job.schema.json',
      name: 'nightly',
      contracts: [
        { address: USDC.toUpperCase().replace('0X', '0x'), fromBlock: 100, toBlock: 200 },
        { address: USDT, fromBlock: 5 },
      ],
    });
    const job = await loadJobFile(path);
    expect(job).toEqual({
      name: 'nightly',
      contracts: [
        { address: USDC, fromBlock: 100, toBlock: 200 },
        { address: USDT, fromBlock: 5 },
      ],
      pageSize: 1000,
      concurrency: 4,
      headerBatchSize: 100,
      commitRows: 10_000,
      keepIndexes: false,
      finality: 64,
      source: 'builder',
      verifyHeaders: 'allow-unverified',
    });
    expect(job).not.toHaveProperty('$schema');
  });

  it('returns a deeply frozen job', async () => {
    const job = await loadJobFile(await writeJob('frozen.json', valid));
    expect(Object.isFrozen(job)).toBe(true);
    expect(Object.isFrozen(job.contracts)).toBe(true);
    expect(Object.isFrozen(job.contracts[0])).toBe(true);
    expect(() => {
      (job.contracts[0] as { fromBlock: number }).fromBlock = 0;
    }).toThrow(TypeError);
  });

  const invalid: { case: string; job: unknown; expected: RegExp }[] = [
    {
      case: 'an unknown key, naming it and the key it probably meant',
      job: { ...valid, contracts: [{ address: USDC, fromBlock: 5, toblock: 9 }] },
      expected: /contracts\[0\]\.toblock: unknown key \(did you mean "toBlock"\?\); expected one of address, fromBlock, toBlock/,
    },
    {
      case: 'an unknown top-level key',
      job: { ...valid, pagesize: 10 },
      expected: /: pagesize: unknown key \(did you mean "pageSize"\?\); expected one of \$schema, name, chain, verifyHeaders, contracts/,
    },
    {
      case: 'a bad address',
      job: { ...valid, contracts: [{ address: '0x1234', fromBlock: 1 }] },
      expected: /contracts\[0\]\.address: expected a contract address: 0x and 40 hex digits, got "0x1234"/,
    },
    {
      case: 'a negative fromBlock',
      job: {
        ...valid,
        contracts: [
          { address: USDC, fromBlock: 0 },
          { address: USDT, fromBlock: -5 },
        ],
      },
      expected: /contracts\[1\]\.fromBlock: expected an integer ≥ 0, got -5/,
    },
    { case: 'a fractional fromBlock', job: { ...valid, contracts: [{ address: USDC, fromBlock: 1.5 }] }, expected: /contracts\[0\]\.fromBlock: expected an integer ≥ 0, got 1\.5/ },
    {
      case: 'toBlock below fromBlock',
      job: { ...valid, contracts: [{ address: USDC, fromBlock: 20, toBlock: 10 }] },
      expected: /contracts\[0\]\.toBlock: fromBlock \(20\) is greater than toBlock \(10\); expected toBlock ≥ fromBlock/,
    },
    { case: 'pageSize 0', job: { ...valid, pageSize: 0 }, expected: /: pageSize: expected an integer from 1 to 1000, got 0/ },
    { case: 'pageSize 1001', job: { ...valid, pageSize: 1001 }, expected: /: pageSize: expected an integer from 1 to 1000, got 1001/ },
    { case: 'concurrency 0', job: { ...valid, concurrency: 0 }, expected: /: concurrency: expected an integer from 1 to 64, got 0/ },
    { case: 'requestsPerSecond 0', job: { ...valid, requestsPerSecond: 0 }, expected: /: requestsPerSecond: expected a number > 0, got 0/ },
    { case: 'finality above 10000', job: { ...valid, finality: 10_001 }, expected: /: finality: expected an integer from 0 to 10000, got 10001/ },
    {
      case: 'a duplicate address in another case',
      job: {
        ...valid,
        contracts: [
          { address: USDC, fromBlock: 1 },
          { address: USDC.toUpperCase().replace('0X', '0x'), fromBlock: 2 },
        ],
      },
      expected: new RegExp(`contracts\\[1\\]\\.address: ${USDC} is listed twice \\(also at contracts\\[0\\]\\); expected each contract once`),
    },
    { case: 'a missing name', job: { contracts: valid.contracts }, expected: /: name: missing, expected a job name/ },
    {
      case: 'a name that starts with a dash',
      job: { ...valid, name: '-x' },
      expected: /: name: expected a job name of 1–100 letters, digits, "\.", "_" or "-", starting with a letter or digit, got "-x"/,
    },
    { case: 'empty contracts', job: { ...valid, contracts: [] }, expected: /: contracts: expected at least one contract, got \[\]/ },
    {
      case: 'a string where a number is wanted, saying numbers are JSON numbers',
      job: { ...valid, contracts: [{ address: USDC, fromBlock: '100' }] },
      expected: /contracts\[0\]\.fromBlock: expected an integer ≥ 0, got "100" \(text: write numbers without quotes\)/,
    },
    { case: 'a top level that is not an object', job: '[1, 2]', expected: /: expected a JSON object like \{"name": "…", "contracts": \[/ },
    {
      case: 'a source that is neither builder nor node',
      job: { ...valid, source: 'erigon' },
      expected: /: source: expected "builder" \(the hosted builder API\) or "node" \(any Ethereum node's JSON-RPC\), got "erigon"/,
    },
    { case: 'a logsRange of 0', job: { ...valid, source: 'node', logsRange: 0 }, expected: /: logsRange: expected an integer from 1 to 100000, got 0/ },
    {
      case: 'a logsRange in quotes',
      job: { ...valid, source: 'node', logsRange: '2000' },
      expected: /: logsRange: expected an integer from 1 to 100000, got "2000" \(text: write numbers without quotes\)/,
    },
    {
      case: 'a logsRange without "source": "node"',
      job: { ...valid, logsRange: 2000 },
      expected: /: logsRange: applies to "source": "node" only \(eth_getLogs ranges\); add "source": "node", or drop it/m,
    },
  ];

  for (const { case: name, job, expected } of invalid) {
    it(`refuses ${name}, naming the file, the field and what was expected`, async () => {
      const path = await writeJob(`bad-${invalid.findIndex((c) => c.case === name)}.json`, job);
      const err = await configErrorOf(loadJobFile(path));
      expect(err.exitCode).toBe(2);
      expect(err.message).toContain(`Invalid job file ${path}`);
      expect(err.problems).toHaveLength(1);
      expect(err.problems[0]!.startsWith(`${path}: `)).toBe(true);
      expect(err.problems[0]).toMatch(expected);
      expect(err.message).toMatch(expected);
    });
  }

  it('lists every problem of a file at once', async () => {
    const path = await writeJob('many.json', {
      name: '',
      contracts: [
        { address: 'USDC', fromBlock: 1 },
        { address: USDT, fromBlock: 20, toBlock: 10, fromblock: 3 },
        { address: USDT, fromBlock: -1 },
      ],
      pageSize: 1001,
      concurrency: '8',
      headerBatchSize: 0,
      colour: 'blue',
    });
    const err = await configErrorOf(loadJobFile(path));
    expect(err.message).toContain(`Invalid job file ${path} (10 problems):`);
    expect(err.problems).toEqual([
      `${path}: name: expected a job name of 1–100 letters, digits, ".", "_" or "-", starting with a letter or digit, got ""`,
      `${path}: contracts[0].address: expected a contract address: 0x and 40 hex digits, got "USDC"`,
      `${path}: contracts[1].fromblock: unknown key (did you mean "fromBlock"?); expected one of address, fromBlock, toBlock`,
      `${path}: contracts[1].toBlock: fromBlock (20) is greater than toBlock (10); expected toBlock ≥ fromBlock`,
      `${path}: contracts[2].fromBlock: expected an integer ≥ 0, got -1`,
      `${path}: contracts[2].address: ${USDT} is listed twice (also at contracts[1]); expected each contract once`,
      `${path}: pageSize: expected an integer from 1 to 1000, got 1001`,
      `${path}: concurrency: expected an integer from 1 to 64, got "8" (text: write numbers without quotes)`,
      `${path}: headerBatchSize: expected an integer from 1 to 1000, got 0`,
      `${path}: colour: unknown key; expected one of $schema, name, chain, verifyHeaders, contracts, pageSize, concurrency, requestsPerSecond, headerBatchSize, commitRows, keepIndexes, finality, source, logsRange, schedule`,
    ]);
  });

  it('reports a fractional number beside the problems zod finds across fields (a logsRange without a node source, toBlock below fromBlock)', async () => {
    const path = await writeJob('fractions.json', {
      ...valid,
      logsRange: 500,
      pageSize: 2.5,
      contracts: [
        { address: USDC, fromBlock: 1.5 },
        { address: USDT, fromBlock: 30, toBlock: 20 },
      ],
    });
    const err = await configErrorOf(loadJobFile(path));
    expect(err.problems).toEqual([
      `${path}: contracts[0].fromBlock: expected an integer ≥ 0, got 1.5`,
      `${path}: contracts[1].toBlock: fromBlock (30) is greater than toBlock (20); expected toBlock ≥ fromBlock`,
      `${path}: pageSize: expected an integer from 1 to 1000, got 2.5`,
      `${path}: logsRange: applies to "source": "node" only (eth_getLogs ranges); add "source": "node", or drop it`,
    ]);
  });

  it('refuses a schedule that is not a cron expression, naming the file, the field and what is wrong', async () => {
    const path = await writeJob('schedule.json', { ...valid, schedule: '0 24 * * *' });
    const err = await configErrorOf(loadJobFile(path));
    expect(err.problems).toEqual([
      `${path}: schedule: expected a cron schedule in UTC: minute hour day-of-month month day-of-week, e.g. "0 2 * * *" (every day at 02:00); hour: 24 is out of range 0–23, got "0 24 * * *"`,
    ]);
    expect((await loadJobFile(await writeJob('nightly.json', { ...valid, schedule: '0 2 * * *' }))).schedule).toBe('0 2 * * *');
  });

  it('loads a schedule with spaces around it trimmed, as the worker’s crontab must be given it', async () => {
    expect((await loadJobFile(await writeJob('padded.json', { ...valid, schedule: ' 0  2 * * * ' }))).schedule).toBe('0  2 * * *');
  });

  it('does not read a misspelt fromBlock as block 0: the typo and the missing field are both reported', async () => {
    const path = await writeJob('typo.json', { ...valid, contracts: [{ address: USDC, fromblock: 5 }] });
    const err = await configErrorOf(loadJobFile(path));
    expect(err.problems).toEqual([
      `${path}: contracts[0].fromBlock: missing, expected an integer ≥ 0`,
      `${path}: contracts[0].fromblock: unknown key (did you mean "fromBlock"?); expected one of address, fromBlock, toBlock`,
    ]);
  });

  it('says where invalid JSON breaks, naming the file', async () => {
    const path = await writeJob('trailing.json', '{\n  "name": "x",\n  "contracts": [],\n}\n');
    const err = await configErrorOf(loadJobFile(path));
    expect(err.exitCode).toBe(2);
    expect(err.message).toContain(`Invalid job file ${path}: it is not valid JSON`);
    expect(err.problems).toEqual([`${path}: line 4, column 1: expected a property name in double quotes, got "}" (JSON allows no trailing comma)`]);
  });

  it('reads a file that starts with a byte order mark', async () => {
    const job = await loadJobFile(await writeJob('bom.json', `\uFEFF${JSON.stringify(valid)}`));
    expect(job.name).toBe('nightly');
  });

  it('names a file that does not exist, and a folder given instead of a file', async () => {
    const missing = join(dir, 'nope.json');
    const err = await configErrorOf(loadJobFile(missing));
    expect(err.exitCode).toBe(2);
    expect(err.problems).toEqual([`${missing}: no such file`]);

    const folder = join(dir, 'folder.json');
    await mkdir(folder);
    const err2 = await configErrorOf(loadJobFile(folder));
    expect(err2.problems[0]).toMatch(new RegExp(`^${folder.replace(/[.\\]/g, '\\$&')}: it is a folder`));
  });
});

describe('parseJobText', () => {
  it('names the file it is given in every problem', () => {
    const err = configErrorOfSync(() => parseJobText('{"name": "x", "contracts": [{"address": "0x1", "fromBlock": 1}]}', 'jobs/nightly.json'));
    expect(err.problems).toEqual(['jobs/nightly.json: contracts[0].address: expected a contract address: 0x and 40 hex digits, got "0x1"']);
  });

  it('refuses a key given twice, which JSON.parse would quietly read as its last value, beside the other problems', () => {
    const text = `{"name": "x", "pageSize": 0,\n "contracts": [{"address": "${USDC}", "fromBlock": 5, "fromBlock": 7}]}`;
    const err = configErrorOfSync(() => parseJobText(text, 'jobs/twice.json'));
    expect(err.problems).toEqual([
      'jobs/twice.json: line 2, column 90: "fromBlock" is given twice in contracts[0] (line 2 too); JSON keeps only the last, so remove one',
      'jobs/twice.json: pageSize: expected an integer from 1 to 1000, got 0',
    ]);
    // the same key in two objects is no repeat
    expect(parseJobText(`{"name": "x", "contracts": [{"address": "${USDC}", "fromBlock": 5}, {"address": "${DAI}", "fromBlock": 5}]}`, 'a.json').contracts).toHaveLength(2);
  });
});

describe('backfillJob', () => {
  it('builds the same shape as a job file, with defaults', () => {
    const job = backfillJob({ contract: [USDC.toUpperCase().replace('0X', '0x'), USDT], from: '100', to: '200', pageSize: '500' });
    expect(job).toEqual({
      name: expect.stringMatching(/^backfill-[0-9a-f]{8}$/),
      contracts: [
        { address: USDC, fromBlock: 100, toBlock: 200 },
        { address: USDT, fromBlock: 100, toBlock: 200 },
      ],
      pageSize: 500,
      concurrency: 4,
      headerBatchSize: 100,
      commitRows: 10_000,
      keepIndexes: false,
      finality: 64,
      source: 'builder',
      verifyHeaders: 'allow-unverified',
    });
    expect(Object.isFrozen(job.contracts[0])).toBe(true);
    expect(backfillJob({ contract: [USDC], from: '100', to: '200', keepIndexes: true }).keepIndexes).toBe(true);
  });

  it('names the job after its contracts and range, whatever their order or case', () => {
    const a = backfillJob({ contract: [USDC, USDT], from: '100', to: '200' });
    expect(backfillJob({ contract: [USDT, USDC.toUpperCase().replace('0X', '0x')], from: '100', to: '200', concurrency: '8' }).name).toBe(a.name);
    expect(backfillJob({ contract: [USDC, USDT], from: '100', to: '201' }).name).not.toBe(a.name);
    expect(backfillJob({ contract: [USDC], from: '100', to: '200' }).name).not.toBe(a.name);
  });

  it('reports every bad flag at once, by flag name', () => {
    const err = configErrorOfSync(() => backfillJob({ contract: ['0xnope'], from: 'abc', to: '-3', pageSize: '0', concurrency: '65', headerBatchSize: '1001' }));
    expect(err.exitCode).toBe(2);
    expect(err.problems).toEqual([
      '--contract: expected a contract address (0x and 40 hex digits); repeat --contract for several, got "0xnope"',
      '--from: expected a block number (integer ≥ 0), got "abc"',
      '--to: expected a block number (integer ≥ 0), got "-3"',
      '--page-size: expected an integer from 1 to 1000, got "0"',
      '--concurrency: expected an integer from 1 to 64, got "65"',
      '--header-batch-size: expected an integer from 1 to 1000, got "1001"',
    ]);
  });

  it('reads --source, and checks --rpc-timeout with the other flags while leaving it out of the job', () => {
    const node = backfillJob({ contract: [USDC], from: '100', to: '200', source: 'node', rpcTimeout: '2.5' });
    expect(node.source).toBe('node');
    expect(node).not.toHaveProperty('rpcTimeout');
    // one range, one name and lock, whichever source reads it
    expect(node.name).toBe(backfillJob({ contract: [USDC], from: '100', to: '200' }).name);
    expect(backfillJob({ contract: [USDC], from: '100', to: '200' }).source).toBe('builder');
    const err = configErrorOfSync(() => backfillJob({ contract: [USDC], from: '1', to: '2', source: 'nodes', rpcTimeout: '0' }));
    expect(err.problems).toEqual([
      '--source: expected "builder" (the hosted builder API) or "node" (any Ethereum node\'s JSON-RPC), got "nodes"',
      '--rpc-timeout: expected seconds from 0.1 to 3600, like 30, got "0"',
    ]);
  });

  it('refuses --page-size with --source node, naming the flag', () => {
    const err = configErrorOfSync(() => backfillJob({ contract: [USDC], from: '100', to: '200', source: 'node', pageSize: '300' }));
    expect(err.exitCode).toBe(2);
    expect(err.problems).toEqual(['--page-size: applies to "source": "builder" only (rows per getTokenTransfers page; an eth_getLogs answer holds what its range holds); drop it']);
    expect(backfillJob({ contract: [USDC], from: '100', to: '200', source: 'builder', pageSize: '300' }).pageSize).toBe(300);
    // one problem a flag: out of range says so alone
    expect(configErrorOfSync(() => backfillJob({ contract: [USDC], from: '100', to: '200', source: 'node', pageSize: '0' })).problems).toEqual([
      '--page-size: expected an integer from 1 to 1000, got "0"',
    ]);
  });

  it('requires --contract, --from and --to', () => {
    const err = configErrorOfSync(() => backfillJob({}));
    expect(err.problems).toEqual([
      '--contract: missing, expected a contract address (0x and 40 hex digits); repeat --contract for several',
      '--from: missing, expected a block number (integer ≥ 0)',
      '--to: missing, expected a block number (integer ≥ 0)',
    ]);
  });

  it('refuses --from after --to and a contract given twice', () => {
    const err = configErrorOfSync(() => backfillJob({ contract: [USDC, USDC.toUpperCase().replace('0X', '0x')], from: '20', to: '10' }));
    expect(err.problems).toEqual([`--contract: ${USDC} is given twice; expected each contract once`, '--to: --from (20) is greater than --to (10); expected --from ≤ --to']);
  });
});

describe('rpcTimeoutMs', () => {
  it('reads --rpc-timeout in seconds, fractions allowed, 30 s when not given', () => {
    expect(rpcTimeoutMs({})).toBe(30_000);
    expect(rpcTimeoutMs({ rpcTimeout: '5' })).toBe(5_000);
    expect(rpcTimeoutMs({ rpcTimeout: '0.25' })).toBe(250);
    expect(rpcTimeoutMs({ rpcTimeout: '3600' })).toBe(3_600_000);
  });

  it('refuses what is not a number of seconds from 0.1 to 3600, naming the flag and the value', () => {
    for (const bad of ['0', '0.05', '3601', '-1', '1e3', '30s', '', ' 5']) {
      const err = configErrorOfSync(() => rpcTimeoutMs({ rpcTimeout: bad }));
      expect(err.exitCode).toBe(2);
      expect(err.message).toBe(`--rpc-timeout: expected seconds from 0.1 to 3600, like 30, got ${JSON.stringify(bad)}.`);
    }
  });
});
