import { createServer, type Server } from 'node:http';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { systemClock } from '../src/common/clock.ts';
import { createSourceCounters } from '../src/common/source-counters.ts';
import { parseApiUrl } from '../src/config/api-url.ts';
import { readDataset } from '../src/dataset/read.ts';
import { HttpStatusError } from '../src/source/errors.ts';
import { createHttpClient } from '../src/source/http-client.ts';
import { createRpcClient } from '../src/source/rpc-client.ts';
import { runCli } from './helpers/cli.ts';
import { closedAfterEach, startDevnet, type RunningDevnet } from './helpers/devnet.ts';
import { captureLogger, migratedWarehouse } from './helpers/exporter.ts';
import { FIXTURE_DIR } from './helpers/fixtures.ts';

/**
 * A node's key where providers put it besides the path: in the query (`?apikey=KEY`) or in user info
 * (`https://user:KEY@host/`). The reference server takes a project id there too, at `/`, and refuses a request
 * without one: a client that dropped the query or the user info would be refused. Neither key is ever printed,
 * logged or stored; messages name the host.
 */

const SECRET = 'qk3y-SECRET-5d1c';
const WRONG = 'wr0ng-KEY-0a9f';
const USDT = '0xdac17f958d2ee523a2206206994597c13d831ec7';
const leaks = (text: string) => /secret-5d1c|wr0ng-key-0a9f/i.test(text) || text.includes(Buffer.from(`user:${SECRET}`).toString('base64'));

let devnet: RunningDevnet;
beforeAll(async () => {
  devnet = await startDevnet(await readDataset(FIXTURE_DIR), { projectIds: [SECRET], erigon: false });
});
afterAll(() => devnet?.close());

const later = closedAfterEach();

function connect(url: string) {
  const log = captureLogger();
  const http = createHttpClient({
    endpoint: parseApiUrl(url, undefined, 'node'),
    config: { timeoutMs: 5000, connections: 2, maxResponseBytes: 8 << 20, retries: 2, retryMinDelayMs: 1, retryMaxDelayMs: 5 },
    logger: log.logger,
    clock: systemClock,
    counters: createSourceCounters(),
  });
  later(() => http.close());
  return { rpc: createRpcClient({ http }), log };
}

describe('the HTTP client with a node URL holding its key in the query or in user info', () => {
  it('sends the query, and user info as Basic auth: the reference server finds the key there', async () => {
    const head = devnet.chain.head();
    const hostPort = new URL(devnet.origin).host;
    for (const url of [
      `${devnet.origin}/?key=${SECRET}`,
      `${devnet.origin}?apikey=${SECRET}&chain=mainnet`,
      `http://user:${SECRET}@${hostPort}/`,
      `http://:${encodeURIComponent(SECRET)}@${hostPort}`,
    ]) {
      expect(await connect(url).rpc.blockNumber(), url).toBe(head);
    }
    expect((await devnet.stats()).rpcOutcomes['eth_blockNumber']?.answered).toBeGreaterThanOrEqual(4);
  });

  it('is refused without the key, or with a wrong one, and its error names the host alone', async () => {
    for (const url of [`${devnet.origin}/`, `${devnet.origin}/?key=${WRONG}`, `http://user:${WRONG}@${new URL(devnet.origin).host}/`]) {
      const { rpc, log } = connect(url);
      const err = await rpc.blockNumber().then(
        () => undefined,
        (e: unknown) => e,
      );
      expect(err, url).toBeInstanceOf(HttpStatusError);
      expect((err as HttpStatusError).status).toBe(401);
      const message = (err as Error).message;
      expect(message).toMatch(new RegExp(`^POST ${devnet.origin.replaceAll('.', '\\.')}(?:/<redacted>)?: HTTP 401 `));
      expect(leaks(`${message}\n${log.text()}`), message).toBe(false);
    }
  });
});

describe('erc20-etl backfill --source node with the key in the query or in user info', () => {
  let target: Awaited<ReturnType<typeof migratedWarehouse>>;
  let echo: Server;
  let echoOrigin: string;
  beforeAll(async () => {
    target = await migratedWarehouse('node_url_key');
    // a node that repeats in its error what it was asked: the URL with its query, and the Authorization header
    echo = createServer((req, res) => {
      res.writeHead(401, { 'content-type': 'application/json' });
      res.end(JSON.stringify({ jsonrpc: '2.0', id: 1, error: { code: -32099, message: `unknown key in ${req.url} (${req.headers.authorization ?? 'no auth'})` } }));
    });
    await new Promise<void>((r) => echo.listen(0, '127.0.0.1', r));
    echoOrigin = `http://127.0.0.1:${(echo.address() as { port: number }).port}`;
  });
  afterAll(async () => {
    await target?.drop();
    await new Promise((r) => echo?.close(r));
  });

  // chunks longer than the first eth_getLogs range (2,000 blocks), so that a call answers in full and the run learns a range to store
  const backfill = ['backfill', '--source', 'node', '--contract', USDT, '--from', '17980000', '--to', '18000000'];
  const tables = async () =>
    (
      await target.warehouse.pool.query<{ t: string }>(
        `SELECT t::text AS t FROM export_runs t UNION ALL SELECT t::text FROM logs_ranges t UNION ALL SELECT t::text FROM api_rate_limits t`,
      )
    ).rows
      .map((r) => r.t)
      .join('\n');

  it('exports through either URL, and prints, logs and stores neither key', async () => {
    const host = new URL(devnet.origin).host;
    const env = { DATABASE_URL: target.url, LOG_LEVEL: 'debug' };
    const query = await runCli(backfill, { env: { ...env, CHAIN_API_URL: `${devnet.origin}/?apikey=${SECRET}` } });
    expect(query.code, query.stderr).toBe(0);
    const rows = await target.warehouse.pool.query<{ n: string }>('SELECT count(*)::text AS n FROM token_transfers');
    expect(Number(rows.rows[0]!.n)).toBeGreaterThan(0);
    const user = await runCli(backfill, { env: { ...env, CHAIN_API_URL: `http://user:${SECRET}@${host}` } });
    expect(user.code, user.stderr).toBe(0);
    const { rows: ranges } = await target.warehouse.pool.query<{ endpoint_host: string }>('SELECT DISTINCT endpoint_host FROM logs_ranges');
    expect(ranges).toEqual([{ endpoint_host: host }]);
    for (const [what, text] of Object.entries({ query: query.stdout + query.stderr, user: user.stdout + user.stderr, tables: await tables() })) {
      expect(leaks(text), what).toBe(false);
    }
  });

  it('fails on a node that repeats the query and the Authorization header, with both redacted', async () => {
    const host = new URL(echoOrigin).host;
    for (const url of [`${echoOrigin}/?apikey=${SECRET}`, `http://user:${SECRET}@${host}/`]) {
      const r = await runCli(backfill, { env: { DATABASE_URL: target.url, CHAIN_API_URL: url } });
      expect(r.code, url).toBe(1);
      expect(r.stderr).toContain(`POST ${echoOrigin}/<redacted>: HTTP 401 -32099 "unknown key in /`);
      expect(leaks(r.stdout + r.stderr), url).toBe(false);
    }
    expect(leaks(await tables())).toBe(false);
  });
});
