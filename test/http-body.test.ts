import { createServer } from 'node:http';
import type { AddressInfo } from 'node:net';
import { setTimeout as sleep } from 'node:timers/promises';
import { pino } from 'pino';
import { describe, expect, it } from 'vitest';
import { systemClock } from '../src/common/clock.ts';
import { createSourceCounters } from '../src/common/source-counters.ts';
import { parseApiUrl } from '../src/config/api-url.ts';
import { createHttpClient } from '../src/source/http-client.ts';
import { closedAfterEach } from './helpers/devnet.ts';

const later = closedAfterEach();

/** A server that answers `body` in the given pieces (bytes), each written after a pause so that it arrives apart. */
async function chunkedServer(pieces: readonly Buffer[]): Promise<string> {
  const server = createServer(async (_req, res) => {
    res.writeHead(200, { 'content-type': 'application/json' });
    for (const piece of pieces) {
      res.write(piece);
      await sleep(20);
    }
    res.end();
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  later(() => new Promise<void>((resolve) => server.close(() => resolve())));
  return `http://127.0.0.1:${(server.address() as AddressInfo).port}/key`;
}

function client(base: string, connections = 1, maxResponseBytes = 1 << 20) {
  const http = createHttpClient({
    endpoint: parseApiUrl(base),
    config: { timeoutMs: 5000, connections, maxResponseBytes, retries: 0 },
    logger: pino({ level: 'silent' }),
    clock: systemClock,
    counters: createSourceCounters(),
  });
  later(() => http.close());
  return http;
}

describe('HTTP bodies read chunk by chunk', () => {
  it('decodes a UTF-8 character split across chunks after ASCII ones, and ASCII after it', async () => {
    const body = Buffer.from(JSON.stringify({ name: 'Ünïcödé Tøkên 名前 €', symbol: 'ASCII' }), 'utf8');
    const euro = body.indexOf(Buffer.from('名', 'utf8'));
    // ASCII first, then a piece that ends one byte into a three-byte character, then the rest
    const pieces = [body.subarray(0, 8), body.subarray(8, euro + 1), body.subarray(euro + 1)];
    expect(pieces[0]!.every((b) => b < 128)).toBe(true);
    const answer = await client(await chunkedServer(pieces)).getJson('/x');
    expect(answer).toEqual({ name: 'Ünïcödé Tøkên 名前 €', symbol: 'ASCII' });
  });

  it("reads each element of a JSON-RPC answer's result as the call asks, in order, from a body in many chunks", async () => {
    const logs = Array.from({ length: 3000 }, (_, i) => ({ logIndex: `0x${i.toString(16)}`, data: `0x${i.toString(16).padStart(64, '0')}` }));
    const body = Buffer.from(JSON.stringify({ jsonrpc: '2.0', id: 1, result: logs }));
    const pieces = [body.subarray(0, 1000), body.subarray(1000, 70_001), body.subarray(70_001)];
    const http = client(await chunkedServer(pieces));
    const read: number[] = [];
    const answer = await http.postJson({ jsonrpc: '2.0', id: 1, method: 'eth_getLogs', params: [] }, undefined, {
      resultElement: (log, i) => {
        read.push(i);
        return Number((log as { data: string }).data);
      },
    });
    expect(answer).toEqual({ jsonrpc: '2.0', id: 1, result: logs.map((_l, i) => i) });
    expect(read).toEqual(logs.map((_l, i) => i));
  });

  it('reads an all-ASCII body of many chunks whole, in order', async () => {
    const values = Array.from({ length: 2000 }, (_, i) => `0x${i.toString(16).padStart(64, '0')}`);
    const body = Buffer.from(JSON.stringify(values));
    const pieces = [body.subarray(0, 1000), body.subarray(1000, 70_001), body.subarray(70_001)];
    expect(await client(await chunkedServer(pieces)).getJson('/x')).toEqual(values);
  });
});

describe("a JSON-RPC answer's result read as it comes", () => {
  const logs = Array.from({ length: 3000 }, (_, i) => ({ logIndex: `0x${i.toString(16)}`, data: `0x${i.toString(16).padStart(64, '0')}` }));
  const text = JSON.stringify({ jsonrpc: '2.0', id: 1, result: logs });
  const call = { jsonrpc: '2.0', id: 1, method: 'eth_getLogs', params: [] };
  const pieces = (body: string) => {
    const bytes = Buffer.from(body);
    return [bytes.subarray(0, 300), bytes.subarray(300, 100_000), bytes.subarray(100_000)];
  };

  it('reads the elements that came before the body breaks off, then fails it as a body that is not JSON, naming where', async () => {
    const bad = text.replace('"logIndex":"0x7d0"', '"logIndex":0x7d0');
    const http = client(await chunkedServer(pieces(bad)));
    const read: number[] = [];
    const answer = http.postJson(call, undefined, { resultElement: (_log, i) => read.push(i) });
    await expect(answer).rejects.toThrow(
      /HTTP 200 with a body that is not JSON \(.*in the result's elements from byte \d+\), starting "\{\\"jsonrpc\\":\\"2\.0\\",\\"id\\":1,\\"result\\":\[/,
    );
    await expect(answer).rejects.toMatchObject({ name: 'RetriesExhaustedError', lastError: { name: 'UnparsableBodyError', retryable: true } });
    // the group with the bad element is never given to the reader
    expect(read.length).toBeGreaterThan(0);
    expect(read.length).toBeLessThan(2000);
    expect(http.counters.errors).toEqual({ 'bad-body': 1 });
  });

  it('stops reading an answer with no declared length as soon as it passes the size limit', async () => {
    const http = client(await chunkedServer(pieces(text)), 1, 150_000);
    const read: number[] = [];
    await expect(http.postJson(call, undefined, { resultElement: (_log, i) => read.push(i) })).rejects.toMatchObject({ name: 'ResponseTooLargeError' });
    // of 3,000 logs in about 290 KB, those of the first 150,000 bytes at most (how many depends on where the body's reads
    // fall: 1,524 in one run, so the bound is counted from the text, not guessed)
    let end = text.indexOf('[') + 1;
    let within = 0;
    for (const log of logs) {
      end += JSON.stringify(log).length;
      if (end <= 150_000) within++;
      end += 1;
    }
    expect(within).toBeLessThan(logs.length);
    expect(read.length).toBeLessThanOrEqual(within);
    expect(http.counters.errors).toEqual({ 'too-large': 1 });
  });

  it('answers a JSON-RPC error of a call that reads its elements as it came', async () => {
    const error = { jsonrpc: '2.0', id: 1, error: { code: -32005, message: 'query returned more than 10000 results', data: 'x'.repeat(500) } };
    const http = client(await chunkedServer(pieces(JSON.stringify(error))));
    expect(await http.postJson(call, undefined, { resultElement: () => 1 })).toEqual(error);
  });
});

describe('HTTP bodies of a known length', () => {
  it('reads each of many large answers exactly, in turn and at once, none holding bytes of another', async () => {
    // answer n: n hundred-odd values, so that each is shorter or longer than the one whose memory it may get
    const answerOf = (n: number) => ({ n, values: Array.from({ length: 2000 + ((n * 7919) % 5000) }, (_, i) => `0x${(n * 100_000 + i).toString(16).padStart(64, '0')}`) });
    const server = createServer((req, res) => {
      const body = Buffer.from(JSON.stringify(answerOf(Number(req.url!.split('/').pop()))));
      res.writeHead(200, { 'content-type': 'application/json', 'content-length': String(body.length) });
      // in two parts, apart: the answers read at once are read at the same time
      res.write(body.subarray(0, 1000));
      setTimeout(() => res.end(body.subarray(1000)), 30);
    });
    await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
    later(() => new Promise<void>((resolve) => server.close(() => resolve())));
    const http = client(`http://127.0.0.1:${(server.address() as AddressInfo).port}/key`, 8);
    expect(Buffer.byteLength(JSON.stringify(answerOf(1)))).toBeGreaterThan(64 * 1024);
    for (let n = 1; n <= 6; n++) expect(await http.getJson(`/${n}`)).toEqual(answerOf(n));
    const at = Array.from({ length: 8 }, (_, k) => 10 + k);
    expect(await Promise.all(at.map((n) => http.getJson(`/${n}`)))).toEqual(at.map(answerOf));
  });
});
