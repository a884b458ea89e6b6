import { describe, expect, it } from 'vitest';
import { collectBody, declaredLength } from './body-bytes.ts';

async function* pieces(...parts: string[]): AsyncGenerator<Buffer> {
  for (const p of parts) yield Buffer.from(p);
}
const text = (body: Buffer[] | undefined) => (body ? Buffer.concat(body).toString() : undefined);

describe('collectBody', () => {
  it('copies a body of its declared length into one buffer', async () => {
    const body = await collectBody(pieces('{"a":', '[1,2', ']}'), 12, 1000);
    expect(body).toHaveLength(1);
    expect(text(body)).toBe('{"a":[1,2]}');
  });

  it('keeps the bytes of a body shorter than it declared, and nothing past them', async () => {
    const body = await collectBody(pieces('abc', 'de'), 100, 1000);
    expect(body).toHaveLength(1);
    expect(text(body)).toBe('abcde');
  });

  it('keeps a body longer than it declared whole, in order', async () => {
    expect(text(await collectBody(pieces('abc', 'def', 'gh'), 4, 1000))).toBe('abcdefgh');
    expect(text(await collectBody(pieces('abcdef', 'gh'), 4, 1000))).toBe('abcdefgh');
  });

  it('keeps a body of unknown length in pieces', async () => {
    const body = await collectBody(pieces('ab', 'cd'), undefined, 1000);
    expect(body).toHaveLength(2);
    expect(text(body)).toBe('abcd');
    expect(await collectBody(pieces(), undefined, 1000)).toEqual([]);
    expect(await collectBody(pieces(), 0, 1000)).toEqual([]);
  });

  it('stops at the first byte past the limit, whatever the body declared', async () => {
    expect(await collectBody(pieces('abc', 'def'), undefined, 5)).toBeUndefined();
    expect(await collectBody(pieces('abc', 'def'), 4, 5)).toBeUndefined();
    expect(text(await collectBody(pieces('abc', 'de'), 5, 5))).toBe('abcde');
  });
});

describe('declaredLength', () => {
  it('reads a content-length of digits, and nothing else', () => {
    expect(declaredLength('421337')).toBe(421_337);
    expect(declaredLength('0')).toBe(0);
    for (const bad of [undefined, '', '-1', '1e3', ' 12', '12 ', ['1', '2'], '9'.repeat(16)]) expect(declaredLength(bad), String(bad)).toBeUndefined();
  });
});
