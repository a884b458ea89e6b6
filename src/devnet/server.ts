import { createServer, type IncomingMessage, type Server, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import type { Logger } from 'pino';
import type { Clock } from '../common/clock.ts';
import type { ChainStore } from './chain-store.ts';
import { createFaults, type FaultOptions } from './faults.ts';
import type { LogsLimits } from './logs-limit-errors.ts';
import { createSendBuffers, jsonBytes, pageBytes, readBody, sendJson, type Cut } from './http-io.ts';
import { createRateLimiter } from './rate-limit.ts';
import { RPC_ERRORS, rpcErrorBody } from './rpc-errors.ts';
import { handleRpcBody } from './rpc-handler.ts';
import { createStats } from './stats.ts';
import { handleTransfers } from './transfers-handler.ts';
import { handleControl } from './control.ts';
import { createCorruptor } from './corruptor.ts';
import { sendCorrupted } from './corrupt-send.ts';

/** How the server listens, whom it admits and how it answers: its whole configuration but the seed. */
export interface DevnetServerOptions {
  host: string;
  /** 0 picks a free port. */
  port: number;
  projectIds: readonly string[];
  chainId: number;
  faults: FaultOptions;
  /** Requests per second per project id; unset = unlimited. */
  rateLimit?: number;
  /** The most JSON-RPC calls one batch may hold (default MAX_BATCH, 1000). */
  rpcBatchLimit?: number;
  /** getTokenTransfers requests a project may make before its plan capacity is exceeded (403); unset = unlimited. */
  quota?: number;
  pageKeyTtlSeconds: number;
  /** `false`: the `erigon_*` methods answer -32601, as geth, reth and most providers do (`--no-erigon`). Default true. */
  erigon?: boolean;
  /** `eth_getLogs` caps and the provider whose refusals to imitate; unset: no caps. */
  logsLimits?: LogsLimits;
}

export interface DevnetConfig extends DevnetServerOptions {
  /** Seeds fault decisions and reorg forks, so a run repeats. */
  seed: number;
}

export interface DevnetDeps {
  config: Readonly<DevnetConfig>;
  logger: Logger;
  clock: Clock;
  chain: ChainStore;
  /** Uniform in [0, 1), seeded by the caller. */
  random: () => number;
}

export interface Devnet {
  server: Server;
  /** Starts listening; resolves to the origin, e.g. `http://127.0.0.1:8545`. */
  listen(): Promise<string>;
  close(): Promise<void>;
}

const TRANSFERS_PATH = /^\/([^/]+)\/builder\/getTokenTransfers\/?$/;
/** `/{project}`, or `/` with the project id in the query or user info (`projectOfRequest`). */
const RPC_PATH = /^\/(?:([^/]+)\/?)?$/;
/** The query parameters a JSON-RPC request at `/` may carry its project id in, as providers take a key. */
const KEY_PARAMS = ['apikey', 'key'] as const;

/**
 * The project id of a request: the first path segment, or for JSON-RPC at `/` (as providers take a key in the
 * query or in user info) the `apikey` or `key` query parameter, else the password of HTTP Basic auth (the
 * user name when there is no password).
 *
 * @example projectOfRequest('test-project', url, undefined) // → 'test-project'
 * @example projectOfRequest(undefined, new URL('http://devnet/?apikey=test-project'), undefined) // → 'test-project'
 */
function projectOfRequest(segment: string | undefined, url: URL, authorization: string | undefined): string {
  if (segment !== undefined) return decodeURIComponent(segment);
  for (const name of KEY_PARAMS) {
    const key = url.searchParams.get(name);
    if (key !== null) return key;
  }
  const basic = /^basic +([a-z0-9+/=]+)$/i.exec(authorization?.trim() ?? '');
  if (!basic) return '';
  const credentials = Buffer.from(basic[1]!, 'base64').toString('utf8');
  const colon = credentials.indexOf(':');
  if (colon < 0) return credentials;
  const password = credentials.slice(colon + 1);
  return password || credentials.slice(0, colon);
}

/** The reference server of the chain API (chain-api.md §1–2), with its control plane and fault injection. */
export function createDevnet({ config, logger, clock, chain, random }: DevnetDeps): Devnet {
  const projects = new Set(config.projectIds);
  const stats = createStats();
  const faults = createFaults(config.faults, random);
  const limiter = createRateLimiter(config.rateLimit, clock);
  const sendBuffers = createSendBuffers();
  const used = new Map<string, number>();
  const pageKeySecret = `erc20-etl devnet ${config.chainId}`;
  const reorgs = { count: 0 };
  const corruptor = createCorruptor({ chain, stats, pageKeySecret });

  async function handle(req: IncomingMessage, res: ServerResponse): Promise<void> {
    const url = new URL(req.url ?? '/', 'http://devnet');
    const path = url.pathname;
    if (path === '/healthz' || path.startsWith('/__')) {
      return handleControl(req, res, path, { chain, stats, logger, config, reorgs, corruptor });
    }
    const transfers = TRANSFERS_PATH.exec(path);
    const rpc = transfers ? null : RPC_PATH.exec(path);
    if (!transfers && !rpc) {
      return sendJson(res, 404, { error: { code: 'not_found', message: `no such endpoint: ${req.method} ${path.replace(/^\/[^/]+/, '/<project>')}` } });
    }
    const isRpc = rpc !== null;
    if (isRpc && req.method !== 'POST') {
      return sendJson(res, 405, { error: { code: 'method_not_allowed', message: 'JSON-RPC takes POST' } }, { allow: 'POST' });
    }
    if (!isRpc && req.method !== 'GET') {
      return sendJson(res, 405, { error: { code: 'method_not_allowed', message: 'getTokenTransfers takes GET' } }, { allow: 'GET' });
    }
    if (isRpc) stats.countRpcRequest();
    else stats.countTransfersRequest();
    const project = projectOfRequest((transfers ?? rpc)?.[1], url, req.headers.authorization);

    const body = isRpc ? await readBody(req) : '';
    const delay = faults.latencyMs();
    if (delay > 0) await clock.sleep(delay);

    // gateway: project id, rate limit, plan capacity, transient failures
    const fail = (status: number, code: string, rpcKind: keyof typeof RPC_ERRORS, message: string, headers = {}) => {
      stats.countError(isRpc ? RPC_ERRORS[rpcKind].code : status);
      const errorBody = isRpc ? rpcErrorBody(null, RPC_ERRORS[rpcKind].code, message) : { error: { code, message } };
      sendJson(res, status, errorBody, headers);
    };
    if (!projects.has(project)) {
      return isRpc ? fail(401, 'unauthorized', 'unauthorized', 'authentication failed') : fail(401, 'unauthorized', 'unauthorized', 'unknown project id: check the base URL');
    }
    const admitted = limiter.take(project);
    if (!admitted.ok) {
      const message = isRpc ? 'rate limit reached' : 'too many requests per second: slow down and retry after Retry-After seconds';
      return fail(429, 'rate_limited', 'rateLimited', message, { 'retry-after': String(admitted.retryAfterSeconds) });
    }
    if (!isRpc && config.quota !== undefined) {
      const n = (used.get(project) ?? 0) + 1;
      used.set(project, n);
      if (n > config.quota) return fail(403, 'forbidden', 'internal', `plan capacity exceeded: ${config.quota} requests`);
    }
    const failure = faults.failure();
    if (failure) return fail(failure, 'internal', 'internal', 'internal error: transient failure, retry later');
    if (body === undefined) return fail(413, 'invalid_params', 'invalidRequest', 'request body too large');

    const cut: Cut = faults.cut();
    if (isRpc) {
      const outcome = handleRpcBody(
        body,
        {
          chain,
          chainId: config.chainId,
          headerLags: (hash) => faults.headerLags(hash),
          erigon: config.erigon,
          logsLimits: config.logsLimits,
          logsHang: () => faults.logsHang(),
        },
        { call: stats.countRpcCall, error: stats.countError, answered: stats.countAnswered, refused: stats.countRefused },
        config.rpcBatchLimit,
      );
      // a hanging call is never answered: the connection stays open until the client gives up or the server closes
      if (outcome.hang) return;
      if (cut) stats.countError(cut);
      if (outcome.body === undefined) {
        res.writeHead(200).end();
        return;
      }
      const corrupted = corruptor.rpc(body, outcome.body);
      if (corrupted) return sendCorrupted(res, corrupted, cut);
      const answer = jsonBytes(outcome.body, sendBuffers);
      return sendJson(res, outcome.status, answer, {}, cut, () => sendBuffers.give(answer));
    }
    if (cut) stats.countError(cut);
    const outcome = handleTransfers(url.searchParams, chain, {
      now: clock.now(),
      pageKeySecret,
      pageKeyTtlMs: config.pageKeyTtlSeconds * 1000,
    });
    if (outcome.status !== 200) {
      stats.countError(outcome.status);
      return sendJson(res, outcome.status, { error: { code: outcome.code, message: outcome.message } });
    }
    const corrupted = corruptor.transfers(url.searchParams, () => outcome.body);
    if (corrupted) return sendCorrupted(res, corrupted, cut);
    const bytes = pageBytes(outcome, sendBuffers);
    return sendJson(res, 200, bytes, {}, cut, () => sendBuffers.give(bytes));
  }

  const server = createServer({ keepAliveTimeout: 30_000 }, (req, res) => {
    handle(req, res).catch((err: unknown) => {
      logger.error({ msg: 'devnet request failed', err });
      if (!res.headersSent) sendJson(res, 500, { error: { code: 'internal', message: 'internal error' } });
      else res.destroy();
    });
  });

  return {
    server,
    listen: () =>
      new Promise((resolve, reject) => {
        server.once('error', reject);
        server.listen(config.port, config.host, () => {
          const { port } = server.address() as AddressInfo;
          const host = config.host.includes(':') ? `[${config.host}]` : config.host;
          resolve(`http://${host}:${port}`);
        });
      }),
    close: () =>
      new Promise((resolve) => {
        server.close(() => resolve());
        server.closeAllConnections();
      }),
  };
}
