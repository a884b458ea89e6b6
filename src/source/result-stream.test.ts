import { describe, expect, it } from 'vitest';
import { createRng } from '../devnet/rng.ts';
import { parseJsonBody, readResultElements } from './json-body.ts';
import { jsonText } from './json-text.ts';
import { createResultStream, type StreamEnd } from './result-stream.ts';

/** Strings that look like structure: brackets, commas, quotes and backslashes escaped, non-ASCII, a unicode escape. */
const TRICKY = ['],[', '{"a":[1,2]}', 'a\\"b', '\\\\', '\\\\"', 'x,y', 'Éther ✓', '🦄', '名前 €', '\u0000', '"]}', '\\'];

/** Each element as the reader saw it, and its index: what a call's reader is given. */
const tag = (v: unknown, i: number) => ({ i, v });

/** The body pushed in chunks of `size` bytes (the last ones cut by `cuts`, when given), then its end. */
function streamed(body: Buffer, size: number): StreamEnd {
  const stream = createResultStream(tag);
  for (let i = 0; i < body.length; i += size) stream.push(body.subarray(i, i + size));
  return stream.end();
}

/** What a body gives read as it comes (or parsed by `parseJsonBody` when handed back whole), or that it fails. */
function outcome(body: Buffer, size: number): { value: unknown } | { error: true } {
  try {
    const end = streamed(body, size);
    return { value: 'value' in end ? end.value : parseJsonBody(end.pieces, tag) };
  } catch {
    return { error: true };
  }
}

/** What `JSON.parse` of the body's text gives, each result element read by `tag`; or that it fails. */
function expected(body: Buffer): { value: unknown } | { error: true } {
  try {
    return { value: readResultElements(JSON.parse(jsonText([body])), tag) };
  } catch {
    return { error: true };
  }
}

const log = (i: number) => ({
  address: `0x${(i * 7919).toString(16).padStart(40, '0')}`,
  topics: [`0x${i.toString(16).padStart(64, '0')}`, TRICKY[i % TRICKY.length]],
  data: TRICKY[(i * 7) % TRICKY.length],
  nested: i % 40 === 0 ? [TRICKY, { deep: [[], [{}]] }] : [],
  removed: false,
});
const answer = (n: number) => ({ jsonrpc: '2.0', id: 7, result: Array.from({ length: n }, (_, i) => log(i)) });

describe('createResultStream', () => {
  it.each([
    ['a large answer', JSON.stringify(answer(3000))],
    ['an answer laid out with spaces and new lines', JSON.stringify(answer(400), null, 2)],
    ['an answer with its id first and keys after the result', `{ "id" : "a-1" ,"jsonrpc":"2.0", "result": ${JSON.stringify(answer(500).result)} , "extra": [1, {"b": "]"}]}`],
    ['an answer whose result comes first', `{"result":${JSON.stringify(answer(300).result)},"id":1}`],
    ['an answer of one element', `{"jsonrpc":"2.0","id":1,"result":[${JSON.stringify(log(5))}]}`],
    ['an empty result with spaces in it', '{"jsonrpc":"2.0","id":1,"result":[ \n ] }'],
    ['an answer shorter than its head could be', '{"jsonrpc":"2.0","id":1,"result":[1]}'],
    ['a result of numbers and nulls', `{"jsonrpc":"2.0","id":1,"result":[${Array.from({ length: 30_000 }, (_, i) => (i % 3 ? i : 'null')).join(',')}]}`],
  ])('reads %s as JSON.parse of its text gives, however it is cut into chunks', (_name, text) => {
    const body = Buffer.from(text, 'utf8');
    const want = expected(body);
    expect('value' in want).toBe(true);
    for (const size of [body.length, 65_536, 70_001, 4093, 1000, 7, 1]) {
      if (size < 7 && body.length > 100_000) continue;
      const end = streamed(body, size);
      expect('value' in end && { value: end.value }).toEqual(want);
    }
  });

  it('reads the last of two results, as JSON.parse takes the last value of a key given twice', () => {
    const body = Buffer.from(`{"jsonrpc":"2.0","id":1,"result":${JSON.stringify(answer(300).result)},"result":["a","b"]}`);
    const end = streamed(body, 4096);
    expect(end).toEqual({ value: { jsonrpc: '2.0', id: 1, result: [tag('a', 0), tag('b', 1)] } });
  });

  it("gives each element to the reader as its bytes come, before the body's end", () => {
    const body = Buffer.from(JSON.stringify(answer(3000)));
    const seen: number[] = [];
    const stream = createResultStream((_v, i) => seen.push(i));
    const half = body.length >> 1;
    for (let i = 0; i < half; i += 16_384) stream.push(body.subarray(i, Math.min(i + 16_384, half)));
    // all but the elements of the last group (about 32 KB) are read by the middle of the body
    expect(seen.length).toBeGreaterThan(1300);
    expect(seen).toEqual(seen.map((_s, i) => i));
    stream.push(body.subarray(half));
    expect(stream.end()).toEqual({ value: { jsonrpc: '2.0', id: 7, result: seen.map((_s, i) => i + 1) } });
    expect(seen.length).toBe(3000);
  });

  it.each([
    ['a JSON-RPC error', JSON.stringify({ jsonrpc: '2.0', id: 1, error: { code: -32005, message: 'query returned more than 10000 results', data: 'x'.repeat(300) } })],
    ['a batch of answers', JSON.stringify(Array.from({ length: 50 }, (_, i) => ({ jsonrpc: '2.0', id: i, result: [i] })))],
    ['a result that is not an array', JSON.stringify({ jsonrpc: '2.0', id: 1, result: { logs: answer(100).result } })],
    ['an answer with another key before its result', JSON.stringify({ jsonrpc: '2.0', id: 1, note: 'x', result: answer(100).result })],
    ['an HTML page', `<!DOCTYPE html><html><body>${'<p>502 Bad Gateway</p>'.repeat(40)}</body></html>`],
  ])('hands back %s whole, in the bytes that came', (_name, text) => {
    const body = Buffer.from(text);
    const end = streamed(body, 100);
    expect('pieces' in end && Buffer.concat(end.pieces).equals(body)).toBe(true);
  });

  it('fails a body that JSON.parse refuses, and reads one it takes as JSON.parse does (random damage)', () => {
    const rng = createRng(29);
    const body = Buffer.from(JSON.stringify(answer(400)), 'utf8');
    expect(body.length).toBeGreaterThan(65_536);
    const damage = [0x22, 0x5c, 0x2c, 0x5b, 0x5d, 0x7b, 0x7d, 0x20, 0x30, 0x61, 0xc3, 0xff];
    let failed = 0;
    for (let round = 0; round < 1000; round++) {
      const bad = Buffer.from(body);
      for (let k = 0, n = rng.int(1, 3); k < n; k++) {
        const at = rng.int(0, bad.length - 1);
        if (rng.chance(0.25)) bad.copyWithin(at, at + 1);
        else bad[at] = rng.pick(damage);
      }
      const want = expected(bad);
      const got = outcome(bad, [bad.length, 4093, 65_536][round % 3]!);
      expect(got).toEqual(want);
      if ('error' in want) failed++;
    }
    // most damage breaks the body; some leaves valid JSON
    expect(failed).toBeGreaterThan(300);
    expect(failed).toBeLessThan(1000);
  });

  it('fails a body cut short, saying it ended inside the result', () => {
    const body = Buffer.from(JSON.stringify(answer(300)));
    const stream = createResultStream(tag);
    stream.push(body.subarray(0, body.length - 5000));
    expect(() => stream.end()).toThrow(/Unexpected end of JSON input: the body ended inside the result's array, after byte \d+/);
    expect(stream.start()).toBe(body.toString('utf8', 0, 200));
  });

  it('names the byte where an element is not JSON', () => {
    const text = JSON.stringify(answer(3000));
    const at = text.indexOf('"removed":false', 90_000);
    expect(at).toBeGreaterThan(0);
    const bad = Buffer.from(`${text.slice(0, at)}"removed":nope${text.slice(at + '"removed":false'.length)}`);
    expect(() => streamed(bad, 4096)).toThrow(/in the result's elements from byte \d+/);
  });
});
