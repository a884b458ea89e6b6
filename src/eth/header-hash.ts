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
 * field a byte string (quantities minimal big-endian, zero the empty string). A null fork field followed by a
 * non-null one is an encoding error (no fork ever did that), as is a field whose text is not hex of its kind.
 *
 * Written here, not by @ethereumjs/rlp (the tests' oracle): each field's text is checked and measured, then its bytes
 * are written once, from the hex, into one buffer of the list's size. Through the library (a byte array per field, then
 * its list encoder's copies) the bench's headers verified at 53,000–60,000 a second; written in place, at
 * 75,000–98,000 (four alternating rounds in one process, 2 s each): about 0.2 s less of the exporter's CPU for the
 * 30,534 headers of a 1,000,000-transfer first load (bench/NOTES.md, "A nineteenth day").
 *
 * @example encodeHeaderRlp(genesis) // → <Buffer f9 02 14 a0 …> (535 bytes: a list of 532)
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
  const texts: string[] = [];
  let payload = 0;
  for (let i = 0; i <= last; i++) {
    const { key, kind } = fields[i]!;
    const hex = checkedField(key, kind, header[key]);
    texts.push(hex);
    payload += itemSize(hex);
  }
  const out = Buffer.allocUnsafe(prefixSize(payload) + payload);
  let at = writePrefix(out, 0, LIST, payload);
  for (const hex of texts) at = writeItem(out, at, hex);
  // every byte measured is written (the checks let only hex digits through): a shortfall would hash memory left over
  if (at !== out.length) {
    throw new FatalError(`header RLP: wrote ${at} of the ${out.length} bytes it measured, a bug in erc20-etl (encodeFieldList): report it with the header's block number`);
  }
  return out;
}

/** The field's text when it can be encoded as its kind; a HeaderEncodingError naming it otherwise. */
function checkedField(key: string, kind: FieldKind, value: string | null | undefined): string {
  if (value === null || value === undefined) throw new HeaderEncodingError(key, `is null but a later fork field is set`);
  if (isFieldHex(kind, value)) return value;
  throw new HeaderEncodingError(key, `expected ${fieldExpectation(kind)}, got ${JSON.stringify(typeof value === 'string' ? value.slice(0, 80) : value)}`);
}

/** RLP's first prefix byte of a byte string, and of a list. */
const STRING = 0x80;
const LIST = 0xc0;

/** The bytes a checked field's text holds: its hex digits, an odd count with an implied leading zero, none for `0x0`. */
function byteCount(hex: string): number {
  return hex === '0x0' ? 0 : (hex.length - 1) >> 1;
}

/** A one-byte string below 0x80 is its own encoding: that byte, else undefined. */
function singleByte(hex: string): number | undefined {
  if (byteCount(hex) !== 1) return undefined;
  const value = Number.parseInt(hex.slice(2), 16);
  return value < STRING ? value : undefined;
}

/** The bytes of the prefix of a string or list of `length` bytes: one up to 55, else one and the length's own. */
function prefixSize(length: number): number {
  if (length <= 55) return 1;
  let bytes = 1;
  while (length >= 2 ** (8 * bytes)) bytes++;
  return 1 + bytes;
}

/** The bytes of a field's RLP item. */
function itemSize(hex: string): number {
  if (singleByte(hex) !== undefined) return 1;
  const n = byteCount(hex);
  return prefixSize(n) + n;
}

/** Writes the prefix of a string (`base` STRING) or list (LIST) of `length` bytes at `at`; returns where it ends. */
function writePrefix(out: Buffer, at: number, base: number, length: number): number {
  if (length <= 55) {
    out[at] = base + length;
    return at + 1;
  }
  const bytes = prefixSize(length) - 1;
  out[at] = base + 55 + bytes;
  out.writeUIntBE(length, at + 1, bytes);
  return at + 1 + bytes;
}

/** Writes a field's RLP item at `at` (see `byteCount`); returns where it ends. */
function writeItem(out: Buffer, at: number, hex: string): number {
  const single = singleByte(hex);
  if (single !== undefined) {
    out[at] = single;
    return at + 1;
  }
  const n = byteCount(hex);
  at = writePrefix(out, at, STRING, n);
  if (n === 0) return at;
  if (hex.length % 2 === 1) {
    out[at] = Number.parseInt(hex[2]!, 16);
    return at + 1 + out.write(hex.slice(3), at + 1, 'hex');
  }
  return at + out.write(hex.slice(2), at, 'hex');
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
