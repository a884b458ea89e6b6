import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { sql } from 'kysely';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { TransferRecord } from '../src/dataset/types.ts';
import { generateSyntheticDataset } from '../src/devnet/synthetic.ts';
import { contractsOf, diffTransfers, EXACT, triggerReorg, truthTransfers } from './helpers/chaos.ts';
import { runCli } from './helpers/cli.ts';
import { startDevnet, type RunningDevnet } from './helpers/devnet.ts';
import { createRange, decideFresh } from '../src/warehouse/ranges.ts';
import { job, migratedWarehouse, rowToTransfer, runExport } from './helpers/exporter.ts';

/**
 * Issue 17: one warehouse, three chains. Chain 1 has a chain of its own; chains 10 and 8453 are served by two
 * reference servers of the same seed, so they hold the same blocks, hashes and transfers: every key of one is a key
 * of the other, and only the chain tells them apart.
 */

const MAINNET = { seed: 171, blocks: 300, tokens: 2, transfers: 1_200, startBlock: 5_000 };
const SAME_SEED = { seed: 172, blocks: 300, tokens: 2, transfers: 1_200, startBlock: 9_000 };
const FINALITY = 20;
const CHAINS = [1, 10, 8453] as const;
type Chain = (typeof CHAINS)[number];

const servers = {} as Record<Chain, RunningDevnet>;
let target: Awaited<ReturnType<typeof migratedWarehouse>>;

beforeAll(async () => {
  // each server its own dataset object: a reorg on one must not reach the other through shared memory
  servers[1] = await startDevnet(generateSyntheticDataset(MAINNET), { chainId: 1 });
  servers[10] = await startDevnet(generateSyntheticDataset(SAME_SEED), { chainId: 10 });
  servers[8453] = await startDevnet(generateSyntheticDataset(SAME_SEED), { chainId: 8453 });
  target = await migratedWarehouse('three_chains');
});
afterAll(async () => {
  await target?.drop();
  for (const s of Object.values(servers)) await s.close();
});

/** A follow-the-head job of a chain: chain 1 read from the builder API, the others from eth_getLogs. */
function chainJob(chain: Chain) {
  const options = chain === 1 ? MAINNET : SAME_SEED;
  const contracts = contractsOf(generateSyntheticDataset(options)).map((address) => ({ address, fromBlock: options.startBlock }));
  return job(`tokens-${chain}`, contracts, { chain, finality: FINALITY, pageSize: 200, ...(chain !== 1 && { source: 'node' as const, logsRange: 40 }) });
}

async function rowsOf(chain: Chain, table: 'token_transfers' | 'token_transfers_removed' = 'token_transfers'): Promise<TransferRecord[]> {
  const rows = await target.warehouse.db.selectFrom(table).selectAll().where('chain_id', '=', String(chain)).orderBy('block_number').orderBy('log_index').execute();
  return rows.map(rowToTransfer);
}

describe('three chains in one warehouse', () => {
  it("holds each chain's rows equal to its server's truth; the two chains of one seed hold both copies, apart", async () => {
    for (const chain of CHAINS) await runExport(target.url, servers[chain].base, chainJob(chain));
    for (const chain of CHAINS) {
      const truth = await truthTransfers(servers[chain].origin);
      expect(truth.length).toBeGreaterThan(500);
      expect(diffTransfers(await rowsOf(chain), truth), `chain ${chain}`).toMatchObject(EXACT);
    }
    // the same seed: identical transfers and blocks, stored twice under their chains
    expect(await rowsOf(10)).toEqual(await rowsOf(8453));
    const headers = await sql<{ chain_id: string; n: string; hashes: string }>`
      SELECT chain_id::text, count(*)::text AS n, md5(string_agg(hash, ',' ORDER BY hash)) AS hashes FROM block_headers GROUP BY chain_id ORDER BY chain_id`.execute(
      target.warehouse.db,
    );
    expect(headers.rows.map((r) => r.chain_id)).toEqual(['1', '10', '8453']);
    expect(headers.rows[1]!.hashes).toBe(headers.rows[2]!.hashes);
    expect(headers.rows[0]!.hashes).not.toBe(headers.rows[1]!.hashes);
    // the enriched view joins each transfer to its own chain's header and token: no row is doubled
    const enriched = await sql<{ chain_id: string; n: string; with_header: string; with_token: string }>`
      SELECT chain_id::text, count(*)::text AS n, count(hash_verified)::text AS with_header, count(token_symbol)::text AS with_token
      FROM token_transfers_enriched GROUP BY chain_id ORDER BY chain_id`.execute(target.warehouse.db);
    for (const [i, chain] of CHAINS.entries()) {
      const n = String((await rowsOf(chain)).length);
      expect(enriched.rows[i]).toEqual({ chain_id: String(chain), n, with_header: n, with_token: n });
    }
    const runs = await target.warehouse.db.selectFrom('export_runs').select(['chain_id', 'status']).orderBy('id').execute();
    expect(runs.map((r) => [String(r.chain_id), r.status])).toEqual(CHAINS.map((c) => [String(c), 'succeeded']));
  }, 120_000);

  it("a reorg on 8453 archives only 8453's rows and marks only 8453's headers orphaned", async () => {
    const before10 = await rowsOf(10);
    const before1 = await rowsOf(1);
    const reorg = await triggerReorg(servers[8453].origin, 5);
    await runExport(target.url, servers[8453].base, chainJob(8453));
    const truth = await truthTransfers(servers[8453].origin);
    expect(diffTransfers(await rowsOf(8453), truth)).toMatchObject(EXACT);
    // rows of the replaced blocks moved out, all of them 8453's; the same keys on chain 10 stayed
    const removed = await target.warehouse.db.selectFrom('token_transfers_removed').select(['chain_id']).execute();
    expect(removed.length).toBeGreaterThan(0);
    expect(new Set(removed.map((r) => String(r.chain_id)))).toEqual(new Set(['8453']));
    expect(await rowsOf(10)).toEqual(before10);
    expect(await rowsOf(1)).toEqual(before1);
    // the orphaned blocks' hashes are chain 10's canonical blocks too: only 8453's copies are marked
    const orphaned = await target.warehouse.db.selectFrom('block_headers').select(['chain_id', 'hash', 'canonical']).where('hash', 'in', reorg.orphanedHeaders).execute();
    expect(orphaned.filter((h) => String(h.chain_id) === '8453' && !h.canonical).length).toBeGreaterThan(0);
    expect(orphaned.filter((h) => String(h.chain_id) === '10').every((h) => h.canonical)).toBe(true);
    expect(orphaned.filter((h) => String(h.chain_id) === '10').length).toBeGreaterThan(0);
    // chain 10 re-read now finds nothing changed
    const again = await runExport(target.url, servers[10].base, chainJob(10));
    expect(again.totals).toMatchObject({ rowsInserted: 0, rowsUpdated: 0, rowsRemoved: 0 });
  }, 120_000);

  it('status shows three chains, each contract under its chain, and the lag only for the chain CHAIN_API_URL serves', async () => {
    const r = await runCli(['status'], { env: { DATABASE_URL: target.url, CHAIN_API_URL: servers[8453].base } });
    expect(r.code, r.stderr).toBe(0);
    expect(r.stdout).toMatch(/^3 chain\(s\): 1, 10, 8453\n/);
    const sections = r.stdout.split(/^chain /m).slice(1);
    expect(sections.map((s) => s.split('\n')[0])).toEqual(['1', '10', '8453']);
    expect(sections[0]).toMatch(/lag: +unknown \(CHAIN_API_URL serves chain 8453: point it at a chain 1 endpoint\)/);
    expect(sections[2]).toMatch(/lag: +0 blocks behind the head/);
    expect(sections[1]).toMatch(/lag: +unknown \(CHAIN_API_URL serves chain 8453: point it at a chain 10 endpoint\)/);
    const json = JSON.parse((await runCli(['status', '--json'], { env: { DATABASE_URL: target.url, CHAIN_API_URL: '' } })).stdout) as {
      chains: string[];
      contracts: { chainId: string; contract: string; lastRun: { chainId: string } }[];
    };
    expect(json.chains).toEqual(['1', '10', '8453']);
    expect(json.contracts.map((c) => c.chainId)).toEqual(['1', '1', '10', '10', '8453', '8453']);
    for (const c of json.contracts) expect(c.lastRun.chainId).toBe(c.chainId);
    // one address on two chains: two entries, each with its own chain's rows
    expect(json.contracts.filter((c) => c.chainId === '10').map((c) => c.contract)).toEqual(json.contracts.filter((c) => c.chainId === '8453').map((c) => c.contract));
  }, 60_000);

  it("the report names each token's chain, and each run's", async () => {
    const dir = mkdtempSync(join(tmpdir(), 'erc20-etl-chains-report-'));
    try {
      const out = join(dir, 'report.html');
      const r = await runCli(['report', '--out', out], { env: { DATABASE_URL: target.url } });
      expect(r.code, r.stderr).toBe(0);
      const html = readFileSync(out, 'utf8');
      for (const chain of CHAINS) expect(html).toContain(`(chain ${chain})`);
      // block numbers of different chains do not share an axis: a coverage chart per chain
      for (const chain of CHAINS) expect(html).toContain(`Blocks covered on chain ${chain} (completed ranges)`);
      expect(html).toContain('<th>run</th><th>chain</th><th>job</th>');
      expect(html).toMatch(/<td>#\d+<\/td><td>8453<\/td><td>tokens-8453<\/td>/);
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  }, 60_000);

  // last: it leaves open ranges behind
  it("decides a chunk fresh (COPY straight in) by its own chain's rows: another chain's same blocks do not count", async () => {
    const contract = contractsOf(generateSyntheticDataset(SAME_SEED))[0]!;
    const span = { fromBlock: SAME_SEED.startBlock, toBlock: SAME_SEED.startBlock + SAME_SEED.blocks - 1 };
    for (const [chainId, fresh] of [
      [10, false],
      [137, true],
    ] as const) {
      const range = await createRange(target.warehouse.db, { chainId, job: `fresh-${chainId}`, contract, ...span, runId: '1', chunks: [span] });
      expect(await decideFresh(target.warehouse.db, range.chunks[0]!, contract), `chain ${chainId}`).toBe(fresh);
    }
  });
});
