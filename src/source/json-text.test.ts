import { describe, expect, it } from 'vitest';
import { jsonText } from './json-text.ts';

/** The body cut into chunks of `size` bytes, as a socket may deliver it (characters split across chunks). */
function chunked(body: Buffer, size: number): Buffer[] {
  const out: Buffer[] = [];
  for (let i = 0; i < body.length; i += size) out.push(body.subarray(i, i + size));
  return out;
}

const isOneByte = (s: string) => [...s].every((c) => c.charCodeAt(0) < 0x80);

describe('jsonText', () => {
  const value = {
    contractName: 'Éther Synthétique ✓',
    contractSymbol: 'ÉSYN',
    emoji: 'a🦄b',
    tokenTransfers: Array.from({ length: 300 }, (_, i) => ({ value: String(i), blockHash: `0x${'ab'.repeat(32)}`, note: i % 97 === 0 ? '名前 €' : 'ascii' })),
  };
  const body = Buffer.from(JSON.stringify(value), 'utf8');

  it('parses to what the UTF-8 body parses to, however the body is cut into chunks', () => {
    for (const size of [1, 2, 3, 7, 4096, 5000, body.length]) {
      const text = jsonText(chunked(body, size));
      expect(JSON.parse(text)).toEqual(value);
      expect(isOneByte(text)).toBe(true);
    }
  });

  it('keeps an ASCII body as it is, one chunk or several', () => {
    const ascii = Buffer.from('{"a":"0x12","b":[1,2,3]}');
    expect(jsonText([ascii])).toBe(ascii.toString());
    expect(jsonText(chunked(ascii, 5))).toBe(ascii.toString());
  });

  it('writes characters beyond U+FFFF as their two escapes', () => {
    expect(jsonText([Buffer.from('"🦄"')])).toBe('"\\ud83e\\udd84"');
  });

  it('turns malformed UTF-8 into U+FFFD, as decoding does', () => {
    const broken = Buffer.concat([Buffer.from('{"n":"a'), Buffer.from([0xff, 0xc3]), Buffer.from('b"}')]);
    expect(JSON.parse(jsonText([broken]))).toEqual(JSON.parse(broken.toString('utf8')));
  });

  it('leaves a backslash before a non-ASCII character to the parser: invalid stays invalid, an escaped backslash stays one', () => {
    const invalid = Buffer.from('{"n":"\\é"}', 'utf8');
    expect(() => JSON.parse(jsonText([invalid]))).toThrow(SyntaxError);
    const escapedBackslash = Buffer.from('{"n":"\\\\é"}', 'utf8');
    expect(JSON.parse(jsonText([escapedBackslash]))).toEqual({ n: '\\é' });
  });

  it('leaves non-ASCII outside strings invalid', () => {
    expect(() => JSON.parse(jsonText([Buffer.from('{é:1}', 'utf8')]))).toThrow(SyntaxError);
  });

  it('reads an empty body as empty text', () => {
    expect(jsonText([])).toBe('');
  });
});
