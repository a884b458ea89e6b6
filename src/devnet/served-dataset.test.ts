import { mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { ConfigError } from '../common/errors.ts';
import { writeDataset } from '../dataset/write.ts';
import { readServedDataset } from './served-dataset.ts';
import { generateSyntheticDataset, SYNTHETIC_DEFAULTS } from './synthetic.ts';

const tmp = mkdtempSync(join(tmpdir(), 'erc20-etl-served-'));
afterAll(() => rmSync(tmp, { recursive: true, force: true }));

/** A Gnosis block under AuRa as its node answers it: `step` (a JSON number) and `signature`, no mixHash or nonce. */
const auraBlock = {
  author: `0x${'6d'.repeat(20)}`,
  difficulty: '0xfffffffffffffffffffffffffffffffe',
  extraData: '0xde830205058650617269747986312e33322e30826c69',
  gasLimit: '0x989680',
  gasUsed: '0x0',
  hash: `0x${'a1'.repeat(32)}`,
  logsBloom: `0x${'00'.repeat(256)}`,
  miner: `0x${'6d'.repeat(20)}`,
  number: '0x68b3',
  parentHash: `0x${'a0'.repeat(32)}`,
  receiptsRoot: `0x${'56'.repeat(32)}`,
  sha3Uncles: '0x1dcc4de8dec75d7aab85b567b6ccd41ad312451b948a7413f0a142fd40d49347',
  signature: `0x${'5e'.repeat(65)}`,
  size: '0x240',
  stateRoot: `0x${'40'.repeat(32)}`,
  step: 302_342_562,
  timestamp: '0x5a13bd52',
  totalDifficulty: '0x68b2ffffffffffffffffffffffffed8b0ac2',
  transactions: [],
  transactionsRoot: `0x${'56'.repeat(32)}`,
  uncles: [],
};

function folder(name: string, files: Record<string, string>): string {
  const dir = join(tmp, name);
  mkdirSync(dir, { recursive: true });
  for (const [file, text] of Object.entries(files)) writeFileSync(join(dir, file), text);
  return dir;
}

describe('a dataset folder as the reference server serves it', () => {
  it('may hold headers only, of any chain family, each served with every key it has', async () => {
    const dir = folder('aura', { 'headers.jsonl': `${JSON.stringify(auraBlock)}\n` });
    expect(await readServedDataset(dir)).toEqual({ headers: [auraBlock], transfers: [], tokens: [] });
    const withEmptyFiles = folder('aura-empty', { 'headers.jsonl': `${JSON.stringify(auraBlock)}\n`, 'transfers.jsonl': '\n', 'tokens.jsonl': '' });
    expect((await readServedDataset(withEmptyFiles)).headers[0]).toEqual(auraBlock);
  });

  it('reads transfers and tokens with the dataset reader’s checks, and keeps the headers’ extra keys', async () => {
    const dataset = generateSyntheticDataset({ ...SYNTHETIC_DEFAULTS, blocks: 20, transfers: 60, tokens: 3 });
    const dir = join(tmp, 'dumped');
    await writeDataset(dir, dataset);
    const lines = readFileSync(join(dir, 'headers.jsonl'), 'utf8').trim().split('\n');
    writeFileSync(join(dir, 'headers.jsonl'), `${lines.map((l) => JSON.stringify({ ...JSON.parse(l), size: '0x2a0' })).join('\n')}\n`);
    const served = await readServedDataset(dir);
    expect(served.transfers).toEqual(dataset.transfers);
    expect(served.tokens).toEqual(dataset.tokens);
    expect(served.headers).toEqual(dataset.headers.map((h) => ({ ...h, size: '0x2a0' })));
  });

  it('says what is wrong with each header line, and that a folder without headers.jsonl cannot be served', async () => {
    const bad = folder('bad', {
      'headers.jsonl': `${JSON.stringify({ ...auraBlock, number: 26803 })}\n[]\n${JSON.stringify({ ...auraBlock, hash: auraBlock.hash.toUpperCase() })}\n`,
    });
    const err = await readServedDataset(bad).catch((e: unknown) => e);
    expect(err).toBeInstanceOf(ConfigError);
    expect((err as ConfigError).problems).toEqual([
      'headers.jsonl line 1: field number: expected a 0x hex quantity, got 26803',
      'headers.jsonl line 2: expected a JSON object',
      `headers.jsonl line 3: field hash: expected a lower-case 0x hash of 64 hex digits, got "${auraBlock.hash.toUpperCase()}"`,
    ]);
    await expect(readServedDataset(join(tmp, 'nowhere'))).rejects.toThrow(/headers.jsonl: missing/);
  });

  it('refuses a header given twice', async () => {
    const twice = folder('twice', { 'headers.jsonl': `${JSON.stringify(auraBlock)}\n${JSON.stringify(auraBlock)}\n` });
    await expect(readServedDataset(twice)).rejects.toThrow(/line 2: hash 0xa1a1.* is on an earlier line too/);
  });
});
