import { readFileSync } from 'node:fs';
import { encode } from '@ethereumjs/rlp';
import { describe, expect, it } from 'vitest';
import { computeHeaderHash, encodeFieldList, encodeHeaderRlp, HeaderEncodingError, verifyHeaderHash } from './header-hash.ts';
import { CONSENSUS_FIELDS, toErigonHeader, type HeaderJson } from './header-fields.ts';
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

/** The same encoding through @ethereumjs/rlp, item by item: the oracle for `encodeHeaderRlp`. */
function referenceRlp(h: Readonly<Record<string, string | null>>): string {
  const bytes = (hex: string) => Uint8Array.from(Buffer.from(hex.slice(2), 'hex'));
  const quantity = (hex: string) => {
    const digits = BigInt(hex) === 0n ? '' : BigInt(hex).toString(16);
    return bytes(`0x${digits.length % 2 ? '0' : ''}${digits}`);
  };
  const last = CONSENSUS_FIELDS.findLastIndex((f) => h[f.key] !== null && h[f.key] !== undefined);
  const items = CONSENSUS_FIELDS.slice(0, last + 1).map((f) => (f.kind === 'quantity' ? quantity(h[f.key]!) : bytes(h[f.key]!)));
  return Buffer.from(encode(items)).toString('hex');
}

const hexOf = (bytes: Uint8Array) => Buffer.from(bytes).toString('hex');

describe('encodeHeaderRlp', () => {
  it('encodes every mainnet header as @ethereumjs/rlp does', () => {
    for (const h of headers) expect(hexOf(encodeHeaderRlp(h)), `block ${h.number}`).toBe(referenceRlp(h));
  });

  it('encodes quantities minimally: zero as the empty string, a byte below 0x80 bare, odd digit counts, upper-case digits', () => {
    const values = ['0x0', '0x1', '0x7f', '0x80', '0xff', '0x100', '0xfff', '0xABC', `0x${'f'.repeat(64)}`];
    for (const value of values) {
      for (const key of ['difficulty', 'gasUsed', 'timestamp', 'baseFeePerGas'] as const) {
        const h = { ...headers[20]!, [key]: value };
        expect(hexOf(encodeHeaderRlp(h)), `${key} ${value}`).toBe(referenceRlp(h));
      }
    }
  });

  it('encodes byte strings of every length class: empty, one byte below and above 0x80, up to 55, longer', () => {
    for (let length = 0; length <= 300; length++) {
      for (const fill of ['00', '7f', '80', 'aB']) {
        const h = { ...headers[20]!, extraData: `0x${fill.repeat(length)}` };
        expect(hexOf(encodeHeaderRlp(h)), `extraData of ${length} × ${fill}`).toBe(referenceRlp(h));
      }
    }
  });

  it('encodes lists of every length class and long odd-digit quantities as @ethereumjs/rlp does, whatever memory it is given', () => {
    // memory handed out before is filled, so that a byte left unwritten would show
    Buffer.allocUnsafe(4000).fill(0xee);
    const oracle = (items: Uint8Array[]) => Buffer.from(encode(items)).toString('hex');
    const bytes = (hex: string) => Uint8Array.from(Buffer.from(hex.length % 2 ? `0${hex}` : hex, 'hex'));
    expect(hexOf(encodeFieldList({}, []))).toBe('c0');
    expect(hexOf(encodeFieldList({ a: '0x1' }, [{ key: 'a', kind: 'quantity' }]))).toBe('c101');
    for (const length of [0, 1, 53, 54, 55, 56, 254, 255, 256, 65_533, 65_536, 70_000]) {
      const data = `0x${'ab'.repeat(length)}`;
      expect(hexOf(encodeFieldList({ a: data }, [{ key: 'a', kind: 'bytes' }])), `bytes of ${length}`).toBe(oracle([bytes(data.slice(2))]));
    }
    for (const value of ['0x8', '0xA', '0x7F', '0xFfF', `0x1${'f'.repeat(110)}`, `0xF${'f'.repeat(110)}`, `0x1${'0'.repeat(512)}`]) {
      const fields = [
        { key: 'q', kind: 'quantity' as const },
        { key: 'h', kind: 'hash' as const },
      ];
      const h = { q: value, h: `0x${'12'.repeat(32)}` };
      expect(hexOf(encodeFieldList(h, fields)), value).toBe(oracle([bytes(value.slice(2)), bytes(h.h.slice(2))]));
    }
  });

  it('names a field that is not text', () => {
    const h = { ...headers[0]!, gasLimit: 5, miner: 7 } as unknown as HeaderJson;
    expect(() => encodeHeaderRlp(h)).toThrow(/miner: expected 20 bytes of 0x hex, got 7/);
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
