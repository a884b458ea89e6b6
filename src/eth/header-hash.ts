import { encode } from '@ethereumjs/rlp';
import { FatalError } from '../common/errors.ts';
import { keccak256 } from './keccak.ts';
import { CONSENSUS_FIELDS, fieldExpectation, isFieldHex, type FieldKind, type HeaderJson } from './header-fields.ts';

/** Thrown when a header's fields cannot be encoded at all (bad hex, wrong size, a gap in fork fields). */
export class HeaderEncodingError extends FatalError {
  constructor(
    readonly field: string,
    message: string,
  ) {
    super(`header field ${field}: ${message}`, { details: { field } });
  }
}

type HeaderFields = Readonly<Record<string, string | null | undefined>>;

/** A header field as an RLP list item: its key in the node's JSON and how it is encoded. */
export interface RlpField {
  key: string;
  kind: FieldKind;
}

/**
 * RLP of a header: the list of its consensus fields in order, through the last non-null fork field, each
 * field a byte string (quantities minimal big-endian, zero the empty string), encoded by @ethereumjs/rlp. A
 * null fork field followed by a non-null one is an encoding error (no fork ever did that), as is a field
 * whose text is not hex of its kind.
 *
 * @example encodeHeaderRlp(genesis) // → <Uint8Array f9 02 14 a0 …> (535 bytes: a list of 532)
 */
export function encodeHeaderRlp(header: HeaderFields): Uint8Array {
  return encodeFieldList(header, CONSENSUS_FIELDS);
}

/**
 * RLP of `fields` of a header, in their order, through the last one the header has (the ones after it are fields
 * of later forks): each field a byte string as in {@link encodeHeaderRlp}. A field missing before a present one,
 * or one whose text is not hex of its kind, is a HeaderEncodingError naming it.
 */
export function encodeFieldList(header: HeaderFields, fields: readonly RlpField[]): Uint8Array {
  let last = -1;
  for (let i = 0; i < fields.length; i++) {
    const value = header[fields[i]!.key];
    if (value !== null && value !== undefined) last = i;
  }
  const items: Uint8Array[] = [];
  for (let i = 0; i <= last; i++) {
    const { key, kind } = fields[i]!;
    items.push(bytesOf(checkedField(key, kind, header[key])));
  }
  return encode(items);
}

/** The field's text when it can be encoded as its kind; a HeaderEncodingError naming it otherwise. */
function checkedField(key: string, kind: FieldKind, value: string | null | undefined): string {
  if (value === null || value === undefined) throw new HeaderEncodingError(key, `is null but a later fork field is set`);
  if (isFieldHex(kind, value)) return value;
  throw new HeaderEncodingError(key, `expected ${fieldExpectation(kind)}, got ${JSON.stringify(typeof value === 'string' ? value.slice(0, 80) : value)}`);
}

/**
 * The byte string a checked field holds: its hex digits, with an implied leading zero when their count is odd
 * (a minimal quantity such as `0xabc`), and none at all for the quantity zero (`0x0`).
 */
function bytesOf(hex: string): Uint8Array {
  if (hex === '0x0') return new Uint8Array(0);
  return Buffer.from(hex.length % 2 === 1 ? `0${hex.slice(2)}` : hex.slice(2), 'hex');
}

/** `keccak256(rlp(header fields))` as lower-case `0x` hex: the hash a block with these fields has. */
export function computeHeaderHash(header: HeaderFields): string {
  return rlpHash(encodeHeaderRlp(header));
}

/** keccak256 of an RLP encoding as lower-case `0x` hex: the block hash of a header list of any chain's rule. */
export function rlpHash(rlp: Uint8Array): string {
  const digest = keccak256(rlp);
  return `0x${Buffer.from(digest.buffer, digest.byteOffset, digest.byteLength).toString('hex')}`;
}

/**
 * Whether the header's fields hash to its `hash` (or to `expected`, when given).
 *
 * @example verifyHeaderHash(genesis) // → { ok: true, computed: '0xd4e5…8fa3' }
 */
export function verifyHeaderHash(header: Readonly<Pick<HeaderJson, 'hash'>> & HeaderFields, expected: string = header.hash): { ok: boolean; computed: string } {
  const computed = computeHeaderHash(header);
  return { ok: computed === expected.toLowerCase(), computed };
}
