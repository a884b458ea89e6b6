import { afterAll, afterEach, beforeAll } from 'vitest';
import { pino } from 'pino';
import { readDataset } from '../../src/dataset/read.ts';
import { FIXTURE_DIR } from './fixtures.ts';
import { systemClock, type Clock } from '../../src/common/clock.ts';
import type { Dataset } from '../../src/dataset/types.ts';
import { createChainStore, type ChainStore } from '../../src/devnet/chain-store.ts';
import type { ForeignLog } from '../../src/devnet/foreign-logs.ts';
import { createRng } from '../../src/devnet/rng.ts';
import { createDevnet, type DevnetConfig } from '../../src/devnet/server.ts';
import type { DevnetStats } from '../../src/devnet/stats.ts';

export const PROJECT = 'test-project';

export interface RunningDevnet {
  origin: string;
  /** `{origin}/{project}`: the base URL a client is given. */
  base: string;
  chain: ChainStore;
  stats(): Promise<DevnetStats>;
  close(): Promise<void>;
}

/**
 * Starts the reference server in this process on a free port; tests talk to it over HTTP. `foreignLogs`
 * (logs that are not transfer rows, as the synthetic chain has: `syntheticForeignLogs`) reach eth_getLogs only.
 */
export async function startDevnet(
  dataset: Dataset,
  config: Partial<DevnetConfig> = {},
  clock: Clock = systemClock,
  foreignLogs: readonly ForeignLog[] = [],
): Promise<RunningDevnet> {
  const chain = createChainStore(dataset, foreignLogs);
  const rng = createRng(config.seed ?? 7);
  const devnet = createDevnet({
    config: {
      host: '127.0.0.1',
      port: 0,
      projectIds: [PROJECT],
      chainId: 1,
      faults: {},
      pageKeyTtlSeconds: 86_400,
      seed: 7,
      ...config,
    },
    logger: pino({ level: 'silent' }),
    clock,
    chain,
    random: () => rng.next(),
  });
  const origin = await devnet.listen();
  return {
    origin,
    base: `${origin}/${PROJECT}`,
    chain,
    stats: async () => (await (await fetch(`${origin}/__stats`)).json()) as DevnetStats,
    close: () => devnet.close(),
  };
}

export interface TransfersPage {
  contractAddress: string;
  contractName: string;
  contractSymbol?: string;
  contractSymbols?: string;
  contractDecimals: string;
  count: number;
  nextPageKey?: string;
  tokenTransfers: Record<string, unknown>[];
}

export async function getTransfers(base: string, query: Record<string, string | number>): Promise<{ status: number; body: unknown; headers: Headers }> {
  const params = new URLSearchParams(Object.entries(query).map(([k, v]): [string, string] => [k, String(v)]));
  const res = await fetch(`${base}/builder/getTokenTransfers?${params}`);
  return { status: res.status, body: await res.json(), headers: res.headers };
}

/** Every page of a query, following nextPageKey; fails the test on an error status. */
export async function allTransfers(base: string, query: Record<string, string | number>): Promise<TransfersPage[]> {
  const pages: TransfersPage[] = [];
  let pageKey: string | undefined;
  for (let i = 0; i < 100_000; i++) {
    const { status, body } = await getTransfers(base, pageKey ? { ...query, pageKey } : query);
    if (status !== 200) throw new Error(`HTTP ${status}: ${JSON.stringify(body)}`);
    const page = body as TransfersPage;
    pages.push(page);
    if (!page.nextPageKey) return pages;
    pageKey = page.nextPageKey;
  }
  throw new Error('paging did not end');
}

export async function rpc(base: string, body: unknown): Promise<{ status: number; body: any; headers: Headers }> {
  const res = await fetch(base, {
    method: 'POST',
    headers: { 'content-type': 'application/json' },
    body: typeof body === 'string' ? body : JSON.stringify(body),
  });
  const text = await res.text();
  return { status: res.status, body: text ? JSON.parse(text) : undefined, headers: res.headers };
}

/**
 * For a describe block: the mainnet fixture, served by a reference server started before its tests and
 * stopped after them. Read the fields inside tests (they are set in beforeAll).
 */
export function serveMainnetFixture(config: Partial<DevnetConfig> = {}): { dataset: Dataset; devnet: RunningDevnet } {
  const suite = {} as { dataset: Dataset; devnet: RunningDevnet };
  beforeAll(async () => {
    suite.dataset = await readDataset(FIXTURE_DIR);
    suite.devnet = await startDevnet(suite.dataset, config);
  });
  afterAll(() => suite.devnet.close());
  return suite;
}

/**
 * For a test file whose tests each start their own servers and clients: `later(close)` registers what to
 * close, and everything registered is closed after each test, newest first.
 */
export function closedAfterEach(): (close: () => Promise<void>) => void {
  const cleanups: (() => Promise<void>)[] = [];
  afterEach(async () => {
    for (const cleanup of cleanups.splice(0).reverse()) await cleanup();
  });
  return (close) => void cleanups.push(close);
}
