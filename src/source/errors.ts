import { EtlError, FatalError, RetryableError } from '../common/errors.ts';
import type { ApiEndpoint } from '../config/api-url.ts';

/**
 * The errors of the source layer. Each is a `RetryableError` (a retry can help) or a `FatalError` (it
 * cannot), so `withRetry` decides from `retryable` alone. Every message that mentions the request is built
 * from the redacted base URL and passed through `endpoint.redact()`: the project id never appears.
 */

/** What a request was for, so an error can say which contract and blocks it was about. */
export interface ErrorContext {
  contract?: string;
  fromBlock?: number;
  toBlock?: number;
  block?: number;
}

/** One request as an error message shows it. */
export interface RequestTarget {
  endpoint: ApiEndpoint;
  method: 'GET' | 'POST';
  /** Relative to the base URL, e.g. `/builder/getTokenTransfers?contractAddress=0x…`; `''` for JSON-RPC. */
  pathAndQuery: string;
  context?: ErrorContext | undefined;
}

/**
 * `contract 0x…, blocks 1–2` (or `block 7`), or `''` when nothing is known.
 *
 * @example describeContext({ contract: '0xa0b8…', fromBlock: 1, toBlock: 9 }) // → 'contract 0xa0b8…, blocks 1–9'
 */
export function describeContext(context: ErrorContext | undefined): string {
  if (!context) return '';
  const parts: string[] = [];
  if (context.contract !== undefined) parts.push(`contract ${context.contract}`);
  if (context.block !== undefined) parts.push(`block ${context.block}`);
  else if (context.fromBlock !== undefined && context.toBlock !== undefined) {
    parts.push(context.fromBlock === context.toBlock ? `block ${context.fromBlock}` : `blocks ${context.fromBlock}–${context.toBlock}`);
  }
  return parts.join(', ');
}

/**
 * The request as text for a message, redacted: the method, the redacted base URL with the path (a long
 * `pageKey` shortened), and the context.
 *
 * @example describeTarget(t) // → 'GET http://127.0.0.1:8545/<redacted>/builder/getTokenTransfers?contractAddress=0x…&pageKey=… (contract 0x…, blocks 1–9)'
 */
export function describeTarget(target: RequestTarget): string {
  const path = target.pathAndQuery.replace(/([?&]pageKey=)[^&]*/, '$1…');
  const context = describeContext(target.context);
  return target.endpoint.redact(`${target.method} ${target.endpoint.redacted}${path}${context ? ` (${context})` : ''}`);
}

/**
 * An answer whose errors' words are redacted in place: the `error` of the answer (a JSON-RPC error in a 200 answer,
 * or a REST error object) and of each answer of a batch, its `message` and any text `data`. A provider that repeats
 * the URL or the Authorization header in such a message then never puts the credential into anything built from it,
 * and redaction comes before any message shortens the text (a shortened key no longer matches). Results are left
 * alone: they are chain data, and too large to scan.
 *
 * @example redactAnswerErrors({ error: { code: -32000, message: 'bad key /v2/KEY' } }, endpoint) // → { error: { code: -32000, message: 'bad key /<redacted>' } }
 */
export function redactAnswerErrors<T>(answer: T, endpoint: Pick<ApiEndpoint, 'redact'>): T {
  if (Array.isArray(answer)) {
    for (const item of answer) redactError(item, endpoint);
  } else {
    redactError(answer, endpoint);
  }
  return answer;
}

function redactError(answer: unknown, endpoint: Pick<ApiEndpoint, 'redact'>): void {
  if (answer === null || typeof answer !== 'object' || !('error' in answer)) return;
  const holder = answer as { error: unknown };
  if (typeof holder.error === 'string') {
    holder.error = endpoint.redact(holder.error);
    return;
  }
  if (holder.error === null || typeof holder.error !== 'object') return;
  const error = holder.error as { message?: unknown; data?: unknown };
  if (typeof error.message === 'string') error.message = endpoint.redact(error.message);
  if (typeof error.data === 'string') error.data = endpoint.redact(error.data);
}

/** The `code` and `message` of an error body: REST `{"error":{"code","message"}}` or a JSON-RPC error. */
export function parseApiError(body: unknown): { code?: string | number; message?: string } {
  const error = (body !== null && typeof body === 'object' && !Array.isArray(body) ? (body as { error?: unknown }).error : undefined) as
    | { code?: unknown; message?: unknown }
    | undefined;
  if (error === null || typeof error !== 'object') return {};
  const out: { code?: string | number; message?: string } = {};
  if (typeof error.code === 'string' || typeof error.code === 'number') out.code = error.code;
  if (typeof error.message === 'string') out.message = error.message;
  return out;
}

/**
 * A `Retry-After` header in milliseconds: delta seconds (`"2"`, `"0.5"`) or an HTTP-date; `undefined`
 * when absent or unreadable. A date in the past is 0.
 *
 * @example parseRetryAfter('2', Date.now()) // → 2000
 * @example parseRetryAfter('Wed, 21 Oct 2015 07:28:00 GMT', Date.parse('Wed, 21 Oct 2015 07:27:58 GMT')) // → 2000
 */
export function parseRetryAfter(value: string | string[] | undefined, nowMs: number): number | undefined {
  const text = (Array.isArray(value) ? value[0] : value)?.trim();
  if (!text) return undefined;
  if (/^\d+(?:\.\d+)?$/.test(text)) return Math.round(Number(text) * 1000);
  // an HTTP-date names its day and month (`Wed, 21 Oct 2015 07:28:00 GMT`); bare numbers like "-3" are not dates
  const at = /[a-z]{3}/i.test(text) ? Date.parse(text) : Number.NaN;
  if (Number.isNaN(at)) return undefined;
  return Math.max(0, at - nowMs);
}

export interface HttpStatusDetails {
  status: number;
  /** `error.code` of the body: a REST word (`invalid_params`) or a JSON-RPC number (`-32099`). */
  apiCode?: string | number | undefined;
  /** `error.message` of the body, redacted. */
  apiMessage?: string | undefined;
  retryAfterMs?: number | undefined;
}

/** What to do next, by status. */
function statusHint(status: number): string {
  if (status === 401)
    return (
      'the API does not accept the project id (or key): check it in CHAIN_API_URL (for the builder API the last path segment of the base URL; ' +
      'for a node, where its provider puts the key: the path, the query such as ?apikey=, or user info)'
    );
  if (status === 403) return 'the plan capacity is exceeded: wait until the plan quota resets or raise the plan, then run again (committed progress is kept)';
  if (status === 404)
    return (
      'no such endpoint: check CHAIN_API_URL (for the builder API its base URL, like https://<network>.<provider>/<project-id>; ' +
      'for a node, its JSON-RPC URL as the provider gives it, like https://<provider>/v2/<key> or http://127.0.0.1:8545)'
    );
  if (status === 429) return 'rate limited: lower the requests per second if this happens often';
  if (status === 501 || status === 505)
    return 'the server does not implement this request, however often it is asked: check that CHAIN_API_URL is the chain API (for the builder API its base URL; for a node, its JSON-RPC URL)';
  if (status >= 500) return 'a transient failure of the API';
  if (status === 400) return 'the API refused the request: check the contract address, the block range and the page size of the job';
  return 'the API refused the request';
}

function apiText(details: HttpStatusDetails): string {
  return [details.apiCode, details.apiMessage === undefined ? undefined : JSON.stringify(details.apiMessage)].filter((v) => v !== undefined).join(' ');
}

function statusText(request: string, details: HttpStatusDetails, hint: string): string {
  const api = apiText(details);
  return `${request}: HTTP ${details.status}${api ? ` ${api}` : ''}: ${hint}`;
}

/** An HTTP status: 429 (with its `Retry-After`), 408 and 5xx may pass (`retryable`); 400, 401, 403, 404, 501, 505, … repeat. */
export class HttpStatusError extends EtlError {
  readonly status: number;
  readonly apiCode: string | number | undefined;
  readonly apiMessage: string | undefined;
  /** The request, redacted (`describeTarget`). */
  readonly request: string;
  /** Use `httpStatusError()`, which redacts. */
  constructor(message: string, request: string, details: HttpStatusDetails) {
    const retryable = isRetryableStatus(details.status);
    super(message, { retryable, retryAfterMs: retryable ? details.retryAfterMs : undefined, details: { status: details.status, apiCode: details.apiCode } });
    this.request = request;
    this.status = details.status;
    this.apiCode = details.apiCode;
    this.apiMessage = details.apiMessage;
  }
}

/** 429, 408 and 5xx may pass, but for 501 and 505 (not implemented, HTTP version not supported); every other status repeats however often it is asked. */
function isRetryableStatus(status: number): boolean {
  return status === 429 || status === 408 || (status >= 500 && status !== 501 && status !== 505);
}

/**
 * A 400 `invalid_params` about the `pageKey` (unknown or expired): paging cannot go on from that key, the
 * pipeline restarts the query from its lowest committed block.
 */
export class PageKeyRejectedError extends HttpStatusError {
  /** @example PageKeyRejectedError.from(err) // err: the HttpStatusError of the 400 */
  static from(err: HttpStatusError): PageKeyRejectedError {
    const hint = 'the API no longer accepts this pageKey: restart the query without it from the lowest committed block';
    return new PageKeyRejectedError(statusText(err.request, err, hint), err.request, err);
  }
}

/**
 * The error for a non-2xx answer, its message redacted: 429, 408 and 5xx are retryable, everything else
 * is fatal.
 *
 * @example httpStatusError(target, { status: 429, retryAfterMs: 1000 }) // → HttpStatusError, retryable, retryAfterMs 1000
 */
export function httpStatusError(target: RequestTarget, details: HttpStatusDetails): HttpStatusError {
  const clean = { ...details, apiMessage: details.apiMessage === undefined ? undefined : target.endpoint.redact(details.apiMessage) };
  const request = describeTarget(target);
  const message = target.endpoint.redact(statusText(request, clean, statusHint(clean.status)));
  return new HttpStatusError(message, request, clean);
}

export type TransportFailure = 'timeout' | 'reset' | 'refused' | 'dns' | 'network';

const TRANSPORT_HINTS: Record<TransportFailure, string> = {
  timeout: 'the API is slow or unreachable: check that CHAIN_API_URL answers (the request is tried again while retries are left)',
  reset: 'the connection was closed before the answer was complete',
  refused: 'nothing listens at that address: check the host and port of CHAIN_API_URL',
  dns: 'the host name could not be resolved: check the host of CHAIN_API_URL and the network',
  network: 'a network failure',
};

/** The connection failed: a timeout, a reset, a refused connection, a DNS failure. Retryable. */
export class TransportError extends RetryableError {
  constructor(
    target: RequestTarget,
    readonly failure: TransportFailure,
    detail: string,
    options?: { cause?: unknown },
  ) {
    super(target.endpoint.redact(`${describeTarget(target)}: ${detail}: ${TRANSPORT_HINTS[failure]}`), undefined, options);
  }
}

/** The server's TLS certificate was refused (verification is always on). Fatal: retrying will not change it. */
export class TlsError extends FatalError {
  constructor(target: RequestTarget, detail: string, options?: { cause?: unknown }) {
    super(
      target.endpoint.redact(
        `${describeTarget(target)}: the TLS certificate of the API was refused (${detail}): check the host of CHAIN_API_URL; certificate verification cannot be turned off`,
      ),
      options,
    );
  }
}

/**
 * A 200 whose body is not JSON (cut short, or an HTML page from a proxy). Retryable: truncations and
 * gateway error pages pass. The message names the content type when it is not JSON.
 *
 * @example new UnparsableBodyError(target, 'Unexpected token <', '<!DOCTYPE html>…', 'text/html; charset=utf-8')
 * // → 'GET …/<redacted>/builder/getTokenTransfers?… (contract 0x…, blocks 1–9): HTTP 200 with a text/html body that is not JSON (…), starting "<!DOCTYPE html>…": an error page, …'
 */
export class UnparsableBodyError extends RetryableError {
  constructor(target: RequestTarget, detail: string, start: string, contentType?: string) {
    const type = contentType?.split(';')[0]?.trim().toLowerCase() ?? '';
    const what = type && !type.includes('json') ? `a ${type} body` : 'a body';
    const hint = type.includes('html') ? ': an error page, probably from a proxy or gateway in front of the API' : '';
    super(
      target.endpoint.redact(
        `${describeTarget(target)}: HTTP 200 with ${what} that is not JSON (${detail}), starting ${JSON.stringify(target.endpoint.redact(start).slice(0, 60))}${hint}`,
      ),
    );
  }
}

/** An answer larger than the configured cap; reading stopped there. */
export class ResponseTooLargeError extends FatalError {
  constructor(
    target: RequestTarget,
    readonly limitBytes: number,
  ) {
    super(
      target.endpoint.redact(
        `${describeTarget(target)}: the answer is larger than the response size limit of ${limitBytes} bytes; reading stopped: lower the page size (or the header batch size) so that an answer fits (the limit is fixed)`,
      ),
    );
  }
}

/**
 * The JSON-RPC endpoint refuses batches of this many calls as a whole (Erigon's `--rpc.batch.limit` is 100
 * by default, geth's batch request limit 1000). The same batch fails however often it is sent: the job's
 * `headerBatchSize` must come down.
 *
 * @example new BatchRefusedError(200, '-32000 "batch limit 100 exceeded (can increase by --rpc.batch.limit). Requested batch of size: 200"')
 */
export class BatchRefusedError extends FatalError {
  constructor(
    readonly batchSize: number,
    answer: string,
  ) {
    super(
      `the JSON-RPC endpoint refused a batch of ${batchSize} erigon_getHeaderByHash calls (${answer}): set headerBatchSize in the job file ` +
        '(--header-batch-size for backfill) to at most what it accepts; Erigon accepts 100 by default. The transfers already loaded stay; ' +
        'run the job again to fetch the headers',
    );
  }
}

/** At most this many problems are spelled out in a message; `problems` keeps them all. */
const LISTED_PROBLEMS = 20;

/**
 * The API answered, but the answer is malformed: a field of the wrong shape, rows out of order, a header
 * whose hash does not match. Each problem names the contract, the block and the field when known.
 *
 * @example new BadResponseError('getTokenTransfers answered a malformed page', ['contract 0x…, block 17000000, tokenTransfers[3].value: expected …, got "-5"'])
 */
export class BadResponseError extends FatalError {
  constructor(
    summary: string,
    readonly problems: readonly string[] = [],
    options?: { cause?: unknown },
  ) {
    const listed = problems
      .slice(0, LISTED_PROBLEMS)
      .map((p) => `\n  ${p}`)
      .join('');
    const more = problems.length > LISTED_PROBLEMS ? `\n  … and ${problems.length - LISTED_PROBLEMS} more` : '';
    super(
      `${summary}${problems.length ? ` (${problems.length} problem${problems.length === 1 ? '' : 's'}):` : ''}${listed}${more}\nNothing of this answer was stored; if it repeats, report it to the API provider.`,
      options,
    );
  }
}
