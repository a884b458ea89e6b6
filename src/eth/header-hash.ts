import { encode } from '@ethereumjs/rlp';
import { keccak_256 } from '@noble/hashes/sha3.js';
import { CONSENSUS_FIELDS, type FieldKind, type HeaderJson } from './header-fields.ts';
import { bytesToHex, hexToBytes, isHexData, quantityToBytes } from './hex.ts';

const FIXED_SIZE: Partial<Record<FieldKind, number>> = { hash: 32, address: 20, bloom: 256, nonce: 8 };

/** Thrown when a header's fields cannot be encoded at all (bad hex, wrong size, a gap in fork fields). */
export class HeaderEncodingError extends Error {
  constructor(
    readonly field: string,
    message: string,
  ) {
    super(`header field ${field}: ${message}`);
    this.name = 'HeaderEncodingError';
  }
}

/**
 * The RLP list items of a header: the consensus fields in order, through the last non-null fork field.
 * A null fork field followed by a non-null one is an encoding error (no fork ever did that).
 */
export function headerRlpItems(header: Readonly<Record<string, string | null | undefined>>): Uint8Array[] {
  let last = -1;
  CONSENSUS_FIELDS.forEach((f, i) => {
    if (header[f.key] !== null && header[f.key] !== undefined) last = i;
  });
  const items: Uint8Array[] = [];
  for (let i = 0; i <= last; i++) {
    const f = CONSENSUS_FIELDS[i]!;
    const value = header[f.key];
    if (value === null || value === undefined) {
      throw new HeaderEncodingError(f.key, `is null but a later fork field is set`);
    }
    items.push(encodeField(f.key, f.kind, value));
  }
  return items;
}

function encodeField(key: string, kind: FieldKind, value: string): Uint8Array {
  if (kind === 'quantity') {
    try {
      return quantityToBytes(value);
    } catch {
      throw new HeaderEncodingError(key, `expected a minimal 0x hex quantity, got ${JSON.stringify(value)}`);
    }
  }
  const size = FIXED_SIZE[kind];
  if (!isHexData(value, size)) {
    const want = size === undefined ? '0x hex bytes' : `${size} bytes of 0x hex`;
    throw new HeaderEncodingError(key, `expected ${want}, got ${JSON.stringify(value.slice(0, 80))}`);
  }
  return hexToBytes(value);
}

/** `keccak256(rlp(header fields))` as lower-case `0x` hex: the hash a block with these fields has. */
export function computeHeaderHash(header: Readonly<Record<string, string | null | undefined>>): string {
  return bytesToHex(keccak_256(encode(headerRlpItems(header))));
}

/**
 * Whether the header's fields hash to its `hash` (or to `expected`, when given).
 *
 * @example verifyHeaderHash(genesis) // → { ok: true, computed: '0xd4e5…8fa3' }
 */
export function verifyHeaderHash(
  header: Readonly<Pick<HeaderJson, 'hash'>> & Readonly<Record<string, string | null | undefined>>,
  expected: string = header.hash,
): { ok: boolean; computed: string } {
  const computed = computeHeaderHash(header);
  return { ok: computed === expected.toLowerCase(), computed };
}
