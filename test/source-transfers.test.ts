import { Writable } from 'node:stream';
import { beforeAll, describe, expect, it } from 'vitest';
import { pino } from 'pino';
import { systemClock } from '../src/common/clock.ts';
import { readDataset } from '../src/dataset/read.ts';
import type { Dataset, TransferRecord } from '../src/dataset/types.ts';
import type { DevnetConfig } from '../src/devnet/server.ts';
import { parseApiUrl } from '../src/config/api-url.ts';
import { createSourceCounters } from '../src/common/source-counters.ts';
import { HttpStatusError, PageKeyRejectedError, ResponseTooLargeError, TransportError } from '../src/source/errors.ts';
import { createHttpClient, type HttpClientConfig } from '../src/source/http-client.ts';
import { RetriesExhaustedError } from '../src/common/retry.ts';
import { createTransfersClient, type TransfersClient } from '../src/source/transfers-client.ts';
import { closedAfterEach, startDevnet, type RunningDevnet } from './helpers/devnet.ts';
import { FIXTURE_DIR } from './helpers/fixtures.ts';

const SECRET = 'proj-SECRET-123';
const WETH = '0xc02aaa39b223fe8d0a0e5c4f27ead9083c756cc2';
const TOP = 20_000_000;

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

/** A transfers client on the devnet, with its counters and everything it logged. */
function connect(devnet: RunningDevnet, config: Partial<HttpClientConfig> = {}, projectId = SECRET) {
  const lines: string[] = [];
  const sink = new Writable({
    write(chunk: Buffer, _encoding, done) {
      lines.push(chunk.toString('utf8'));
      done();
    },
  });
  const counters = createSourceCounters();
  const http = createHttpClient({
    endpoint: parseApiUrl(`${devnet.origin}/${projectId}`),
    config: { timeoutMs: 5000, connections: 4, maxResponseBytes: 8 << 20, retries: 8, retryMinDelayMs: 1, retryMaxDelayMs: 20, ...config },
    logger: pino({ level: 'debug' }, sink),
    clock: systemClock,
    counters,
  });
  later(() => http.close());
  return { http, counters, transfers: createTransfersClient({ http }), logs: () => lines.join('') };
}

async function readAll(transfers: TransfersClient, contract: string, pageSize: number, fromBlock = 0, toBlock = TOP) {
  const rows: TransferRecord[] = [];
  let pageKey: string | undefined;
  let pages = 0;
  do {
    const page = await transfers.fetchPage({ contract, fromBlock, toBlock, pageSize, pageKey });
    rows.push(...page.transfers);
    pageKey = page.nextPageKey;
    pages++;
  } while (pageKey !== undefined);
  return { rows, pages };
}

function fixtureRows(contract: string, fromBlock = 0, toBlock = TOP): TransferRecord[] {
  return dataset.transfers
    .filter((t) => t.contractAddress === contract && t.blockNumber >= fromBlock && t.blockNumber <= toBlock)
    .sort((a, b) => b.blockNumber - a.blockNumber || b.logIndex - a.logIndex);
}

async function failure(promise: Promise<unknown>): Promise<Error> {
  return promise.then(
    () => {
      throw new Error('expected the call to fail');
    },
    (err: unknown) => err as Error,
  );
}

describe('fetchPage against the reference server', () => {
  it('pages the whole mainnet fixture, every contract, to exactly its rows', async () => {
    const devnet = await serve();
    const { transfers, counters } = connect(devnet);
    const contracts = [...new Set(dataset.transfers.map((t) => t.contractAddress))];
    let pages = 0;
    for (const contract of contracts) {
      const got = await readAll(transfers, contract, 7);
      expect(got.rows, contract).toEqual(fixtureRows(contract));
      pages += got.pages;
    }
    expect(counters.transferRequests).toBe(pages);
    expect(counters.retries).toBe(0);
    expect((await devnet.stats()).getTokenTransfers).toBe(pages);
  });

  it('pages a block range, bounds inclusive', async () => {
    const { transfers } = connect(await serve());
    const got = await readAll(transfers, WETH, 10, 16_000_000, 17_000_000);
    expect(got.rows).toEqual(fixtureRows(WETH, 16_000_000, 17_000_000));
    expect(got.rows.length).toBeGreaterThan(10);
  });

  it('reads the token metadata, and null for a token the server does not know', async () => {
    const { transfers } = connect(await serve());
    const usdt = await transfers.fetchPage({ contract: '0xdac17f958d2ee523a2206206994597c13d831ec7', fromBlock: 0, toBlock: TOP, pageSize: 1 });
    expect(usdt.token).toEqual({ contractAddress: '0xdac17f958d2ee523a2206206994597c13d831ec7', name: 'Tether USD', symbol: 'USDT', decimals: 6 });
    expect(usdt.nextPageKey).toEqual(expect.any(String));
    const unknown = '0xf4eced2f682ce333f96f2d8966c613ded8fc95dd';
    const page = await transfers.fetchPage({ contract: unknown, fromBlock: 0, toBlock: TOP, pageSize: 100 });
    expect(page.token).toEqual({ contractAddress: unknown, name: null, symbol: null, decimals: null });
    expect(page.count).toBe(2);
    expect(page.nextPageKey).toBeUndefined();
  });

  it('answers an empty last page for a contract without transfers', async () => {
    const { transfers } = connect(await serve());
    const page = await transfers.fetchPage({ contract: `0x${'12'.repeat(20)}`, fromBlock: 0, toBlock: TOP, pageSize: 100 });
    expect(page).toMatchObject({ count: 0, transfers: [], nextPageKey: undefined });
  });
});

describe('fetchPage errors that no retry can help', () => {
  it('400: stops at once with the API message', async () => {
    const { transfers, counters, logs } = connect(await serve());
    const err = await failure(transfers.fetchPage({ contract: WETH, fromBlock: 0, toBlock: TOP, pageSize: 5000 }));
    expect(err).toBeInstanceOf(HttpStatusError);
    expect((err as HttpStatusError).status).toBe(400);
    expect(err.message).toContain('HTTP 400 invalid_params "pageSize must be an integer from 1 to 1000, got \\"5000\\""');
    expect(err.message).toContain(`(contract ${WETH}, blocks 0–${TOP})`);
    expect(counters).toMatchObject({ transferRequests: 1, retries: 0, errors: { 400: 1 } });
    expect(logs()).toBe('');
  });

  it('401: stops at once, tells to check the project id, and never shows it', async () => {
    const { transfers, counters } = connect(await serve(), {}, 'proj-SECRET-999');
    const err = await failure(transfers.fetchPage({ contract: WETH, fromBlock: 0, toBlock: TOP, pageSize: 10 }));
    expect(err).toBeInstanceOf(HttpStatusError);
    expect(err.message).toContain('HTTP 401 unauthorized "unknown project id: check the base URL"');
    expect(err.message).toContain('does not accept the project id (or key): check it in CHAIN_API_URL');
    expect(err.message).toContain('/<redacted>/builder/getTokenTransfers');
    expect(err.message).not.toContain('SECRET');
    expect(counters).toMatchObject({ transferRequests: 1, retries: 0 });
  });

  it('403: stops at once when the plan capacity is exceeded', async () => {
    const { transfers, counters } = connect(await serve({ quota: 1 }));
    await transfers.fetchPage({ contract: WETH, fromBlock: 0, toBlock: TOP, pageSize: 10 });
    const err = await failure(transfers.fetchPage({ contract: WETH, fromBlock: 0, toBlock: TOP, pageSize: 10 }));
    expect(err).toBeInstanceOf(HttpStatusError);
    expect(err.message).toContain('HTTP 403 forbidden "plan capacity exceeded: 1 requests"');
    expect(err.message).toContain('the plan capacity is exceeded');
    expect(counters).toMatchObject({ transferRequests: 2, retries: 0, errors: { 403: 1 } });
  });

  it('a refused pageKey is a PageKeyRejectedError', async () => {
    const { transfers, counters } = connect(await serve());
    const err = await failure(transfers.fetchPage({ contract: WETH, fromBlock: 0, toBlock: TOP, pageSize: 10, pageKey: 'not-a-key' }));
    expect(err).toBeInstanceOf(PageKeyRejectedError);
    expect(err.message).toContain('pageKey is unknown');
    expect(err.message).toContain('restart the query without it');
    expect(counters.transferRequests).toBe(1);
  });

  it('a pageKey of another query is refused too', async () => {
    const { transfers } = connect(await serve());
    const first = await transfers.fetchPage({ contract: WETH, fromBlock: 0, toBlock: TOP, pageSize: 10 });
    const err = await failure(transfers.fetchPage({ contract: WETH, fromBlock: 1, toBlock: TOP, pageSize: 10, pageKey: first.nextPageKey }));
    expect(err).toBeInstanceOf(PageKeyRejectedError);
    expect(err.message).toContain('pageKey belongs to another query');
  });

  it('a 400 that is not about the pageKey stays an HttpStatusError', async () => {
    const { transfers } = connect(await serve());
    const err = await failure(transfers.fetchPage({ contract: WETH, fromBlock: 9, toBlock: 1, pageSize: 10 }));
    expect(err).toBeInstanceOf(HttpStatusError);
    expect(err).not.toBeInstanceOf(PageKeyRejectedError);
    expect(err.message).toContain('fromBlock (9) is greater than toBlock (1)');
  });

  it('an answer larger than maxResponseBytes fails with ResponseTooLargeError, not retried', async () => {
    const { transfers, counters } = connect(await serve(), { maxResponseBytes: 4096 });
    const err = await failure(transfers.fetchPage({ contract: WETH, fromBlock: 0, toBlock: TOP, pageSize: 200 }));
    expect(err).toBeInstanceOf(ResponseTooLargeError);
    expect(err.message).toContain('larger than the response size limit of 4096 bytes');
    expect(counters).toMatchObject({ transferRequests: 1, retries: 0, errors: { 'too-large': 1 } });
    // a small page still fits
    expect((await transfers.fetchPage({ contract: WETH, fromBlock: 0, toBlock: TOP, pageSize: 2 })).count).toBe(2);
  });

  it('an answer cut short (chunked, no length) larger than the cap is stopped too', async () => {
    const { transfers } = connect(await serve({ faults: { truncateRate: 1 } }), { maxResponseBytes: 4096, retries: 0 });
    const err = await failure(transfers.fetchPage({ contract: WETH, fromBlock: 0, toBlock: TOP, pageSize: 200 }));
    expect(err).toBeInstanceOf(ResponseTooLargeError);
  });

  it('a timeout shorter than the latency retries, then fails saying so', async () => {
    const { transfers, counters, logs } = connect(await serve({ faults: { latencyMs: [400, 400] } }), { timeoutMs: 100, retries: 2 });
    const err = await failure(transfers.fetchPage({ contract: WETH, fromBlock: 0, toBlock: TOP, pageSize: 10 }));
    expect(err).toBeInstanceOf(RetriesExhaustedError);
    expect((err as RetriesExhaustedError).lastError).toBeInstanceOf(TransportError);
    expect(err.message).toContain('no complete answer within 100 ms');
    expect(err.message).toContain('(gave up after 3 attempts)');
    expect(err.message).toContain(`contract ${WETH}`);
    expect(counters).toMatchObject({ transferRequests: 3, retries: 2, errors: { timeout: 3 } });
    expect(logs().match(/"level":40/g)).toHaveLength(2);
  });

  it('a refused connection is retried, then fails naming the cause', async () => {
    const devnet = await serve();
    const { transfers, counters } = connect(devnet, { retries: 1 });
    await devnet.close();
    const err = await failure(transfers.fetchPage({ contract: WETH, fromBlock: 0, toBlock: TOP, pageSize: 10 }));
    expect(err).toBeInstanceOf(RetriesExhaustedError);
    expect(err.message).toContain('nothing listens at that address');
    expect(counters.errors).toEqual({ refused: 2 });
  });
});

describe('the project id', () => {
  it('appears in no error message and no log line, whatever fails', async () => {
    const devnet = await serve({ faults: { failRate: 0.3, resetRate: 0.1, truncateRate: 0.2 }, seed: 3, quota: 40 });
    const { transfers, logs, counters } = connect(devnet, { retries: 20 });
    const errors: string[] = [];
    for (let i = 0; i < 40 && errors.length === 0; i++) {
      await transfers.fetchPage({ contract: WETH, fromBlock: 0, toBlock: TOP, pageSize: 10 }).catch((err: Error) => errors.push(`${err.message}\n${err.stack}`));
    }
    const bad = connect(devnet, { retries: 0 }, 'proj-SECRET-999');
    await bad.transfers.fetchPage({ contract: WETH, fromBlock: 0, toBlock: TOP, pageSize: 10 }).catch((err: Error) => errors.push(err.message));
    expect(errors.length).toBeGreaterThanOrEqual(2);
    expect(counters.retries).toBeGreaterThan(5);
    const everything = [...errors, logs(), bad.logs()].join('\n');
    expect(everything).toContain('<redacted>');
    expect(everything).not.toContain('SECRET');
  });
});
