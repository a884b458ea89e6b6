import { Writable } from 'node:stream';
import { beforeAll, describe, expect, it } from 'vitest';
import { pino } from 'pino';
import { systemClock } from '../src/common/clock.ts';
import { readDataset } from '../src/dataset/read.ts';
import type { Dataset, TransferRecord } from '../src/dataset/types.ts';
import type { DevnetConfig } from '../src/devnet/server.ts';
import { parseApiUrl } from '../src/config/api-url.ts';
import { createSourceCounters } from '../src/common/source-counters.ts';
import { createHttpClient, type HttpClientConfig } from '../src/source/http-client.ts';
import { createTransfersClient } from '../src/source/transfers-client.ts';
import { closedAfterEach, startDevnet, type RunningDevnet } from './helpers/devnet.ts';
import { FIXTURE_DIR } from './helpers/fixtures.ts';

const SECRET = 'proj-SECRET-123';
const WETH = '0xc02aaa39b223fe8d0a0e5c4f27ead9083c756cc2';
const TOP = 20_000_000;

let dataset: Dataset;
let wethRows: TransferRecord[];
beforeAll(async () => {
  dataset = await readDataset(FIXTURE_DIR);
  wethRows = dataset.transfers.filter((t) => t.contractAddress === WETH).sort((a, b) => b.blockNumber - a.blockNumber || b.logIndex - a.logIndex);
});

const later = closedAfterEach();

async function serve(config: Partial<DevnetConfig>): Promise<RunningDevnet> {
  const devnet = await startDevnet(dataset, { projectIds: [SECRET], ...config });
  later(() => devnet.close());
  return devnet;
}

function connect(devnet: RunningDevnet, config: Partial<HttpClientConfig> = {}) {
  const logs: Record<string, unknown>[] = [];
  const sink = new Writable({
    write(chunk: Buffer, _encoding, done) {
      for (const line of chunk.toString('utf8').split('\n').filter(Boolean)) logs.push(JSON.parse(line) as Record<string, unknown>);
      done();
    },
  });
  const counters = createSourceCounters();
  const http = createHttpClient({
    endpoint: parseApiUrl(`${devnet.origin}/${SECRET}`),
    config: { timeoutMs: 5000, connections: 4, maxResponseBytes: 8 << 20, retries: 20, retryMinDelayMs: 1, retryMaxDelayMs: 10, ...config },
    logger: pino({ level: 'debug' }, sink),
    clock: systemClock,
    counters,
  });
  later(() => http.close());
  return { counters, transfers: createTransfersClient({ http }), logs };
}

async function readWeth(transfers: ReturnType<typeof createTransfersClient>, pageSize = 20): Promise<TransferRecord[]> {
  const rows: TransferRecord[] = [];
  let pageKey: string | undefined;
  do {
    const page = await transfers.fetchPage({ contract: WETH, fromBlock: 0, toBlock: TOP, pageSize, pageKey });
    rows.push(...page.transfers);
    pageKey = page.nextPageKey;
  } while (pageKey !== undefined);
  return rows;
}

describe('retried faults: the call succeeds with exactly the rows', () => {
  const cases = [
    { name: '500, 502 and 503', faults: { failRate: 0.4 }, serverKeys: ['500', '502', '503'] },
    { name: 'a reset socket', faults: { resetRate: 0.4 }, serverKeys: ['reset'] },
    { name: 'a body cut short', faults: { truncateRate: 0.4 }, serverKeys: ['truncated'] },
  ];
  for (const { name, faults, serverKeys } of cases) {
    it(`retries ${name} and then succeeds`, async () => {
      const devnet = await serve({ faults, seed: 5 });
      const { transfers, counters, logs } = connect(devnet);
      expect(await readWeth(transfers)).toEqual(wethRows);
      const served = (await devnet.stats()).errors;
      const failed = Object.values(served).reduce((a, b) => a + b, 0);
      expect(failed).toBeGreaterThan(0);
      expect(Object.keys(served).every((k) => serverKeys.includes(k))).toBe(true);
      expect(counters.retries).toBe(failed);
      expect(counters.transferRequests).toBe((await devnet.stats()).getTokenTransfers);
      const ours = Object.fromEntries(Object.entries(served).map(([k, v]) => [k === 'truncated' ? 'bad-body' : k, v]));
      expect(counters.errors).toEqual(ours);
      expect(logs.filter((l) => l.level === 40)).toHaveLength(failed);
      expect(logs[0]).toMatchObject({ msg: 'chain API request failed, retrying', attempt: 1, request: expect.stringContaining('/<redacted>/builder/getTokenTransfers') });
    });
  }

  it('retries every fault at once, and latency, and still gets every row', async () => {
    const devnet = await serve({ faults: { failRate: 0.2, resetRate: 0.1, truncateRate: 0.1, latencyMs: [0, 20] }, seed: 9 });
    const { transfers, counters } = connect(devnet, { connections: 2 });
    const pages = await Promise.all([readWeth(transfers, 7), readWeth(transfers, 13), readWeth(transfers, 50)]);
    for (const rows of pages) expect(rows).toEqual(wethRows);
    expect(counters.retries).toBeGreaterThan(0);
  });
});

describe('rate limits', () => {
  it('retries a 429 after its Retry-After and counts it', async () => {
    const devnet = await serve({ rateLimit: 2 });
    const { transfers, counters, logs } = connect(devnet);
    const pages = await Promise.all(Array.from({ length: 6 }, () => transfers.fetchPage({ contract: WETH, fromBlock: 0, toBlock: TOP, pageSize: 5 })));
    for (const page of pages) expect(page.transfers).toEqual(wethRows.slice(0, 5));
    expect(counters.rateLimited).toBeGreaterThanOrEqual(4);
    expect(counters.rateLimited).toBe((await devnet.stats()).errors['429']);
    expect(counters.errors).toEqual({ 429: counters.rateLimited });
    const retries = logs.filter((l) => l.level === 40);
    expect(retries).toHaveLength(counters.rateLimited);
    for (const line of retries) {
      expect(line.delayMs as number).toBeGreaterThanOrEqual(1000);
      expect(line.error).toContain('HTTP 429 rate_limited');
    }
  });

  it('with requestsPerSecond at the server limit, no request is refused', async () => {
    const devnet = await serve({ rateLimit: 10 });
    const { transfers, counters } = connect(devnet, { requestsPerSecond: 10 });
    await Promise.all(Array.from({ length: 25 }, () => transfers.fetchPage({ contract: WETH, fromBlock: 0, toBlock: TOP, pageSize: 1 })));
    expect(counters.transferRequests).toBe(25);
    expect(counters.rateLimited).toBe(0);
    expect((await devnet.stats()).errors).toEqual({});
  });
});
