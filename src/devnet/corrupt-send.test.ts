import { createServer } from 'node:http';
import type { AddressInfo } from 'node:net';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { CorruptedAnswer } from './corruptor.ts';
import { sendCorrupted } from './corrupt-send.ts';

describe('sendCorrupted', () => {
  let answer: CorruptedAnswer;
  const server = createServer((_req, res) => void sendCorrupted(res, answer));
  let origin: string;
  beforeAll(async () => {
    await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
    origin = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
  });
  afterAll(() => new Promise<void>((resolve) => server.close(() => resolve())));

  it.each([
    ['a page', { count: 1, tokenTransfers: [{ value: '1' }] }],
    ['a JSON-RPC answer', { jsonrpc: '2.0', id: 1, result: [{ logIndex: '0x0' }] }],
    [
      'a JSON-RPC batch',
      [
        { jsonrpc: '2.0', id: 1, result: [] },
        { jsonrpc: '2.0', id: 2, result: ['0x1'] },
      ],
    ],
  ])('pads %s to exactly the bytes asked, still JSON, its last object holding the padding', async (_, body) => {
    const page = JSON.stringify(body);
    answer = { type: 'huge', page, bytes: 200_000 };
    const res = await fetch(origin);
    const text = await res.text();
    expect(res.status).toBe(200);
    expect(res.headers.get('content-length')).toBeNull();
    expect(Buffer.byteLength(text)).toBe(200_000);
    const parsed = JSON.parse(text) as unknown;
    const last = (Array.isArray(parsed) ? parsed.at(-1) : parsed) as { padding: string };
    expect(last.padding).toMatch(/^x+$/);
    const { padding: _padding, ...rest } = last;
    expect(Array.isArray(parsed) ? [...parsed.slice(0, -1), rest] : rest).toEqual(body);
  });

  it('answers an HTML page as text/html with status 200', async () => {
    answer = { type: 'html', text: '<!DOCTYPE html><p>502</p>' };
    const res = await fetch(origin);
    expect(res.status).toBe(200);
    expect(res.headers.get('content-type')).toMatch(/^text\/html/);
    expect(await res.text()).toBe('<!DOCTYPE html><p>502</p>');
  });
});
