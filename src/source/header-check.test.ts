import { describe, expect, it } from 'vitest';
import { ERIGON_HEADER_KEYS, type HeaderJson } from '../eth/header-fields.ts';
import { changedField, expectedOf, FIXTURE_DIR, readChainHeaders, readJsonLines } from '../../test/helpers/fixtures.ts';
import { BadResponseError } from './errors.ts';
import { checkHeader, createHeaderChecker, type ExpectedHeader } from './header-check.ts';

const headers = readJsonLines<HeaderJson>(`${FIXTURE_DIR}/headers.jsonl`);

function problemsOf(raw: unknown, expected: ExpectedHeader, chainId = 1): string[] {
  try {
    checkHeader(chainId, raw, expected);
  } catch (err) {
    expect(err).toBeInstanceOf(BadResponseError);
    return [...(err as BadResponseError).problems];
  }
  throw new Error('the header was accepted');
}

/** The real headers of other chains, each as its chain's node answered it (test/fixtures/chains). */
const chainHeaders = readChainHeaders();

const cancun = headers.find((h) => h.parentBeaconBlockRoot !== null)!;
const london = headers.find((h) => h.baseFeePerGas !== null && h.withdrawalsRoot === null)!;

describe('checkHeader', () => {
  it('verifies all 35 headers of the mainnet fixture', () => {
    expect(headers).toHaveLength(35);
    for (const h of headers) {
      const checked = checkHeader(1, h, expectedOf(h));
      expect(checked, `block ${h.number}`).toEqual({ header: h, extra: null, hashVerified: true, unverifiedReason: null });
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

  it('names the method that answered the header, erigon_getHeaderByHash unless told', () => {
    const message = (expected: ExpectedHeader) => {
      try {
        checkHeader(1, { ...cancun, gasUsed: '0x1' }, expected);
      } catch (err) {
        return (err as Error).message;
      }
      throw new Error('the header was accepted');
    };
    expect(message(expectedOf(cancun))).toMatch(/^erigon_getHeaderByHash answered a bad header for block /);
    expect(message({ ...expectedOf(cancun), method: 'eth_getBlockByHash' })).toMatch(/^eth_getBlockByHash answered a bad header for block /);
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
    const checked = checkHeader(1, partial, expectedOf(london));
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
    const checked = checkHeader(1, withExtra, expectedOf(cancun));
    expect(checked.extra).toEqual({ slotNumber: '0x10', AuRaStep: 7 });
    expect(checked.header).toEqual(cancun);
    expect(checked.hashVerified).toBe(true);
  });

  it('with a field the chain rule does not know, a hash mismatch is kept unverified, with a reason naming the field', () => {
    const withExtra = { ...cancun, gasUsed: '0x1', slotNumber: '0x10' };
    const checked = checkHeader(1, withExtra, expectedOf(cancun));
    expect(checked.hashVerified).toBe(false);
    expect(checked.unverifiedReason).toMatch(new RegExp(`^block ${expectedOf(cancun).number} does not hash to ${cancun.hash} by the ethereum rule: .*\\(slotNumber\\)`));
    expect(checked.extra).toEqual({ slotNumber: '0x10' });
  });

  it('fails a mismatch when the only extra keys are ones a node sends outside the hash (sizes, bodies)', () => {
    const withBody = { ...cancun, gasUsed: '0x1', size: '0x21c', totalDifficulty: '0x0', transactions: [], uncles: [] };
    expect(problemsOf(withBody, expectedOf(cancun))).toEqual([expect.stringContaining('header: keccak256 of its RLP fields is 0x')]);
  });
});

describe('checkHeader of other chains', () => {
  it('has real headers of seven chains, Gnosis AuRa among them', () => {
    expect(new Set(chainHeaders.map((c) => c.chainId))).toEqual(new Set([10, 56, 100, 137, 8453, 42161, 43114]));
    expect(chainHeaders.some((c) => c.chainId === 100 && 'step' in c.header)).toBe(true);
  });

  it.each(chainHeaders.map((c) => [c.chainId, Number(BigInt(c.header.number)), c] as const))('verifies chain %i block %i by its chain rule', (chainId, _block, { header }) => {
    const checked = checkHeader(chainId, header, expectedOf(header));
    expect(checked.hashVerified).toBe(true);
    expect(checked.unverifiedReason).toBeNull();
    expect(Object.keys(checked.header)).toEqual(ERIGON_HEADER_KEYS);
    // the family's own keys are kept beside the header (extra_fields)
    for (const key of Object.keys(header).filter((k) => !(ERIGON_HEADER_KEYS as readonly string[]).includes(k))) expect(checked.extra).toHaveProperty(key, header[key]);
  });

  it('fails each real header with one field changed, naming the block and its chain rule', () => {
    for (const { chainId, header } of chainHeaders) {
      const expected = expectedOf(header);
      for (const key of ['stateRoot', 'gasUsed', 'extraData', ...(chainId === 100 && 'step' in header ? ['step', 'signature'] : [])]) {
        const problems = problemsOf(changedField(header, key), expected, chainId);
        expect(problems, `chain ${chainId} ${key}`).toEqual([
          expect.stringMatching(
            new RegExp(
              `^block ${expected.number} \\(${header.hash}\\), header: keccak256 of its RLP fields is 0x[0-9a-f]{64}, not the block hash ${header.hash} \\(chain ${chainId}'s [a-z-]+ rule\\): a field was altered$`,
            ),
          ),
        ]);
      }
    }
  });

  it("takes Gnosis AuRa's step and signature in place of mixHash and nonce, stored as null", () => {
    const { header } = chainHeaders.find((c) => c.chainId === 100 && 'step' in c.header)!;
    const checked = checkHeader(100, header, expectedOf(header));
    expect(checked.header).toMatchObject({ mixHash: null, nonce: null, miner: header.miner, hash: header.hash });
    expect(checked.extra).toMatchObject({ step: header.step, signature: header.signature });
    // Erigon's names for them verify alike
    const { step, signature, ...rest } = header;
    const erigon = { ...rest, auraStep: `0x${(step as number).toString(16)}`, auraSeal: signature };
    expect(checkHeader(100, erigon, expectedOf(header))).toMatchObject({ hashVerified: true, header: { mixHash: null, nonce: null } });
  });

  it('requires mixHash and nonce where the chain rule has nothing in their place', () => {
    const { header } = chainHeaders.find((c) => c.chainId === 100 && 'step' in c.header)!;
    const expected = expectedOf(header);
    expect(problemsOf(header, expected, 1).map((p) => p.split(': ')[0])).toEqual([
      `block ${expected.number} (${header.hash}), header.mixHash`,
      `block ${expected.number} (${header.hash}), header.nonce`,
    ]);
    const { step: _s, signature: _g, ...withoutAura } = header;
    expect(() => checkHeader(100, withoutAura, expected)).toThrow(/header\.mixHash: expected 0x hex text, got/);
  });

  it('keeps a header of a chain without a known rule unverified, with the reason', () => {
    const { header } = chainHeaders.find((c) => c.chainId === 8453)!;
    const expected = expectedOf(header);
    expect(checkHeader(324, header, expected)).toMatchObject({ hashVerified: false, unverifiedReason: expect.stringMatching(/^zkSync Era block hashes are not keccak256/) });
    // the shape checks still hold: the hash asked for, the transfers' block and time
    expect(() => checkHeader(999_999, changedField(header, 'number'), expected)).toThrow(/header\.number: expected/);
    expect(checkHeader(999_999, changedField(header, 'stateRoot'), expected)).toMatchObject({
      hashVerified: false,
      unverifiedReason: "chain 999999's block hash rule is not one this exporter knows",
    });
  });

  it('does not verify a header by another chain rule: an Avalanche header checked as chain 1 is unverified, naming its fields', () => {
    const { header } = chainHeaders.find((c) => c.chainId === 43114)!;
    const checked = checkHeader(1, header, expectedOf(header));
    expect(checked.hashVerified).toBe(false);
    expect(checked.unverifiedReason).toContain('extDataHash');
  });
});

describe('createHeaderChecker', () => {
  it('passes the same header object again, verified, and still checks it against each block it is asked for', () => {
    const check = createHeaderChecker(1);
    expect(check(london, expectedOf(london))).toEqual({ header: london, extra: null, hashVerified: true, unverifiedReason: null });
    expect(check(london, expectedOf(london))).toEqual({ header: london, extra: null, hashVerified: true, unverifiedReason: null });
    // the same object for another block: the hash asked for, the number and the time are compared every time
    expect(() => check(london, { ...expectedOf(london), number: expectedOf(london).number + 1 })).toThrow(/header\.number: expected/);
    expect(() => check(london, { ...expectedOf(cancun) })).toThrow(/header\.hash: expected the hash asked for/);
  });

  it('answers a header object checked again against the same block from memory, reading none of its fields', () => {
    const check = createHeaderChecker(1);
    let reads = 0;
    const counted = new Proxy(london, {
      get(target, key, receiver) {
        reads++;
        return Reflect.get(target, key, receiver);
      },
    });
    const first = check(counted, expectedOf(london));
    expect(first).toEqual({ header: london, extra: null, hashVerified: true, unverifiedReason: null });
    expect(reads).toBeGreaterThan(20);
    reads = 0;
    // the same block (hash, number, time) with other contracts: the same answer, not a field read
    expect(check(counted, { ...expectedOf(london), contracts: ['0x00000000000000000000000000000000000000aa'] })).toBe(first);
    expect(reads).toBe(0);
    // the same block's time as other text is another block to compare with: every field is read again
    const sameSecond = expectedOf(london).timestamp.replace('.000Z', 'Z');
    expect(check(counted, { ...expectedOf(london), timestamp: sameSecond })).toEqual(first);
    expect(reads).toBeGreaterThan(20);
    expect(() => check(counted, { ...expectedOf(london), number: expectedOf(london).number + 1 })).toThrow(/header\.number: expected/);
    // another block by its hash alone (what it last passed against: the time as sameSecond): checked again, and refused
    expect(() => check(counted, { ...expectedOf(london), timestamp: sameSecond, hash: cancun.hash })).toThrow(/header\.hash: expected the hash asked for/);
  });

  it('hashes a header object again when it was not verified: another object with a changed field fails', () => {
    const check = createHeaderChecker(1);
    check(cancun, expectedOf(cancun));
    // a copy is another object: hashed, and the altered field is caught
    const altered = { ...cancun, gasUsed: '0x1' };
    expect(() => check(altered, expectedOf(cancun))).toThrow(/keccak256 of its RLP fields is 0x[0-9a-f]{64}, not the block hash/);
    // unknown keys and a hash that does not verify: kept unverified, and not remembered as verified (checked again
    // against the same second written otherwise, so not answered from memory: hashed again)
    const unknownKey = { ...cancun, gasUsed: '0x1', slotNumber: '0x5' };
    expect(check(unknownKey, expectedOf(cancun)).hashVerified).toBe(false);
    expect(check(unknownKey, { ...expectedOf(cancun), timestamp: expectedOf(cancun).timestamp.replace('.000Z', 'Z') }).hashVerified).toBe(false);
  });

  it("checks by its chain's rule", () => {
    const { header } = chainHeaders.find((c) => c.chainId === 43114)!;
    const expected = expectedOf(header);
    expect(createHeaderChecker(43114)(header, expected)).toMatchObject({ hashVerified: true, unverifiedReason: null });
    expect(createHeaderChecker(1)(header, expected)).toMatchObject({ hashVerified: false });
  });
});
