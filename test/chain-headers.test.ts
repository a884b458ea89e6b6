import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { runCli, spawnDevnet } from './helpers/cli.ts';
import { readChainHeaders } from './helpers/fixtures.ts';

/**
 * Issue 17: the real headers of seven chains, each served by the reference server (`devnet --dataset DIR --chain-id N`,
 * every key as the chain's node answers it), verify by their chain's rule through `probe`; the same header with a
 * field changed fails, naming the block.
 */

const PROJECT = 'chains';
const tmp = mkdtempSync(join(tmpdir(), 'erc20-etl-chain-headers-'));
afterAll(() => rmSync(tmp, { recursive: true, force: true }));

const RULES: Record<string, string> = {
  '10': 'op-stack',
  '8453': 'op-stack',
  '42161': 'arbitrum-nitro',
  '137': 'polygon-bor',
  '56': 'bnb-parlia',
  '100': 'gnosis',
  '43114': 'avalanche-coreth',
};

const headers = readChainHeaders().map(({ chainId, header }) => ({ chain: String(chainId), header }));

/** Serves one header as a dataset folder of its own (its block is the head), and probes it as a node source. */
async function probeServed(chain: string, header: Record<string, unknown>, label: string) {
  const dir = join(tmp, `${chain}-${label}`);
  mkdirSync(dir, { recursive: true });
  writeFileSync(join(dir, 'headers.jsonl'), `${JSON.stringify(header)}\n`);
  const devnet = await spawnDevnet(['--dataset', dir, '--chain-id', chain, '--project-id', PROJECT]);
  try {
    return await runCli(['probe', '--source', 'node', '--json', '--api-url', `${devnet.origin}/${PROJECT}`], { env: { CHAIN_API_URL: '' } });
  } finally {
    const exited = new Promise((resolve) => devnet.child.once('exit', resolve));
    devnet.child.kill('SIGTERM');
    await exited;
  }
}

describe('real headers of seven chains, served by the reference server', () => {
  it('has every family of chains.md', () => {
    expect(new Set(headers.map((h) => h.chain))).toEqual(new Set(Object.keys(RULES)));
  });

  it.each(headers.map((h) => [h.chain, Number.parseInt(String(h.header.number), 16), h] as const))(
    'chain %s block %i verifies by its rule through probe, and fails with a field changed',
    async (chain, block, { header }) => {
      const r = await probeServed(chain, header, `${block}`);
      expect(r.code, r.stderr).toBe(0);
      const found = JSON.parse(r.stdout) as { chainId: number; head: number; headers: unknown };
      expect(found).toMatchObject({ chainId: Number(chain), head: block, headers: { block, rule: RULES[chain], verified: true } });

      const root = String(header.stateRoot);
      const changed = { ...header, stateRoot: `${root.slice(0, -1)}${root.endsWith('0') ? '1' : '0'}` };
      const bad = await probeServed(chain, changed, `${block}-changed`);
      expect(bad.code).toBe(1);
      expect(JSON.parse(bad.stdout)).toMatchObject({ headers: { block, rule: RULES[chain], verified: false } });
      expect(bad.stderr).toMatch(new RegExp(`verified headers: block ${block} does not hash to ${String(header.hash)} by the ${RULES[chain]} rule`));
    },
    60_000,
  );
});
