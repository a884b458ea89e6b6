import { readFileSync } from 'node:fs';
import { createServer, type Server } from 'node:http';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { Dataset } from '../src/dataset/types.ts';
import { PROBE_LIMITS } from '../src/cli/probe-endpoint.ts';
import { LOGS_ERROR_STYLES } from '../src/devnet/logs-limit-errors.ts';
import { generateSyntheticDataset } from '../src/devnet/synthetic.ts';
import { runCli, type CliResult } from './helpers/cli.ts';
import { closedAfterEach, startDevnet, type RunningDevnet } from './helpers/devnet.ts';
import { FIXTURE_DIR } from './helpers/fixtures.ts';
import type { DevnetConfig } from '../src/devnet/server.ts';

/**
 * `erc20-etl probe` against the reference server as providers configure it (chain id, no Erigon, eth_getLogs caps in
 * each provider's words, a batch limit), and against a node that lacks eth_getLogs: what it prints, as text and as
 * JSON, its exit code, and never the key in the URL.
 */

const SECRET = 'probe-SECRET-5d1c';
const START = 500;
const BLOCKS = 400;
const HEAD = START + BLOCKS - 1;

let dataset: Dataset;
beforeAll(() => {
  dataset = generateSyntheticDataset({ seed: 16, blocks: BLOCKS, tokens: 3, transfers: 3000, startBlock: START });
});
const later = closedAfterEach();

/** The reference server for one test, its base URL ending in the secret project id. */
async function serve(config: Partial<DevnetConfig>, chain: Dataset = dataset): Promise<RunningDevnet> {
  const devnet = await startDevnet(chain, { projectIds: [SECRET], ...config });
  later(() => devnet.close());
  return { ...devnet, base: `${devnet.origin}/${SECRET}` };
}

function probe(args: string[], env: NodeJS.ProcessEnv = {}): Promise<CliResult> {
  return runCli(['probe', ...args], { env: { CHAIN_API_URL: '', ...env } });
}

function expectNoSecret(r: CliResult): void {
  expect(`${r.stdout}\n${r.stderr}`).not.toMatch(/probe-secret-5d1c/i);
}

describe('erc20-etl probe --source node', () => {
  it('prints the chain id, the head, erigon no, and the caps it found; exits 0', async () => {
    const devnet = await serve({ chainId: 137, erigon: false, logsLimits: { maxRange: 100, style: 'quicknode' }, rpcBatchLimit: 20 });
    const r = await probe(['--source', 'node', '--api-url', devnet.base]);
    expect(r.code, r.stderr).toBe(0);
    expectNoSecret(r);
    expect(r.stdout).toContain(`erc20-etl probe: node source at ${devnet.origin}/<redacted>\n`);
    expect(r.stdout).toContain('  chain id:     137\n');
    expect(r.stdout).toContain(`  head:         ${HEAD}\n`);
    expect(r.stdout).toContain('  erigon_getHeaderByHash: no\n');
    expect(r.stdout).toContain('  eth_getBlockByHash:     yes\n');
    expect(r.stdout).toMatch(new RegExp(`\\n {2}eth_getLogs: {2}largest range accepted 100 blocks \\(${HEAD - 99}–${HEAD}: \\d+ logs\\); largest answer \\d+ logs\\n`));
    expect(r.stdout).toContain('stated by the node: at most 100 blocks per call\n');
    expect(r.stdout).toMatch(/\n {2}batch limit: {2}20 calls per POST \(21 refused: HTTP 400 -32600 "batch too large \(at most 20\)"\)\n/);
    // the reference server's blocks hash by the Ethereum list, which is Polygon's rule too
    expect(r.stdout).toContain(`  headers:      verified by the polygon-bor rule (block ${HEAD})\n`);
    expect(r.stdout).toMatch(/everything a node source needs is there\n$/);
  });

  it('prints one JSON object with --json, reading the URL from CHAIN_API_URL', async () => {
    const devnet = await serve({ logsLimits: { maxResults: 200, style: 'infura' } });
    const r = await probe(['--source', 'node', '--json'], { CHAIN_API_URL: devnet.base });
    expect(r.code, r.stderr).toBe(0);
    expectNoSecret(r);
    const found = JSON.parse(r.stdout) as Record<string, any>;
    expect(found).toMatchObject({
      endpoint: `${devnet.origin}/<redacted>`,
      source: 'node',
      chainId: 1,
      head: HEAD,
      erigonGetHeaderByHash: { supported: 'yes' },
      ethGetBlockByHash: { supported: 'yes' },
      logs: { method: 'yes', statedMaxResults: 200 },
      batch: { largestAccepted: 100 },
      headers: { block: HEAD, rule: 'ethereum', verified: true },
      missing: [],
    });
    expect(found['logs'].accepted.logs).toBeGreaterThan(0);
    expect(found['logs'].accepted.logs).toBeLessThanOrEqual(200);
    expect(found['logs'].largestAnswer).toBeLessThanOrEqual(200);
    // the refusal suggested a range, and the probe took it
    expect(found['logs'].calls[0]).toMatchObject({ outcome: 'refused', toBlock: HEAD });
    expect(found['logs'].calls[1]).toMatchObject({ outcome: 'answered', fromBlock: found['logs'].calls[0].fromBlock });
  });

  it("finds a range each provider's refusals allow, whatever their words", async () => {
    for (const style of LOGS_ERROR_STYLES) {
      const devnet = await serve({ logsLimits: { maxResults: 150, style } });
      const r = await probe(['--source', 'node', '--json', '--api-url', devnet.base]);
      expect(r.code, `${style}: ${r.stderr}`).toBe(0);
      const logs = (JSON.parse(r.stdout) as { logs: { accepted: { blocks: number; logs: number } | null; calls: unknown[] } }).logs;
      expect(logs.accepted, `${style}: ${r.stdout}`).not.toBeNull();
      expect(logs.accepted!.logs, style).toBeLessThanOrEqual(150);
      expect(logs.calls.length, style).toBeLessThanOrEqual(PROBE_LIMITS.logsCalls);
    }
  });

  it('comes down to a block limit of a few hundred the node does not state (Ankr’s words) from 100,000 blocks, and narrows to it', async () => {
    // a head far above the first span's 100,000 blocks: halving alone takes 10 calls to come below 300
    const high = generateSyntheticDataset({ seed: 16, blocks: BLOCKS, tokens: 3, transfers: 3000, startBlock: 1_000_000 });
    const devnet = await serve({ logsLimits: { maxRange: 300, style: 'ankr' } }, high);
    const r = await probe(['--source', 'node', '--json', '--api-url', devnet.base]);
    expect(r.code, r.stderr).toBe(0);
    const logs = (JSON.parse(r.stdout) as { logs: { accepted: { blocks: number } | null; smallestRefused: number; calls: unknown[] } }).logs;
    // within a twentieth or so: the probe stops narrowing when halfway gains no more
    expect(logs.accepted?.blocks, r.stdout).toBeGreaterThanOrEqual(270);
    expect(logs.accepted?.blocks, r.stdout).toBeLessThanOrEqual(300);
    expect(logs.smallestRefused, r.stdout).toBeLessThanOrEqual(330);
    expect(logs.calls.length).toBeLessThanOrEqual(PROBE_LIMITS.logsCalls);
  });
});

describe('erc20-etl probe against a node that hangs', () => {
  it('waits through four unanswered eth_getLogs calls, then asks one block, keeps what it brought, and says it stopped', async () => {
    // every call over more than one block never answers: 100,000, 50,000, 25,000 and 12,500 blocks time out, one block
    // answers, and the probe stops there instead of spending 16 deadlines
    const devnet = await serve({ faults: { logsHangRate: 1 } });
    const r = await probe(['--source', 'node', '--json', '--rpc-timeout', '0.5', '--api-url', devnet.base]);
    expect(r.code, r.stderr).toBe(0);
    const logs = (JSON.parse(r.stdout) as { logs: { accepted: { blocks: number } | null; stoppedAfterTimeouts: number; calls: { outcome: string }[] } }).logs;
    expect(logs.calls.map((c) => c.outcome)).toEqual(['timeout', 'timeout', 'timeout', 'timeout', 'answered']);
    expect(logs.accepted?.blocks).toBe(1);
    expect(logs.stoppedAfterTimeouts).toBe(PROBE_LIMITS.logsTimeouts);
    const text = await probe(['--source', 'node', '--rpc-timeout', '0.5', '--api-url', devnet.base]);
    expect(text.stdout).toContain('stopped after 4 calls unanswered in time: a larger range may answer; the node may only be slow: run probe again with a larger --rpc-timeout');
  });
});

describe('erc20-etl probe (builder, the default)', () => {
  it('prints the head, erigon yes and the page API, and exits 0', async () => {
    const devnet = await serve({});
    const r = await probe(['--api-url', devnet.base]);
    expect(r.code, r.stderr).toBe(0);
    expectNoSecret(r);
    expect(r.stdout).toContain(`erc20-etl probe: builder source at ${devnet.origin}/<redacted>\n`);
    expect(r.stdout).toContain(`  head:         ${HEAD}\n`);
    expect(r.stdout).toContain('  erigon_getHeaderByHash: yes\n');
    expect(r.stdout).toContain('  page API:     reachable (getTokenTransfers answered)\n');
    expect(r.stdout).not.toContain('eth_getLogs');
  });

  it('exits 1 naming erigon_getHeaderByHash where the node has none', async () => {
    const devnet = await serve({ erigon: false });
    const r = await probe(['--api-url', devnet.base]);
    expect(r.code).toBe(1);
    expectNoSecret(r);
    expect(r.stdout).toContain('  erigon_getHeaderByHash: no\n');
    expect(r.stderr).toMatch(/^erc20-etl: probe: the endpoint lacks what a builder source needs: erigon_getHeaderByHash/m);
  });
});

describe('erc20-etl probe against what cannot serve', () => {
  let node: Server;
  let origin: string;
  beforeAll(async () => {
    // a node without eth_getLogs whose errors repeat the URL they were asked at, as some providers' do
    node = createServer((req, res) => {
      let body = '';
      req.on('data', (d: Buffer) => (body += d.toString()));
      req.on('end', () => {
        const call = JSON.parse(body) as { id: number; method: string } | { id: number; method: string }[];
        const answer = (c: { id: number; method: string }) => {
          const results: Record<string, unknown> = {
            eth_chainId: '0x1',
            eth_blockNumber: '0x64',
            // a real mainnet block, so its header verifies and only eth_getLogs is missing
            eth_getBlockByNumber: JSON.parse(readFileSync(join(FIXTURE_DIR, 'headers.jsonl'), 'utf8').split('\n')[0]!),
            eth_getBlockByHash: null,
          };
          return c.method in results
            ? { jsonrpc: '2.0', id: c.id, result: results[c.method] }
            : { jsonrpc: '2.0', id: c.id, error: { code: -32601, message: `the method ${c.method} does not exist at ${req.url}` } };
        };
        res.writeHead(200, { 'content-type': 'application/json' });
        res.end(JSON.stringify(Array.isArray(call) ? call.map(answer) : answer(call)));
      });
    });
    await new Promise<void>((r) => node.listen(0, '127.0.0.1', r));
    origin = `http://127.0.0.1:${(node.address() as { port: number }).port}`;
  });
  afterAll(() => new Promise((r) => node.close(r)));

  it('exits 1 naming eth_getLogs, and redacts the key its errors repeat', async () => {
    const r = await probe(['--source', 'node', '--api-url', `${origin}/v3/${SECRET}`]);
    expect(r.code).toBe(1);
    expectNoSecret(r);
    expect(r.stdout).toContain('  eth_getLogs:  no (-32601 "the method eth_getLogs does not exist at /<redacted>")\n');
    expect(r.stdout).toContain('  erigon_getHeaderByHash: no\n');
    expect(r.stderr).toMatch(/^erc20-etl: probe: the endpoint lacks what a node source needs: eth_getLogs \(-32601 "the method eth_getLogs does not exist at \/<redacted>"\)\.$/m);
  });

  it('exits 1 when nothing answers, and 2 for a bad flag or a missing URL', async () => {
    const closed = createServer();
    await new Promise<void>((r) => closed.listen(0, '127.0.0.1', r));
    const port = (closed.address() as { port: number }).port;
    await new Promise((r) => closed.close(r));
    const down = await probe(['--source', 'node', '--api-url', `http://127.0.0.1:${port}/${SECRET}`]);
    expect(down.code).toBe(1);
    expectNoSecret(down);
    expect(down.stderr).toMatch(/lacks what a node source needs: an answer to eth_blockNumber \(POST http:\/\/127\.0\.0\.1:\d+\/<redacted>: ECONNREFUSED/);

    const bad = await probe(['--source', 'erigon', '--api-url', `${origin}/${SECRET}`]);
    expect(bad.code).toBe(2);
    expect(bad.stderr).toContain('--source: expected "builder" (the hosted builder API) or "node" (any Ethereum node\'s JSON-RPC), got "erigon".');
    const none = await probe(['--source', 'node']);
    expect(none.code).toBe(2);
    expect(none.stderr).toMatch(/no node: set CHAIN_API_URL or pass --api-url/);
  });
});
