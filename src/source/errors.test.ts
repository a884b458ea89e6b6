import { describe, expect, it } from 'vitest';
import { FatalError, isRetryable, RetryableError } from '../common/errors.ts';
import { parseApiUrl } from '../config/api-url.ts';
import {
  BadResponseError,
  describeTarget,
  HttpStatusError,
  httpStatusError,
  PageKeyRejectedError,
  parseApiError,
  parseRetryAfter,
  redactAnswerErrors,
  TransportError,
  UnparsableBodyError,
  type RequestTarget,
} from './errors.ts';

const endpoint = parseApiUrl('https://mainnet.example.org/v3/proj-SECRET-123');
const target: RequestTarget = {
  endpoint,
  method: 'GET',
  pathAndQuery: '/builder/getTokenTransfers?contractAddress=0xa0&fromBlock=1&toBlock=9&pageKey=abcdefghijklmnop',
  context: { contract: '0xa0', fromBlock: 1, toBlock: 9 },
};

describe('parseRetryAfter', () => {
  it('reads delta seconds and HTTP-dates', () => {
    const now = Date.parse('Wed, 21 Oct 2015 07:27:58 GMT');
    expect(parseRetryAfter('2', now)).toBe(2000);
    expect(parseRetryAfter(' 0.5 ', now)).toBe(500);
    expect(parseRetryAfter('Wed, 21 Oct 2015 07:28:00 GMT', now)).toBe(2000);
    expect(parseRetryAfter('Wed, 21 Oct 2015 07:00:00 GMT', now)).toBe(0);
  });

  it('answers undefined for an absent or unreadable header', () => {
    expect(parseRetryAfter(undefined, 0)).toBeUndefined();
    expect(parseRetryAfter('', 0)).toBeUndefined();
    expect(parseRetryAfter('soon', 0)).toBeUndefined();
    expect(parseRetryAfter('-3', 0)).toBeUndefined();
  });
});

describe('parseApiError', () => {
  it('reads REST and JSON-RPC error bodies, and nothing from others', () => {
    expect(parseApiError({ error: { code: 'forbidden', message: 'plan capacity exceeded' } })).toEqual({ code: 'forbidden', message: 'plan capacity exceeded' });
    expect(parseApiError({ jsonrpc: '2.0', id: null, error: { code: -32097, message: 'rate limit reached' } })).toEqual({ code: -32097, message: 'rate limit reached' });
    expect(parseApiError('<html>')).toEqual({});
    expect(parseApiError({ error: 'x' })).toEqual({});
  });
});

describe('httpStatusError', () => {
  it('makes 429, 408 and 5xx retryable, with the Retry-After', () => {
    for (const status of [429, 408, 500, 502, 503]) {
      const err = httpStatusError(target, { status, retryAfterMs: 1000 });
      expect(isRetryable(err)).toBe(true);
      expect(err).toBeInstanceOf(HttpStatusError);
      expect(err.retryAfterMs).toBe(1000);
    }
  });

  it('makes 400, 401, 403, 404, 501 and 505 fatal, each saying what to do', () => {
    const messages = Object.fromEntries(
      [400, 401, 403, 404, 501, 505].map((status) => {
        const err = httpStatusError(target, { status, apiCode: 'x', apiMessage: 'y' });
        expect(isRetryable(err)).toBe(false);
        expect(err).toBeInstanceOf(HttpStatusError);
        return [status, err.message];
      }),
    );
    expect(messages[401]).toContain('does not accept the project id (or key): check it in CHAIN_API_URL');
    expect(messages[401]).toContain('for a node, where its provider puts the key');
    expect(messages[403]).toContain('plan capacity is exceeded');
    expect(messages[404]).toContain(
      'no such endpoint: check CHAIN_API_URL (for the builder API its base URL, like https://<network>.<provider>/<project-id>; for a node, its JSON-RPC URL',
    );
    expect(messages[400]).toContain('HTTP 400 x "y"');
    // a plain web server asked a JSON-RPC POST: not a failure that passes
    for (const status of [501, 505])
      expect(messages[status]).toContain('the server does not implement this request, however often it is asked: check that CHAIN_API_URL is the chain API');
  });

  it('never shows the project id, even when the API echoes it', () => {
    const err = httpStatusError(target, { status: 401, apiCode: 'unauthorized', apiMessage: 'unknown project proj-SECRET-123' });
    expect(err.message).not.toContain('proj-SECRET-123');
    expect(err.apiMessage).toBe('unknown project <redacted>');
    expect(err.message).toContain('GET https://mainnet.example.org/v3/<redacted>/builder/getTokenTransfers?contractAddress=0xa0');
    expect(err.message).toContain('(contract 0xa0, blocks 1–9)');
    expect(JSON.stringify({ ...err })).not.toContain('proj-SECRET-123');
  });

  it('shortens the pageKey of the request', () => {
    expect(describeTarget(target)).toContain('&pageKey=… (contract 0xa0');
    expect(describeTarget(target)).not.toContain('abcdefghijklmnop');
  });

  it('turns a refused pageKey into a PageKeyRejectedError that is fatal and keeps the API message', () => {
    const err = PageKeyRejectedError.from(httpStatusError(target, { status: 400, apiCode: 'invalid_params', apiMessage: 'pageKey has expired' }));
    expect(isRetryable(err)).toBe(false);
    expect(err.status).toBe(400);
    expect(err.message).toContain('"pageKey has expired"');
    expect(err.message).toContain('restart the query without it');
  });
});

describe('BadResponseError', () => {
  it('lists its problems, at most 20 spelled out', () => {
    const problems = Array.from({ length: 25 }, (_, i) => `problem ${i}`);
    const err = new BadResponseError('a malformed page', problems);
    expect(err).toBeInstanceOf(FatalError);
    expect(err.problems).toHaveLength(25);
    expect(err.message).toContain('a malformed page (25 problems):\n  problem 0\n');
    expect(err.message).toContain('problem 19\n  … and 5 more');
    expect(err.message).not.toContain('problem 20');
  });
});

describe('UnparsableBodyError', () => {
  it('is retryable, names the request, and calls a text/html answer an error page of a proxy', () => {
    const html = new UnparsableBodyError(target, "Unexpected token '<'", '<!DOCTYPE html><title>502 Bad Gateway</title>', 'text/html; charset=utf-8');
    expect(html).toBeInstanceOf(RetryableError);
    expect(html.message).toMatch(/\(contract 0xa0, blocks 1–9\): HTTP 200 with a text\/html body that is not JSON \(Unexpected token '<'\), starting "<!DOCTYPE html>/);
    expect(html.message).toMatch(/an error page, probably from a proxy or gateway in front of the API$/);
    expect(html.message).not.toContain('proj-SECRET-123');
    const cut = new UnparsableBodyError(target, 'Unexpected end of JSON input', '{"count":3,', 'application/json');
    expect(cut.message).toContain('HTTP 200 with a body that is not JSON (Unexpected end of JSON input), starting "{\\"count\\":3,"');
    expect(cut.message).not.toContain('error page');
  });
});

describe('redactAnswerErrors', () => {
  const endpoint = parseApiUrl('https://node.example/v3/KEY-0123456789', undefined, 'node');
  it("redacts the message and text data of an answer's error, and of each answer of a batch, leaving results alone", () => {
    const single = { jsonrpc: '2.0', id: 1, error: { code: -32000, message: 'bad key /v3/KEY-0123456789', data: 'asked /v3/KEY-0123456789' } };
    expect(redactAnswerErrors(single, endpoint)).toEqual({ jsonrpc: '2.0', id: 1, error: { code: -32000, message: 'bad key /<redacted>', data: 'asked /<redacted>' } });
    const batch = [{ id: 1, result: 'KEY-0123456789' }, { id: 2, error: { code: -32000, message: 'KEY-0123456789' } }, { id: 3, error: 'KEY-0123456789' }, null];
    expect(redactAnswerErrors(batch, endpoint)).toEqual([
      { id: 1, result: 'KEY-0123456789' },
      { id: 2, error: { code: -32000, message: '<redacted>' } },
      { id: 3, error: '<redacted>' },
      null,
    ]);
    expect(redactAnswerErrors({ transfers: [], error: null }, endpoint)).toEqual({ transfers: [], error: null });
  });
  it('redacts an unparsable body before it is shortened', () => {
    const start = `${'x'.repeat(50)}/v3/KEY-0123456789 and more`;
    const err = new UnparsableBodyError({ endpoint, method: 'POST', pathAndQuery: '' }, 'Unexpected token', start, 'text/html');
    expect(err.message).not.toMatch(/KEY-0|0123456/);
    expect(err.message).toContain('/<redacted>');
  });
});

describe('TransportError', () => {
  it('says what to check after a timeout, naming no setting (no "request timeout" setting exists)', () => {
    const endpoint = parseApiUrl('https://node.example/v3/KEY-0123456789', undefined, 'node');
    const err = new TransportError({ endpoint, method: 'POST', pathAndQuery: '' }, 'timeout', 'no answer');
    expect(isRetryable(err)).toBe(true);
    expect(err.message).toContain('check that CHAIN_API_URL answers');
    expect(err.message).not.toMatch(/raise the request timeout/);
    expect(err.message).not.toContain('KEY-0123456789');
  });
});
