import { readFileSync } from 'node:fs';
import { describe, expect, it } from 'vitest';
import type { HeaderJson } from '../eth/header-fields.ts';
import { FIXTURE_DIR } from '../../test/helpers/fixtures.ts';
import { BadResponseError } from './errors.ts';
import { checkHeader, createHeaderChecker, type ExpectedHeader } from './header-check.ts';

const headers = readFileSync(`${FIXTURE_DIR}/headers.jsonl`, 'utf8')
  .split('\n')
  .filter(Boolean)
  .map((line) => JSON.parse(line) as HeaderJson);

/** What the transfers of a block would say about it. */
function expectedOf(h: HeaderJson) {
  return { hash: h.hash, number: Number(BigInt(h.number!)), timestamp: new Date(Number(BigInt(h.timestamp!)) * 1000).toISOString() };
}

function problemsOf(raw: unknown, expected: ExpectedHeader): string[] {
  try {
    checkHeader(raw, expected);
  } catch (err) {
    expect(err).toBeInstanceOf(BadResponseError);
    return [...(err as BadResponseError).problems];
  }
  throw new Error('the header was accepted');
}

const cancun = headers.find((h) => h.parentBeaconBlockRoot !== null)!;
const london = headers.find((h) => h.baseFeePerGas !== null && h.withdrawalsRoot === null)!;

describe('checkHeader', () => {
  it('verifies all 35 headers of the mainnet fixture', () => {
    expect(headers).toHaveLength(35);
    for (const h of headers) {
      const checked = checkHeader(h, expectedOf(h));
      expect(checked, `block ${h.number}`).toEqual({ header: h, extra: null, hashVerified: true });
    }
  });

  it('fails a header with a changed field, naming the block', () => {
    const changed = { ...cancun, gasUsed: '0x1' };
    const [problem] = problemsOf(changed, expectedOf(cancun));
    expect(problem).toContain(`block ${expectedOf(cancun).number} (${cancun.hash}), header: keccak256 of its RLP fields is 0x`);
    expect(problem).toContain('a field was altered');
  });

  it('names the contracts whose transfers point at the block, when given', () => {
    const contract = `0x${'ab'.repeat(20)}`;
    const [problem] = problemsOf({ ...cancun, gasUsed: '0x1' }, { ...expectedOf(cancun), contracts: [contract] });
    expect(problem).toMatch(new RegExp(`^contract ${contract}, block ${expectedOf(cancun).number} \\(${cancun.hash}\\), header: keccak256`));
  });

  it('fails a header that is not the one asked for, or does not match the transfers', () => {
    const other = headers[1]!;
    expect(problemsOf(other, expectedOf(cancun))).toEqual([
      expect.stringContaining(`header.hash: expected the hash asked for, ${cancun.hash}, got "${other.hash}"`),
      expect.stringContaining(`header.number: expected ${expectedOf(cancun).number} (the block of the transfers), got ${other.number}`),
      expect.stringContaining(`header.timestamp: expected ${expectedOf(cancun).timestamp} (the transfers' block time), got ${other.timestamp}`),
    ]);
    const wrongTime = { ...expectedOf(cancun), timestamp: '2000-01-01T00:00:00.000Z' };
    expect(problemsOf(cancun, wrongTime)).toEqual([expect.stringContaining('header.timestamp: expected 2000-01-01T00:00:00.000Z')]);
  });

  it('fails malformed fields, each named', () => {
    const bad = { ...london, miner: '0x1234', number: '0x01', logsBloom: null, stateRoot: 5 };
    const problems = problemsOf(bad, expectedOf(london));
    expect(problems.map((p) => p.split(': ')[0])).toEqual(
      ['miner', 'stateRoot', 'logsBloom', 'number'].map((f) => `block ${expectedOf(london).number} (${london.hash}), header.${f}`),
    );
    expect(problems[0]).toContain('expected 20 bytes of 0x hex, got "0x1234"');
    expect(problems[3]).toContain('expected a minimal 0x hex quantity, got "0x01"');
  });

  it('fails a value that is not an object', () => {
    for (const raw of [null, 'header', [cancun]]) {
      expect(problemsOf(raw, expectedOf(cancun))).toEqual([expect.stringContaining('header: expected a JSON object')]);
    }
  });

  it('treats a missing fork key as null', () => {
    const { withdrawalsRoot: _w, requestsHash: _r, blockAccessListHash: _b, ...partial } = london;
    const checked = checkHeader(partial, expectedOf(london));
    expect(checked.header).toEqual(london);
    expect(checked.header.withdrawalsRoot).toBeNull();
    expect(checked.hashVerified).toBe(true);
  });

  it('fails a fork field set after a null one', () => {
    const gap = { ...london, baseFeePerGas: null, withdrawalsRoot: cancun.withdrawalsRoot };
    expect(problemsOf(gap, expectedOf(london))).toEqual([expect.stringContaining('header.baseFeePerGas: header field baseFeePerGas: is null but a later fork field is set')]);
  });

  it('keeps unknown keys in extra, and still verifies the hash', () => {
    const withExtra = { ...cancun, slotNumber: '0x10', AuRaStep: 7 };
    const checked = checkHeader(withExtra, expectedOf(cancun));
    expect(checked.extra).toEqual({ slotNumber: '0x10', AuRaStep: 7 });
    expect(checked.header).toEqual(cancun);
    expect(checked.hashVerified).toBe(true);
  });

  it('with unknown keys, a hash mismatch is kept unverified instead of failing', () => {
    const withExtra = { ...cancun, gasUsed: '0x1', slotNumber: '0x10' };
    const checked = checkHeader(withExtra, expectedOf(cancun));
    expect(checked.hashVerified).toBe(false);
    expect(checked.extra).toEqual({ slotNumber: '0x10' });
  });
});

describe('createHeaderChecker', () => {
  it('passes the same header object again, verified, and still checks it against each block it is asked for', () => {
    const check = createHeaderChecker();
    expect(check(london, expectedOf(london))).toEqual({ header: london, extra: null, hashVerified: true });
    expect(check(london, expectedOf(london))).toEqual({ header: london, extra: null, hashVerified: true });
    // the same object for another block: the hash asked for, the number and the time are compared every time
    expect(() => check(london, { ...expectedOf(london), number: expectedOf(london).number + 1 })).toThrow(/header\.number: expected/);
    expect(() => check(london, { ...expectedOf(cancun) })).toThrow(/header\.hash: expected the hash asked for/);
  });

  it('hashes a header object again when it was not verified: another object with a changed field fails', () => {
    const check = createHeaderChecker();
    check(cancun, expectedOf(cancun));
    // a copy is another object: hashed, and the altered field is caught
    const altered = { ...cancun, gasUsed: '0x1' };
    expect(() => check(altered, expectedOf(cancun))).toThrow(/keccak256 of its RLP fields is 0x[0-9a-f]{64}, not the block hash/);
    // unknown keys and a hash that does not verify: kept unverified, and not remembered as verified
    const unknownKey = { ...cancun, gasUsed: '0x1', slotNumber: '0x5' };
    expect(check(unknownKey, expectedOf(cancun)).hashVerified).toBe(false);
    expect(check(unknownKey, expectedOf(cancun)).hashVerified).toBe(false);
  });
});
