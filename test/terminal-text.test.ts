import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { Dataset } from '../src/dataset/types.ts';
import { generateSyntheticDataset } from '../src/devnet/synthetic.ts';
import { runCli } from './helpers/cli.ts';
import { startDevnet, type RunningDevnet } from './helpers/devnet.ts';
import { migratedWarehouse } from './helpers/exporter.ts';

// Anyone can deploy a token with any symbol: what the tool prints of it must not reach the operator's terminal as
// escape sequences (colours, the window title, the bell).

const SYMBOL = '\u001b[31mRED\u001b[0m\u0007';
let dataset: Dataset;
let devnet: RunningDevnet;
let target: Awaited<ReturnType<typeof migratedWarehouse>>;

beforeAll(async () => {
  dataset = generateSyntheticDataset({ seed: 5, blocks: 100, tokens: 1, transfers: 200, startBlock: 1000 });
  const token = dataset.tokens[0]!;
  token.contractSymbol = SYMBOL;
  delete token.contractSymbols;
  devnet = await startDevnet(dataset);
  target = await migratedWarehouse('terminal_text');
});
afterAll(async () => {
  await devnet?.close();
  await target?.drop();
});

describe('text from the chain on a terminal', () => {
  it('status prints a token symbol with control characters escaped; the table keeps it as it is', async () => {
    const contract = dataset.tokens[0]!.contractAddress;
    const env = { DATABASE_URL: target.url, CHAIN_API_URL: devnet.base };
    const r = await runCli(['backfill', '--chain', '1', '--contract', contract, '--from', '1000', '--to', '1099'], { env });
    expect(r.code, r.stderr).toBe(0);
    const stored = await target.warehouse.pool.query<{ symbol: string }>('SELECT symbol FROM tokens');
    expect(stored.rows).toEqual([{ symbol: SYMBOL }]);
    const status = await runCli(['status'], { env: { DATABASE_URL: target.url } });
    expect(status.code, status.stderr).toBe(0);
    expect(status.stdout).toContain(`${contract} (\\u001b[31mRED\\u001b[0m\\u0007)`);
    // biome-ignore lint/suspicious/noControlCharactersInRegex: control characters are what it looks for
    expect(status.stdout).not.toMatch(/[\u0000-\u0008\u000b-\u001f\u007f-\u009f]/);
  });

  it('a backfill reading 16 chunks at once writes only JSON lines on stderr, no Node warning (under cron)', async () => {
    const contract = dataset.tokens[0]!.contractAddress;
    const r = await runCli(['backfill', '--chain', '1', '--contract', contract, '--from', '1000', '--to', '1099', '--concurrency', '16', '--page-size', '1'], {
      env: { DATABASE_URL: target.url, CHAIN_API_URL: devnet.base, LOG_LEVEL: 'info', LOG_FORMAT: '' },
    });
    expect(r.code, r.stderr).toBe(0);
    expect(r.stderr).not.toMatch(/MaxListenersExceededWarning/);
    const notJson = r.stderr.split('\n').filter((l) => l !== '' && !l.startsWith('{') && !l.startsWith('erc20-etl:') && !l.startsWith('  '));
    expect(notJson).toEqual([]);
  });
});
