import { describe, expect, it } from 'vitest';
import { collectBody, createBodyBuffers, declaredLength } from './body-bytes.ts';

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

describe('createBodyBuffers', () => {
  // sizes in units of 16 KB: 100 units are 1.6 MB (a 2 MB buffer), above the smallest size kept (1 MB)
  const UNIT = 16 * 1024;

  it('lends the memory of a body given back to the next body it fits, and never to two bodies at once', () => {
    const buffers = createBodyBuffers(64 << 20);
    const a = buffers.take(100 * UNIT);
    const b = buffers.take(100 * UNIT);
    expect(a.length).toBe(100 * UNIT);
    expect(b.buffer).not.toBe(a.buffer);
    buffers.give([a]);
    const c = buffers.take(120 * UNIT);
    expect(c.buffer).toBe(a.buffer);
    expect(c.length).toBe(120 * UNIT);
    // lent again: not lent a third time until given back
    expect(buffers.take(100 * UNIT).buffer).not.toBe(a.buffer);
    // a body larger than any free buffer gets memory of its own, and a much smaller one does not take a large one
    buffers.give([b]);
    expect(buffers.take(300 * UNIT).buffer).not.toBe(b.buffer);
    const large = buffers.take(600 * UNIT);
    buffers.give([large]);
    expect(buffers.take(70 * UNIT).buffer).not.toBe(large.buffer);
    expect(buffers.take(520 * UNIT).buffer).toBe(large.buffer);
  });

  it('keeps at most the bytes it was given of free buffers, and none for small bodies', () => {
    const buffers = createBodyBuffers(4 << 20);
    const lent = [buffers.take(100 * UNIT), buffers.take(100 * UNIT), buffers.take(100 * UNIT)];
    buffers.give(lent);
    // two buffers of 2 MB kept, the third left to the collector
    const again = [buffers.take(100 * UNIT), buffers.take(100 * UNIT), buffers.take(100 * UNIT)].map((x) => x.buffer);
    expect(again.filter((m) => lent.some((l) => l.buffer === m))).toHaveLength(2);
    const small = buffers.take(60 * UNIT);
    buffers.give([small]);
    expect(buffers.take(60 * UNIT).buffer).not.toBe(small.buffer);
  });

  it('gives back only what it lent, once, whatever pieces a body came in', async () => {
    const buffers = createBodyBuffers(8 << 20);
    const big = 'x'.repeat(70 * UNIT);
    // a body longer than it declared: the lent buffer holds its start, the rest comes in pieces of their own
    const body = await collectBody(pieces(big, 'tail'), big.length, 8 << 20, buffers);
    expect(text(body)).toBe(`${big}tail`);
    buffers.give(body!);
    buffers.give(body!);
    const first = buffers.take(70 * UNIT);
    expect(first.buffer).toBe(body![0]!.buffer);
    expect(buffers.take(70 * UNIT).buffer).not.toBe(first.buffer);
  });
});
