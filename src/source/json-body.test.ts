import { describe, expect, it, vi } from 'vitest';
import { createRng } from '../devnet/rng.ts';
import { parseJsonBody } from './json-body.ts';
import { jsonText } from './json-text.ts';

/** The body cut into chunks of `size` bytes, as a socket may deliver it (characters split across chunks). */
function chunked(body: Buffer, size: number): Buffer[] {
  const out: Buffer[] = [];
  for (let i = 0; i < body.length; i += size) out.push(body.subarray(i, i + size));
  return out;
}

/** What the body parses to as one text; or the error it fails with. */
function whole(body: Buffer): { value: unknown } | { error: string } {
  try {
    return { value: JSON.parse(jsonText([body])) };
  } catch (err) {
    return { error: (err as Error).name };
  }
}
function split(chunks: Buffer[]): { value: unknown } | { error: string } {
  try {
    return { value: parseJsonBody(chunks) };
  } catch (err) {
    return { error: (err as Error).name };
  }
}

/** Strings that look like structure: brackets, commas, quotes and backslashes escaped, non-ASCII, a unicode escape. */
const TRICKY = ['],[', '{"a":[1,2]}', 'a\\"b', '\\\\', '\\\\"', 'x,y', 'Éther ✓', '🦄', '名前 €', '\u0000', '"]}'];

describe('parseJsonBody', () => {
  const rng = createRng(11);
  const row = (i: number) => ({
    fromAddress: `0x${(i * 7919).toString(16).padStart(40, '0')}`,
    value: String(i * 1_000_003),
    blockNumber: 18_000_000 + i,
    note: TRICKY[i % TRICKY.length],
    nested: i % 50 === 0 ? [TRICKY, { deep: [[], [{}]] }] : [],
  });
  const page = { contractName: 'Éther Synthétique ✓', count: 3000, nextPageKey: 'p1.abc', tokenTransfers: Array.from({ length: 3000 }, (_, i) => row(i)) };
  const rpc = { jsonrpc: '2.0', id: 7, result: Array.from({ length: 2500 }, (_, i) => ({ ...row(i), topics: [TRICKY[i % 3], '0xdd'] })) };
  const batch = Array.from({ length: 400 }, (_, i) => ({ jsonrpc: '2.0', id: i, result: { hash: `0x${i}`, extraData: TRICKY[i % TRICKY.length], logsBloom: '0'.repeat(512) } }));
  const twoArrays = { a: Array.from({ length: 2000 }, (_, i) => i), b: { c: Array.from({ length: 1500 }, (_, i) => row(i)) }, d: [[[]]] };

  it.each([
    ['a builder page', page],
    ['an eth_getLogs answer', rpc],
    ['a batch of header answers', batch],
    ['a body with two large arrays and small ones', twoArrays],
  ])('parses %s to what JSON.parse of its text gives, however it is cut into chunks', (_name, value) => {
    const body = Buffer.from(JSON.stringify(value), 'utf8');
    expect(body.length).toBeGreaterThan(128 * 1024);
    for (const size of [body.length, 65_536, 4093, 1000]) expect(parseJsonBody(chunked(body, size))).toEqual(value);
  });

  it('never makes a text of the whole of a large body: no text it parses reaches 128 KB', () => {
    for (const value of [page, rpc, batch, twoArrays]) {
      const body = Buffer.from(JSON.stringify(value), 'utf8');
      const parse = vi.spyOn(JSON, 'parse');
      try {
        expect(parseJsonBody(chunked(body, 65_536))).toEqual(value);
        const longest = Math.max(...parse.mock.calls.map(([text]) => text.length));
        expect(longest).toBeLessThan(128 * 1024);
        expect(parse.mock.calls.length).toBeGreaterThan(2);
      } finally {
        parse.mockRestore();
      }
    }
  });

  it('leaves the body as it was, whether it parses or not', () => {
    for (const value of [page, rpc, batch, twoArrays]) {
      const body = Buffer.from(JSON.stringify(value, null, 1), 'utf8');
      const before = Buffer.from(body);
      expect(parseJsonBody([body])).toEqual(value);
      expect(body.equals(before)).toBe(true);
      // a value made invalid in the last element: brackets still balanced, the groups before it parse, its group fails
      const text = body.toString('utf8');
      const at = text.lastIndexOf('": ') + 3;
      const broken = Buffer.from(`${text.slice(0, at)}x${text.slice(at)}`, 'utf8');
      expect(whole(broken)).toEqual({ error: 'SyntaxError' });
      const brokenBefore = Buffer.from(broken);
      const parse = vi.spyOn(JSON, 'parse');
      try {
        expect(() => parseJsonBody([broken])).toThrow(SyntaxError);
        // the split was tried: a part was parsed (the rest of the body, then the groups) before the whole body was
        expect(parse.mock.calls.length).toBeGreaterThanOrEqual(2);
      } finally {
        parse.mockRestore();
      }
      expect(broken.equals(brokenBefore)).toBe(true);
    }
  });

  it('parses the same value whatever whitespace surrounds the structure', () => {
    const body = Buffer.from(JSON.stringify(page, null, 2).replace(/\n/g, '\r\n\t'), 'utf8');
    expect(parseJsonBody([body])).toEqual(page);
  });

  it('fails a malformed large body as JSON.parse of its text fails, and never accepts one it would refuse', () => {
    const text = JSON.stringify(page);
    const cases = [
      text.slice(0, -1), // cut short
      text.slice(0, 200_000), // cut in the middle of the rows
      text.replace('"tokenTransfers":[', '"tokenTransfers":[,'), // an empty first element
      `${text.slice(0, -2)},]}`, // a trailing comma
      `${text.slice(0, -2)}, \n]}`, // a trailing comma and whitespace
      text.replace('},{', '},,{'), // an empty element inside
      text.replace('},{', '}]{'), // a bracket of the wrong kind
      text.replace('"tokenTransfers":[', '"tokenTransfers":{'),
      text.replace('"value":"', '"value":"\\'), // an escape that swallows the closing quote
      `${text} x`, // text after the value
      `<!DOCTYPE html>${text}`,
    ];
    for (const bad of cases) {
      const body = Buffer.from(bad, 'utf8');
      expect(split(chunked(body, 4096)), bad.slice(-40)).toEqual(whole(body));
      expect(split([body])).toEqual({ error: 'SyntaxError' });
    }
  });

  it('agrees with JSON.parse on random bodies cut at random', () => {
    for (let round = 0; round < 40; round++) {
      const rows = Array.from({ length: rng.int(0, 4000) }, (_, i) => (rng.int(0, 3) === 0 ? TRICKY[rng.int(0, TRICKY.length - 1)] : row(i)));
      const value = rng.int(0, 1) ? { head: TRICKY, rows, tail: rng.int(0, 9) } : rows;
      let text = JSON.stringify(value);
      // sometimes broken at a random byte
      if (rng.int(0, 4) === 0) text = text.slice(0, rng.int(0, text.length));
      const body = Buffer.from(text, 'utf8');
      expect(split(chunked(body, rng.int(1, 70_000)))).toEqual(whole(body));
    }
  });

  it("reads each element of an answer's result in order, small or large, however cut, and nothing else", () => {
    const tag = (v: unknown, i: number) => ({ i, v });
    const small = { jsonrpc: '2.0', id: 1, result: ['0x1', { a: [1] }, null] };
    const nested = { jsonrpc: '2.0', id: 2, other: { result: rpc.result }, more: Array.from({ length: 3000 }, (_, i) => i) };
    for (const value of [rpc, small]) {
      const body = Buffer.from(JSON.stringify(value), 'utf8');
      for (const size of [body.length, 65_536, 4093]) {
        expect(parseJsonBody(chunked(body, size), tag)).toEqual({ ...value, result: value.result.map(tag) });
      }
    }
    // a `result` that is not the answer's own, and a body that is one large array (a batch), are left as they are
    for (const value of [nested, batch, page, twoArrays]) {
      const body = Buffer.from(JSON.stringify(value), 'utf8');
      expect(parseJsonBody(chunked(body, 4093), tag)).toEqual(value);
    }
    expect(parseJsonBody([Buffer.from('{"result":7}')], tag)).toEqual({ result: 7 });
    // a small `result` in a body made large by another array is read too
    const beside = { id: 3, result: ['0x1', '0x2'], other: Array.from({ length: 3000 }, (_, i) => row(i)) };
    expect(parseJsonBody(chunked(Buffer.from(JSON.stringify(beside), 'utf8'), 4093), tag)).toEqual({ ...beside, result: beside.result.map(tag) });
  });

  it('refuses an array that ends in a comma where a group ends, as JSON.parse does', () => {
    const long = (c: string) => JSON.stringify(c.repeat(40_000));
    for (const end of [',]', ', ]', ',\n]']) {
      const body = Buffer.from(`{"id":1,"result":[${long('a')},${long('b')}${end}}`, 'utf8');
      expect(whole(body)).toEqual({ error: 'SyntaxError' });
      expect(split([body])).toEqual({ error: 'SyntaxError' });
      expect(() => parseJsonBody([body], (v) => v)).toThrow(SyntaxError);
    }
  });

  it('reads a large result group by group as it is parsed, not after the whole of it is parsed', () => {
    const body = Buffer.from(JSON.stringify(rpc), 'utf8');
    const parse = vi.spyOn(JSON, 'parse');
    try {
      // how many texts had been parsed when each element was read
      const parsedBefore: number[] = [];
      parseJsonBody([body], (v) => {
        parsedBefore.push(parse.mock.calls.length);
        return v;
      });
      expect(parsedBefore).toHaveLength(rpc.result.length);
      // the first elements were read after the rest of the body and their own group were parsed, the last ones
      // after more groups: parsing all of it first would have read every element after the last parse
      expect(parsedBefore[0]).toBe(2);
      expect(parsedBefore.at(-1)!).toBeGreaterThan(parsedBefore[0]! + 3);
      expect(parse.mock.calls.length).toBe(parsedBefore.at(-1));
    } finally {
      parse.mockRestore();
    }
  });

  it('parses a small body whole, as before', () => {
    expect(parseJsonBody([Buffer.from('{"a":"Éther ✓","b":[1,2,3]}')])).toEqual({ a: 'Éther ✓', b: [1, 2, 3] });
    expect(() => parseJsonBody([Buffer.from('{"a":')])).toThrow(SyntaxError);
  });
});
