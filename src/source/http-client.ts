import { setMaxListeners } from 'node:events';
import { NO_BUDGET, type TimeBudget } from '../common/time-budget.ts';
import { Pool } from 'undici';
import type { Clock } from '../common/clock.ts';
import { EtlError, FatalError } from '../common/errors.ts';
import type { Logger } from '../common/logger.ts';
import { basicCredentials, type ApiEndpoint } from '../config/api-url.ts';
import { countError, type SourceCounters } from '../common/source-counters.ts';
import {
  describeTarget,
  httpStatusError,
  parseApiError,
  redactAnswerErrors,
  parseRetryAfter,
  ResponseTooLargeError,
  TlsError,
  TransportError,
  UnparsableBodyError,
  type ErrorContext,
  type RequestTarget,
  type TransportFailure,
} from './errors.ts';
import type { RateLimiter } from '../common/rate-limiter.ts';
import { untilAborted } from '../common/until-aborted.ts';
import { createRateLimiter } from './rate-limiter.ts';
import { withRetry } from '../common/retry.ts';
import { collectBody, createBodyBuffers, declaredLength } from './body-bytes.ts';
import { parseJsonBody, type ElementReader } from './json-body.ts';
import { createResultStream, StreamedJsonError, type StreamEnd } from './result-stream.ts';

/** A response body: its bytes as they come, and a way to stop reading it. */
type BodyStream = AsyncIterable<Buffer> & { destroy(err?: Error): unknown };

export interface HttpClientConfig {
  /** The longest one attempt may take, headers and body. */
  timeoutMs: number;
  /** Open connections at most (kept alive). */
  connections: number;
  /** Answers larger than this are refused (`ResponseTooLargeError`) without reading further. */
  maxResponseBytes: number;
  /** Retries after the first attempt. */
  retries: number;
  /** Request starts per second over the whole run; unlimited when unset. */
  requestsPerSecond?: number | undefined;
  /** First backoff between attempts (default 250 ms). */
  retryMinDelayMs?: number;
  /** Longest backoff, a `Retry-After` apart (default 10 s). */
  retryMaxDelayMs?: number;
}

export interface HttpClientDeps {
  /** Where the run's time goes (`--time-budget`): answers parsed count as `parse`. */
  budget?: TimeBudget;
  endpoint: ApiEndpoint;
  config: HttpClientConfig;
  logger: Logger;
  clock: Clock;
  counters: SourceCounters;
  /** Where request starts take their turn; by default one schedule in this process, `config.requestsPerSecond` apart. */
  limiter?: RateLimiter;
  /**
   * A run's stop (Ctrl-C): once it aborts, requests on their way are dropped, a wait before a retry ends, and nothing
   * more is sent; each call rejects with its reason. A hung node does not hold the stop for its timeouts and retries.
   */
  stop?: AbortSignal | undefined;
}

/** Options of one call, for callers that answer a slow call otherwise than by waiting and retrying. */
export interface CallOptions {
  /**
   * This call's deadline per attempt, in place of `config.timeoutMs`. An attempt that reaches it is not retried:
   * the call rejects at once with a `CallTimeoutError` (an `eth_getLogs` that does not answer in time is asked
   * again over fewer blocks, not repeated).
   */
  timeoutMs?: number;
  /**
   * Reads each element of the answer's `result` array as the body comes (`createResultStream`; a body that is not a
   * plain JSON-RPC answer, as it is parsed whole by `parseJsonBody`): an `eth_getLogs` answer's logs become rows group
   * by group while the rest is on its way, instead of all being parsed first. See `ElementReader` for a reader that throws.
   */
  resultElement?: ElementReader;
}

/** An attempt of a call with its own deadline (`CallOptions.timeoutMs`) got no complete answer in time. Not retried by the client. */
export class CallTimeoutError extends FatalError {
  constructor(
    request: string,
    readonly timeoutMs: number,
  ) {
    super(`${request}: no complete answer within ${timeoutMs} ms`);
  }
}

export interface HttpClient {
  /** GETs `{base}{pathAndQuery}` and answers its JSON. */
  getJson(pathAndQuery: string, context?: ErrorContext): Promise<unknown>;
  /** POSTs `body` as JSON to the base URL itself (JSON-RPC) and answers the JSON. */
  postJson(body: unknown, context?: ErrorContext, options?: CallOptions): Promise<unknown>;
  /** The counters this client adds to (the same object as `deps.counters`). */
  readonly counters: SourceCounters;
  close(): Promise<void>;
}

const TLS_CODES = /^(?:CERT_|UNABLE_TO_|DEPTH_ZERO_|SELF_SIGNED_|ERR_TLS_|ERR_SSL_|HOSTNAME_MISMATCH)/;
const TRANSPORT_CODES: Record<string, TransportFailure> = {
  UND_ERR_HEADERS_TIMEOUT: 'timeout',
  UND_ERR_BODY_TIMEOUT: 'timeout',
  UND_ERR_CONNECT_TIMEOUT: 'timeout',
  ETIMEDOUT: 'timeout',
  UND_ERR_SOCKET: 'reset',
  UND_ERR_RES_CONTENT_LENGTH_MISMATCH: 'reset',
  ECONNRESET: 'reset',
  EPIPE: 'reset',
  ECONNABORTED: 'reset',
  ECONNREFUSED: 'refused',
  ENOTFOUND: 'dns',
  EAI_AGAIN: 'dns',
  EHOSTUNREACH: 'network',
  ENETUNREACH: 'network',
  ENETDOWN: 'network',
};

/**
 * Free body buffers a client keeps between answers (`body-bytes.ts`): four of a node's largest answers (about 7 MB
 * each, in buffers of 8 MB), as many as a run's chunks read at once. An `eth_getLogs` answer is read as it comes
 * (`result-stream.ts`) and takes none; they serve the large bodies read whole (an answer whose head is not a plain
 * JSON-RPC answer's).
 */
const BODY_BYTES_KEPT = 32 * 1024 * 1024;

/**
 * The HTTP client of the chain API: one keep-alive pool of at most `connections` connections to the
 * API's origin, TLS verified, a deadline on every attempt, a cap on the answer size, the shared rate
 * limit before every attempt, and retries of what may pass (429 with its Retry-After, 5xx, timeouts,
 * resets, cut bodies). Failed attempts are logged at warn, redacted.
 *
 * @example
 * const http = createHttpClient({ endpoint, config: { timeoutMs: 30_000, connections: 8, maxResponseBytes: 64 << 20, retries: 5 }, logger, clock, counters });
 * await http.getJson(`/builder/getTokenTransfers?contractAddress=${usdc}&fromBlock=17000000&toBlock=17000100`);
 * await http.postJson({ jsonrpc: '2.0', id: 1, method: 'eth_blockNumber', params: [] });
 */
export function createHttpClient(deps: HttpClientDeps): HttpClient {
  const { endpoint, config, logger, clock, counters, stop } = deps;
  const budget = deps.budget ?? NO_BUDGET;
  const { origin, requestPath, authorization } = endpointRequests(endpoint);
  const pool = new Pool(origin, {
    connections: config.connections,
    headersTimeout: config.timeoutMs,
    bodyTimeout: config.timeoutMs,
    // always verify certificates, whatever NODE_TLS_REJECT_UNAUTHORIZED says
    connect: { timeout: config.timeoutMs, rejectUnauthorized: true },
  });
  const limiter = deps.limiter ?? createRateLimiter({ requestsPerSecond: config.requestsPerSecond, clock });
  // each request on its way, and each waiting its turn, listens to the stop until it ends: more than Node's 10 at once
  // is no leak (each is removed), so Node is not to warn of one on stderr
  if (stop) setMaxListeners(0, stop);
  const bodies = createBodyBuffers(BODY_BYTES_KEPT);

  async function attempt(target: RequestTarget, body: string | undefined, options: CallOptions = {}): Promise<unknown> {
    stop?.throwIfAborted();
    // a request waiting its turn under a requests-per-second limit does not hold the stop either
    const turn = limiter.acquire();
    turn.catch(() => undefined); // awaited below, or abandoned when the run stops
    await untilAborted(turn, stop);
    stop?.throwIfAborted();
    if (target.method === 'GET') counters.transferRequests++;
    else counters.rpcPosts++;
    const timeoutMs = options.timeoutMs ?? config.timeoutMs;
    const controller = new AbortController();
    const timer = setTimeout(() => controller.abort(new Error(`timed out after ${timeoutMs} ms`)), timeoutMs);
    // the stop aborts this request; a listener removed when it ends. Not AbortSignal.any over the run-long stop signal:
    // on Node 20.20, 200,000 such composites, each with an abort listener left on it (as a request's listeners may be),
    // still held 226 MB after a full collection (0.4 MB with each listener removed)
    const onStop = () => controller.abort(stop?.reason);
    stop?.addEventListener('abort', onStop, { once: true });
    try {
      const res = await pool.request({
        path: requestPath(target.pathAndQuery),
        method: target.method,
        headers: {
          accept: 'application/json',
          ...(body !== undefined && { 'content-type': 'application/json' }),
          ...(authorization !== undefined && { authorization }),
        },
        body,
        signal: controller.signal,
        ...(options.timeoutMs !== undefined && { headersTimeout: timeoutMs, bodyTimeout: timeoutMs }),
      });
      // an answer whose elements the call reads is read as it comes; any other body, and one that turns out not to be
      // a JSON-RPC answer, whole
      const declared = declaredLength(res.headers['content-length']);
      if (declared !== undefined && declared > config.maxResponseBytes) throw tooLarge(res.body, target);
      const streamed =
        options.resultElement && res.statusCode >= 200 && res.statusCode < 300 ? await readStreamed(res.body, res.headers, target, options.resultElement) : undefined;
      if (streamed && 'value' in streamed) return redactAnswerErrors(streamed.value, endpoint);
      const answer = streamed?.pieces ?? (await readCapped(res.body, declared, target));
      try {
        return interpret(target, res.statusCode, res.headers, answer, options.resultElement);
      } finally {
        // parsed into strings and objects of their own: nothing refers to the bytes any more
        bodies.give(answer);
      }
    } catch (err) {
      if (stop?.aborted) throw stop.reason;
      const failure = classify(err, target, controller.signal.aborted, timeoutMs);
      // a call with its own deadline is answered by the caller, not retried here
      if (options.timeoutMs !== undefined && failure instanceof TransportError && failure.failure === 'timeout') {
        throw new CallTimeoutError(describeTarget(target), timeoutMs);
      }
      throw failure;
    } finally {
      clearTimeout(timer);
      stop?.removeEventListener('abort', onStop);
    }
  }

  /** The answer is larger than `maxResponseBytes`: reading stops. */
  function tooLarge(stream: BodyStream, target: RequestTarget): ResponseTooLargeError {
    stream.destroy();
    countError(counters, 'too-large');
    return new ResponseTooLargeError(target, config.maxResponseBytes);
  }

  /** Reads the body's bytes (`declared`: its content-length, within the limit), stopping (and destroying the stream) past `maxResponseBytes`. */
  async function readCapped(stream: BodyStream, declared: number | undefined, target: RequestTarget): Promise<Buffer[]> {
    const body = await collectBody(stream, declared, config.maxResponseBytes, bodies);
    if (!body) throw tooLarge(stream, target);
    return body;
  }

  /**
   * Reads a 2xx body as it comes (`createResultStream`), each element of its `result` given to `read` while the rest is
   * on its way, stopping past `maxResponseBytes`: the answer parsed, or the bytes of a body that is not a JSON-RPC answer.
   */
  async function readStreamed(stream: BodyStream, headers: Record<string, string | string[] | undefined>, target: RequestTarget, read: ElementReader): Promise<StreamEnd> {
    const limit = config.maxResponseBytes;
    const reader = createResultStream(read);
    let size = 0;
    try {
      for await (const chunk of stream) {
        size += chunk.length;
        if (size > limit) throw tooLarge(stream, target);
        budget.timeSync('parse', () => reader.push(chunk));
      }
      return budget.timeSync('parse', () => reader.end());
    } catch (err) {
      if (!(err instanceof StreamedJsonError)) throw err;
      stream.destroy();
      countError(counters, 'bad-body');
      const type = headers['content-type'];
      throw new UnparsableBodyError(target, err.message, reader.start(), Array.isArray(type) ? type[0] : type);
    }
  }

  function interpret(target: RequestTarget, status: number, headers: Record<string, string | string[] | undefined>, body: Buffer[], readResult?: ElementReader): unknown {
    let json: unknown;
    let parseError: string | undefined;
    let text: string | undefined;
    try {
      json = budget.timeSync('parse', () => parseJsonBody(body, readResult));
    } catch {
      // what a person reads in an error: the body as it came, and the parser's words about it
      text = Buffer.concat(body).toString('utf8');
      try {
        json = JSON.parse(text);
      } catch (err) {
        parseError = err instanceof Error ? err.message : String(err);
      }
    }
    if (status >= 200 && status < 300) {
      if (parseError === undefined) return redactAnswerErrors(json, endpoint);
      countError(counters, 'bad-body');
      const type = headers['content-type'];
      throw new UnparsableBodyError(target, parseError, text ?? '', Array.isArray(type) ? type[0] : type);
    }
    countError(counters, status);
    if (status === 429) counters.rateLimited++;
    const api = parseApiError(json);
    throw httpStatusError(target, {
      status,
      apiCode: api.code,
      // redacted before it is shortened: a shortened credential would no longer be found
      apiMessage: api.message ?? (parseError === undefined || !text ? undefined : endpoint.redact(text).slice(0, 200)),
      retryAfterMs: parseRetryAfter(headers['retry-after'], clock.now()),
    });
  }

  /** Maps what undici or the socket threw to the source errors; errors of ours pass unchanged. */
  function classify(err: unknown, target: RequestTarget, timedOut: boolean, timeoutMs: number): unknown {
    if (err instanceof EtlError) return err;
    if (timedOut) {
      countError(counters, 'timeout');
      return new TransportError(target, 'timeout', `no complete answer within ${timeoutMs} ms`);
    }
    const code = errorCode(err);
    if (code === undefined) return err;
    const detail = err instanceof Error ? `${code}: ${err.message}` : code;
    if (TLS_CODES.test(code)) {
      countError(counters, 'tls');
      return new TlsError(target, detail, { cause: err });
    }
    // other system errors (errno codes like EADDRNOTAVAIL) are network failures; anything else (a closed
    // client, an invalid argument) is not a reason to try again
    const failure = TRANSPORT_CODES[code] ?? (/^E[A-Z0-9]+$/.test(code) ? 'network' : undefined);
    if (failure === undefined) return err;
    countError(counters, failure);
    return new TransportError(target, failure, failure === 'timeout' ? `no complete answer within ${timeoutMs} ms (${code})` : detail, {
      cause: err,
    });
  }

  async function send(target: RequestTarget, body: string | undefined, options?: CallOptions): Promise<unknown> {
    return withRetry(() => attempt(target, body, options), {
      retries: config.retries,
      minDelayMs: config.retryMinDelayMs ?? 250,
      maxDelayMs: config.retryMaxDelayMs ?? 10_000,
      clock,
      ...(stop && { signal: stop }),
      onRetry: (err, attemptNo, delayMs) => {
        counters.retries++;
        logger.warn({
          msg: 'chain API request failed, retrying',
          request: describeTarget(target),
          attempt: attemptNo,
          delayMs,
          error: endpoint.redact(err.message),
          errorType: err.name,
        });
      },
    });
  }

  return {
    getJson(pathAndQuery, context) {
      const path = pathAndQuery.startsWith('/') ? pathAndQuery : `/${pathAndQuery}`;
      return send({ endpoint, method: 'GET', pathAndQuery: path, context }, undefined);
    },
    postJson(body, context, options) {
      return send({ endpoint, method: 'POST', pathAndQuery: '', context }, JSON.stringify(body), options);
    },
    counters,
    // nobody waits for an answer once the client is closed: requests still in flight (a page abandoned by a stopped
    // run, a node that hangs) are dropped, not waited for up to their timeout
    close: () => pool.destroy(),
  };
}

/** How a request reaches the endpoint: its origin, the path (and query) to ask, and the Authorization header, if any. */
export interface EndpointRequests {
  /** Scheme, host and port: what the connections go to. */
  origin: string;
  /** The base URL's path, then `pathAndQuery`, then the base URL's query (a key in `?apikey=…`), `/` at least. */
  requestPath(pathAndQuery: string): string;
  /** `Basic …` from the base URL's user info (a key in `https://user:key@host/`); secret, never logged. */
  authorization: string | undefined;
}

/**
 * What the client sends for an endpoint: its path and query with every request, and its user info as HTTP
 * Basic auth, as a browser or curl does with such a URL. None of it appears in a message: those name the
 * endpoint by `redacted`.
 *
 * @example endpointRequests(parseApiUrl('https://u:k3y@eth.example/v2?apikey=s3cr3t', undefined, 'node')).requestPath('')
 * // → '/v2?apikey=s3cr3t' (authorization: 'Basic dTprM3k=')
 */
export function endpointRequests(endpoint: Pick<ApiEndpoint, 'base'>): EndpointRequests {
  const url = new URL(endpoint.base);
  const basePath = url.pathname.replace(/\/$/, '');
  const query = url.search.slice(1);
  const credentials = basicCredentials(url);
  return {
    origin: url.origin,
    requestPath(pathAndQuery) {
      const path = `${basePath}${pathAndQuery}`;
      const withQuery = query ? `${path}${path.includes('?') ? '&' : '?'}${query}` : path;
      return withQuery.startsWith('/') ? withQuery : `/${withQuery}`;
    },
    authorization: credentials === undefined ? undefined : `Basic ${credentials}`,
  };
}

function errorCode(err: unknown): string | undefined {
  for (let e: unknown = err, depth = 0; e && typeof e === 'object' && depth < 4; e = (e as { cause?: unknown }).cause, depth++) {
    const code = (e as { code?: unknown }).code;
    if (typeof code === 'string') return code;
  }
  return undefined;
}
