import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { Dataset } from '../src/dataset/types.ts';
import { generateSyntheticDataset } from '../src/devnet/synthetic.ts';
import { runCli } from './helpers/cli.ts';
import { startDevnet, type RunningDevnet } from './helpers/devnet.ts';
import { migratedWarehouse } from './helpers/exporter.ts';

/**
 * Issue 17's header verification per chain, through `run`: a chain whose hash rule the exporter does not know
 * (zkSync Era, 324) stores its headers unverified, saying so once per run, unless the job sets
 * `"verifyHeaders": "require"`, which refuses the run before it writes anything.
 */

const PROJECT = 'verify-headers';
const tmp = mkdtempSync(join(tmpdir(), 'erc20-etl-verify-headers-'));
afterAll(() => rmSync(tmp, { recursive: true, force: true }));

let dataset: Dataset;
let zksync: RunningDevnet;
beforeAll(async () => {
  dataset = generateSyntheticDataset({ seed: 23, blocks: 120, tokens: 2, transfers: 400, startBlock: 1000 });
  zksync = await startDevnet(dataset, { projectIds: [PROJECT], chainId: 324 });
});
afterAll(async () => {
  await zksync?.close();
});

const contract = () => dataset.transfers[0]!.contractAddress;
function jobFile(name: string, extra: Record<string, unknown> = {}): string {
  const file = join(tmp, `${name}.json`);
  writeFileSync(file, JSON.stringify({ name, chain: 324, contracts: [{ address: contract(), fromBlock: 1000, toBlock: 1119 }], ...extra }));
  return file;
}

describe('headers of a chain whose hash rule the exporter does not know', () => {
  it('are stored unverified, said once for the run', async () => {
    const w = await migratedWarehouse('verify_headers_allow');
    try {
      const r = await runCli(['run', jobFile('zk')], { env: { DATABASE_URL: w.url, CHAIN_API_URL: `${zksync.origin}/${PROJECT}` } });
      expect(r.code, r.stderr).toBe(0);
      const headers = await w.warehouse.db.selectFrom('block_headers').select(['hash', 'hash_verified', 'unverified_reason']).execute();
      const blocks = new Set(dataset.transfers.filter((t) => t.contractAddress === contract()).map((t) => t.blockHash));
      expect(headers.length).toBe(blocks.size);
      expect(headers.length).toBeGreaterThan(1);
      expect(headers.every((h) => !h.hash_verified)).toBe(true);
      // each says why, in the warehouse
      expect(headers.every((h) => /^zkSync Era block hashes are not keccak256 of an RLP header/.test(h.unverified_reason ?? ''))).toBe(true);
      const said = r.stderr.split('\n').filter((line) => line.includes('"msg":"headers stored unverified"'));
      expect(said).toHaveLength(1);
      expect(said[0]).toMatch(/"job":"zk","chain":324,"reason":"zkSync Era block hashes are not keccak256 of an RLP header/);
    } finally {
      await w.drop();
    }
  });

  it('refuse a run that requires verified headers, exit 2, writing nothing', async () => {
    const w = await migratedWarehouse('verify_headers_require');
    try {
      const r = await runCli(['run', jobFile('zk-strict', { verifyHeaders: 'require' })], { env: { DATABASE_URL: w.url, CHAIN_API_URL: `${zksync.origin}/${PROJECT}` } });
      expect(r.code, r.stderr).toBe(2);
      expect(r.stderr).toMatch(/Job "zk-strict" sets "verifyHeaders": "require", but no header of chain 324 can be verified: zkSync Era .*; nothing was written/);
      expect(r.stderr).toMatch(/Remove "verifyHeaders": "require" from the job file/);
      const runs = await w.warehouse.db.selectFrom('export_runs').select(['id']).execute();
      const transfers = await w.warehouse.db.selectFrom('token_transfers').select(['log_index']).execute();
      expect([runs.length, transfers.length]).toEqual([0, 0]);
    } finally {
      await w.drop();
    }
  });
});
