import { readFileSync } from 'node:fs';
import { describe, expect, it } from 'vitest';
import type { HeaderJson } from '../src/eth/header-fields.ts';
import { FIXTURE_DIR } from '../test/helpers/fixtures.ts';
import { formatHeaderHashing, measureHeaderVerification } from './header-hashing.ts';

const headers = readFileSync(`${FIXTURE_DIR}/headers.jsonl`, 'utf8')
  .split('\n')
  .filter(Boolean)
  .map((line) => JSON.parse(line) as HeaderJson);

/** A clock that moves `step` seconds each time it is read. */
const ticking = (step: number) => {
  let t = 0;
  return () => (t += step);
};

describe('measureHeaderVerification', () => {
  it('verifies whole batches until the time is up, and divides by the time taken', () => {
    const figures = measureHeaderVerification(headers, { minSeconds: 3, batch: 50, now: ticking(1) });
    expect(figures).toEqual({ headers: 150, seconds: 3, headersPerSecond: 50 });
  });

  it('goes round the headers more than once', () => {
    expect(measureHeaderVerification(headers.slice(0, 2), { minSeconds: 1, batch: 7, now: ticking(1) }).headers).toBe(7);
  });

  it('stops at a header that does not verify, naming the block', () => {
    const altered = { ...headers[3]!, gasUsed: '0x1' };
    expect(() => measureHeaderVerification([headers[0]!, altered], { minSeconds: 1, batch: 2, now: ticking(1) })).toThrow(
      `block ${altered.number} (${altered.hash}) does not hash to its hash`,
    );
  });

  it('refuses to measure no headers', () => {
    expect(() => measureHeaderVerification([])).toThrow(/no headers to measure/);
  });
});

describe('formatHeaderHashing', () => {
  it('prints the rate and the libraries that do the work', () => {
    expect(formatHeaderHashing({ headers: 71_641, seconds: 2, headersPerSecond: 35_820.6 })).toBe('header verification: 35,821 headers/s (hash-wasm keccak, RLP written in place)');
  });
});
