import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { beforeAll, describe, expect, it } from 'vitest';
import { pino } from 'pino';
import { systemClock } from '../src/common/clock.ts';
import { FatalError } from '../src/common/errors.ts';
import { readDataset } from '../src/dataset/read.ts';
import type { Dataset } from '../src/dataset/types.ts';
import type { DevnetConfig } from '../src/devnet/server.ts';
import { parseApiUrl } from '../src/config/api-url.ts';
import { createSourceCounters } from '../src/common/source-counters.ts';
import { BadResponseError, BatchRefusedError, HttpStatusError } from '../src/source/errors.ts';
import { checkHeader } from '../src/source/header-check.ts';
import { createHttpClient, type HttpClientConfig } from '../src/source/http-client.ts';
import { createRpcClient } from '../src/source/rpc-client.ts';
import { closedAfterEach, startDevnet, type RunningDevnet } from './helpers/devnet.ts';
import { FIXTURE_DIR } from './helpers/fixtures.ts';

const SECRET = 'proj-SECRET-123';
const UNKNOWN = `0x${'ab'.repeat(32)}`;

let dataset: Dataset;
beforeAll(async () => {
  dataset = await readDataset(FIXTURE_DIR);
});

const later = closedAfterEach();

async function serve(config: Partial<DevnetConfig> = {}): Promise<RunningDevnet> {
  const devnet = await startDevnet(dataset, { projectIds: [SECRET], ...config });
  later(() => devnet.close());
  return devnet;
}

function connect(origin: string, options: { batchSize?: number; projectId?: string; config?: Partial<HttpClientConfig> } = {}) {
  const counters = createSourceCounters();
  const http = createHttpClient({
    endpoint: parseApiUrl(`${origin}/${options.projectId ?? SECRET}`),
    config: { timeoutMs: 5000, connections: 4, maxResponseBytes: 8 << 20, retries: 20, retryMinDelayMs: 1, retryMaxDelayMs: 10, ...options.config },
    logger: pino({ level: 'silent' }),
    clock: systemClock,
    counters,
  });
  later(() => http.close());
  return { counters, rpc: createRpcClient({ http, ...(options.batchSize !== undefined && { batchSize: options.batchSize }) }) };
}

const timestampOf = (block: number) =>
  dataset.transfers.find((t) => t.blockNumber === block)?.blockTimestamp ??
  new Date(Number(BigInt(dataset.headers.find((h) => Number(BigInt(h.number!)) === block)!.timestamp!)) * 1000).toISOString();

describe('headersByHash against the reference server', () => {
  it('returns every header of the fixture and null for an unknown hash, in batches of batchSize', async () => {
    const devnet = await serve();
    const { rpc, counters } = connect(devnet.origin, { batchSize: 10 });
    const hashes = [...dataset.headers.map((h) => h.hash), UNKNOWN];
    const headers = await rpc.headersByHash(hashes);
    expect(headers.size).toBe(36);
    for (const h of dataset.headers) expect(headers.get(h.hash)).toEqual(h);
    expect(headers.get(UNKNOWN)).toBeNull();
    const stats = await devnet.stats();
    expect(stats.rpcHttpRequests).toBe(Math.ceil(36 / 10));
    expect(stats.rpcCalls).toEqual({ erigon_getHeaderByHash: 36 });
    expect(counters).toMatchObject({ rpcPosts: 4, headerCalls: 36, retries: 0, transferRequests: 0 });
  });

  it('against a node without erigon_getHeaderByHash, fails at once saying so and naming the node source, not as a malformed answer', async () => {
    const devnet = await serve({ erigon: false });
    const { rpc, counters } = connect(devnet.origin, { batchSize: 10 });
    for (const hashes of [dataset.headers.slice(0, 25).map((h) => h.hash), [dataset.headers[0]!.hash]]) {
      const failure = await rpc.headersByHash(hashes).catch((err: unknown) => err);
      expect(failure).toBeInstanceOf(FatalError);
      expect((failure as Error).message).toMatch(
        /^CHAIN_API_URL does not serve erigon_getHeaderByHash \(JSON-RPC -32601 .*\), which the builder source reads block headers with\. /,
      );
      expect((failure as Error).message).toContain('`--source node`');
      expect((failure as Error).message).not.toMatch(/malformed|report it/);
    }
    // one POST each: no retry, no other batch
    expect(counters.retries).toBe(0);
    expect((await devnet.stats()).rpcHttpRequests).toBe(2);
  });

  it('answers headers that checkHeader verifies against the transfers', async () => {
    const devnet = await serve();
    const { rpc } = connect(devnet.origin);
    const blocks = [...new Map(dataset.transfers.map((t) => [t.blockHash, t.blockNumber])).entries()];
    const headers = await rpc.headersByHash(blocks.map(([hash]) => hash));
    for (const [hash, number] of blocks) {
      expect(checkHeader(1, headers.get(hash), { hash, number, timestamp: timestampOf(number) }).hashVerified).toBe(true);
    }
    expect((await devnet.stats()).rpcHttpRequests).toBe(1);
  });

  it('asks for a hash given twice only once', async () => {
    const devnet = await serve();
    const { rpc, counters } = connect(devnet.origin);
    const h = dataset.headers[3]!.hash;
    const headers = await rpc.headersByHash([h, h]);
    expect([...headers.keys()]).toEqual([h]);
    expect(counters.headerCalls).toBe(1);
  });

  it('sends nothing for no hashes', async () => {
    const devnet = await serve();
    const { rpc, counters } = connect(devnet.origin);
    expect((await rpc.headersByHash([])).size).toBe(0);
    expect(counters.rpcPosts).toBe(0);
  });

  it('with --header-lag-rate 1, the first lookup is null and the next finds the header', async () => {
    const devnet = await serve({ faults: { headerLagRate: 1 } });
    const { rpc } = connect(devnet.origin);
    const h = dataset.headers[20]!;
    expect((await rpc.headersByHash([h.hash])).get(h.hash)).toBeNull();
    expect((await rpc.headersByHash([h.hash])).get(h.hash)).toEqual(h);
  });

  it('retries failed, reset and cut batches and still gets every header', async () => {
    const devnet = await serve({ faults: { failRate: 0.3, resetRate: 0.15, truncateRate: 0.15 }, seed: 4 });
    const { rpc, counters } = connect(devnet.origin, { batchSize: 5 });
    const headers = await rpc.headersByHash(dataset.headers.map((h) => h.hash));
    for (const h of dataset.headers) expect(headers.get(h.hash)).toEqual(h);
    expect(counters.retries).toBeGreaterThan(0);
    expect(counters.rpcPosts).toBe((await devnet.stats()).rpcHttpRequests);
    expect(counters.headerCalls).toBe(35);
  });

  it('a JSON-RPC 429 is retried after its Retry-After', async () => {
    const devnet = await serve({ rateLimit: 1 });
    const { rpc, counters } = connect(devnet.origin, { batchSize: 5 });
    const headers = await rpc.headersByHash(dataset.headers.slice(0, 10).map((h) => h.hash));
    expect(headers.size).toBe(10);
    expect(counters.rateLimited).toBeGreaterThan(0);
    expect((await devnet.stats()).errors['-32097']).toBe(counters.rateLimited);
  });

  it('a JSON-RPC 401 stops at once and tells to check the project id, without showing it', async () => {
    const devnet = await serve();
    const { rpc, counters } = connect(devnet.origin, { projectId: 'proj-SECRET-999' });
    const err = await rpc.headersByHash([dataset.headers[0]!.hash]).then(
      () => undefined,
      (e: unknown) => e as Error,
    );
    expect(err).toBeInstanceOf(HttpStatusError);
    expect(err?.message).toContain('HTTP 401 -32099 "authentication failed"');
    expect(err?.message).toContain('does not accept the project id (or key): check it in CHAIN_API_URL');
    expect(err?.message).toContain('POST http://127.0.0.1:');
    expect(err?.message).not.toContain('SECRET');
    expect(counters.rpcPosts).toBe(1);
  });
});

describe('a batch larger than the endpoint takes', () => {
  it('stops at once, sent once, and says to lower headerBatchSize; batches within the limit pass', async () => {
    const devnet = await serve({ rpcBatchLimit: 5 });
    const hashes = dataset.headers.slice(0, 12).map((h) => h.hash);
    const big = connect(devnet.origin, { batchSize: 6 });
    const err = await big.rpc.headersByHash(hashes).then(
      () => undefined,
      (e: unknown) => e as Error,
    );
    expect(err).toBeInstanceOf(BatchRefusedError);
    expect(err?.message).toContain('refused a batch of 6 erigon_getHeaderByHash calls (HTTP 400, -32600 "batch too large (at most 5)")');
    expect(err?.message).toContain('set headerBatchSize in the job file (--header-batch-size for backfill)');
    expect(big.counters).toMatchObject({ rpcPosts: 1, retries: 0 });

    const fits = connect(devnet.origin, { batchSize: 5 });
    expect((await fits.rpc.headersByHash(hashes)).size).toBe(12);
    expect(fits.counters.rpcPosts).toBe(3);
  });

  it("reads Erigon's and geth's refusals answered with HTTP 200: -32000 'batch limit' alone, or -32600 as a batch of one", async () => {
    const [a, b] = dataset.headers;
    for (const refusal of [
      { jsonrpc: '2.0', id: null, error: { code: -32000, message: 'batch limit 1 exceeded (can increase by --rpc.batch.limit). Requested batch of size: 2' } },
      [{ jsonrpc: '2.0', id: 1, error: { code: -32600, message: 'batch too large' } }],
    ]) {
      const server: Server = createServer((req, res) => {
        req.resume().on('end', () => res.writeHead(200, { 'content-type': 'application/json' }).end(JSON.stringify(refusal)));
      });
      await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
      later(() => new Promise((resolve) => server.close(() => resolve())));
      const { rpc, counters } = connect(`http://127.0.0.1:${(server.address() as AddressInfo).port}`);
      const err = await rpc.headersByHash([a!.hash, b!.hash]).then(
        () => undefined,
        (e: unknown) => e as Error,
      );
      expect(err).toBeInstanceOf(BatchRefusedError);
      expect(err?.message).toContain(
        `refused a batch of 2 erigon_getHeaderByHash calls (${Array.isArray(refusal) ? '-32600 "batch too large")' : '-32000 "batch limit 1 exceeded'}`,
      );
      expect(counters.rpcPosts).toBe(1);
    }
  });
});

describe('blockNumber', () => {
  it('answers the head of the chain', async () => {
    const devnet = await serve();
    const { rpc } = connect(devnet.origin);
    expect(await rpc.blockNumber()).toBe(devnet.chain.head());
    expect(devnet.chain.head()).toBeGreaterThan(19_000_000);
  });
});

/**
 * What the reference server never does but other nodes do: answers out of order, `result: null` for an
 * unknown hash, no `eth_blockNumber`. A small real HTTP server that answers each call as `answer` says.
 */
async function serveRpc(answer: (call: { id: number; method: string; params: unknown[] }) => unknown, order: 'reverse' | 'same' = 'same') {
  const server: Server = createServer((req, res) => {
    let text = '';
    req.on('data', (c: Buffer) => (text += c.toString('utf8')));
    req.on('end', () => {
      const body = JSON.parse(text) as unknown;
      const calls = (Array.isArray(body) ? body : [body]) as { id: number; method: string; params: unknown[] }[];
      const answers = calls.map((call) => ({ jsonrpc: '2.0', id: call.id, ...(answer(call) as object) }));
      if (order === 'reverse') answers.reverse();
      const single = !Array.isArray(body) ? answers[0] : undefined;
      const status = single && 'error' in single && (single.error as { code: number }).code === -32601 ? 400 : 200;
      res.writeHead(status, { 'content-type': 'application/json' }).end(JSON.stringify(single ?? answers));
    });
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  later(() => new Promise((resolve) => server.close(() => resolve())));
  return `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
}

describe('JSON-RPC variants of other nodes', () => {
  it('matches answers by id in any order, and reads result: null as not found', async () => {
    const [a, b, c] = dataset.headers;
    const known = new Map([a!, b!, c!].map((h) => [h.hash, h]));
    const origin = await serveRpc((call) => ({ result: known.get(call.params[0] as string) ?? null }), 'reverse');
    const { rpc } = connect(origin);
    const headers = await rpc.headersByHash([a!.hash, UNKNOWN, b!.hash, c!.hash]);
    expect([...headers.entries()]).toEqual([
      [a!.hash, a],
      [UNKNOWN, null],
      [b!.hash, b],
      [c!.hash, c],
    ]);
  });

  it('throws BadResponseError naming the block for another JSON-RPC error or a missing answer', async () => {
    const [a, b] = dataset.headers;
    const origin = await serveRpc((call) =>
      call.params[0] === a!.hash ? { error: { code: -32602, message: 'invalid argument 0' } } : call.id === 2 ? { id: 99, result: null } : { result: null },
    );
    const { rpc } = connect(origin);
    const err = await rpc.headersByHash([a!.hash, b!.hash]).then(
      () => undefined,
      (e: unknown) => e as BadResponseError,
    );
    expect(err).toBeInstanceOf(BadResponseError);
    expect(err?.problems).toEqual([`block ${a!.hash}: JSON-RPC error -32602 "invalid argument 0"`, `block ${b!.hash}: no answer with id 2`]);
  });

  it('blockNumber answers undefined when the endpoint has no eth_blockNumber (-32601)', async () => {
    const origin = await serveRpc((call) => ({ error: { code: -32601, message: `the method ${call.method} does not exist/is not available` } }));
    const { rpc, counters } = connect(origin);
    expect(await rpc.blockNumber()).toBeUndefined();
    expect(counters.retries).toBe(0);
  });
});
