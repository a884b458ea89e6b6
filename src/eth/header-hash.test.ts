import { readFileSync } from 'node:fs';
import { describe, expect, it } from 'vitest';
import { computeHeaderHash, HeaderEncodingError, verifyHeaderHash } from './header-hash.ts';
import { toErigonHeader, type HeaderJson } from './header-fields.ts';
import { FIXTURE_DIR } from '../../test/helpers/fixtures.ts';

const headers = readFileSync(`${FIXTURE_DIR}/headers.jsonl`, 'utf8')
  .split('\n')
  .filter(Boolean)
  .map((line) => JSON.parse(line) as HeaderJson);

describe('header hash', () => {
  it('reproduces the hash of every mainnet header from genesis to Cancun', () => {
    expect(headers.length).toBe(35);
    for (const h of headers) {
      expect(computeHeaderHash(h), `block ${h.number}`).toBe(h.hash);
    }
  });

  it('detects a header whose fields were changed', () => {
    const h = { ...headers[10]!, gasUsed: '0x1' };
    const result = verifyHeaderHash(h);
    expect(result.ok).toBe(false);
    expect(result.computed).not.toBe(h.hash);
  });

  it('treats a missing fork key as null', () => {
    const pre = headers[3]!;
    const { withdrawalsRoot: _w, blockAccessListHash: _b, ...partial } = pre;
    expect(computeHeaderHash(partial)).toBe(pre.hash);
  });

  it('rejects a fork field set after a null one', () => {
    const h = { ...headers[0]!, withdrawalsRoot: `0x${'11'.repeat(32)}` };
    expect(() => computeHeaderHash(h)).toThrow(HeaderEncodingError);
    expect(() => computeHeaderHash(h)).toThrow(/baseFeePerGas: is null but a later fork field is set/);
  });

  it('rejects a hash of the wrong size and a non-minimal quantity', () => {
    expect(() => computeHeaderHash({ ...headers[0]!, stateRoot: '0x1234' })).toThrow(/stateRoot: expected 32 bytes/);
    expect(() => computeHeaderHash({ ...headers[0]!, gasUsed: '0x00' })).toThrow(/gasUsed: expected a minimal/);
  });
});

describe('toErigonHeader', () => {
  it('serves exactly Erigon’s key set, null for absent fork keys', () => {
    const { requestsHash: _r, ...rest } = headers[0]!;
    const out = toErigonHeader({ ...rest, size: '0x21c', totalDifficulty: '0x1' });
    expect(Object.keys(out)).toEqual(Object.keys(headers[0]!));
    expect(out.requestsHash).toBeNull();
    expect(out).toEqual(headers[0]);
  });

  it('names the field that is missing', () => {
    const { stateRoot: _s, ...rest } = headers[0]!;
    expect(() => toErigonHeader(rest)).toThrow(/stateRoot/);
  });
});
