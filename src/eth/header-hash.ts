import { keccak256 } from './keccak256.ts';
import { CONSENSUS_FIELDS, type FieldKind, type HeaderJson } from './header-fields.ts';
import { isHexData, isHexQuantity } from './hex.ts';

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

type HeaderFields = Readonly<Record<string, string | null | undefined>>;

/**
 * RLP of a header: the list of its consensus fields in order, through the last non-null fork field, each
 * field a byte string (quantities minimal big-endian, zero the empty string). A null fork field followed by
 * a non-null one is an encoding error (no fork ever did that). Every field is checked, then the encoding is
 * written straight from the hex text into one buffer of the exact size.
 *
 * @example encodeHeaderRlp(genesis) // → <Buffer f9 02 14 a0 …> (535 bytes: a list of 532)
 */
export function encodeHeaderRlp(header: HeaderFields): Uint8Array {
  let last = -1;
  for (let i = 0; i < CONSENSUS_FIELDS.length; i++) {
    const value = header[CONSENSUS_FIELDS[i]!.key];
    if (value !== null && value !== undefined) last = i;
  }
  let payload = 0;
  for (let i = 0; i <= last; i++) {
    const { key, kind } = CONSENSUS_FIELDS[i]!;
    payload += itemSize(checkedField(key, kind, header[key]));
  }
  // every byte is written below: the sizes are exact
  const out = Buffer.allocUnsafe(prefixSize(payload) + payload);
  let at = writePrefix(out, 0, 0xc0, payload);
  for (let i = 0; i <= last; i++) at = writeItem(out, at, header[CONSENSUS_FIELDS[i]!.key]!);
  return out;
}

/** The field's text when it can be encoded as its kind; a HeaderEncodingError naming it otherwise. */
function checkedField(key: string, kind: FieldKind, value: string | null | undefined): string {
  if (value === null || value === undefined) throw new HeaderEncodingError(key, `is null but a later fork field is set`);
  if (kind === 'quantity') {
    if (typeof value === 'string' && isHexQuantity(value)) return value;
    throw new HeaderEncodingError(key, `expected a minimal 0x hex quantity, got ${JSON.stringify(value)}`);
  }
  const size = FIXED_SIZE[kind];
  if (typeof value === 'string' && isHexData(value, size)) return value;
  const want = size === undefined ? '0x hex bytes' : `${size} bytes of 0x hex`;
  throw new HeaderEncodingError(key, `expected ${want}, got ${JSON.stringify(typeof value === 'string' ? value.slice(0, 80) : value)}`);
}

// A checked field is `0x` and hex digits: an even number of them for data, a minimal quantity otherwise
// (`0x0` is zero, the empty byte string; an odd count has an implied leading zero digit).

/** The bytes of the string a checked field encodes. */
const byteLength = (hex: string) => (hex === '0x0' ? 0 : (hex.length - 1) >> 1);

/** The one byte of a one-byte field. */
const singleByte = (hex: string) => Number.parseInt(hex.slice(2), 16);

/** RLP of a string of one byte below 0x80 is that byte itself. */
const isBareByte = (hex: string, bytes: number) => bytes === 1 && singleByte(hex) < 0x80;

function itemSize(hex: string): number {
  const bytes = byteLength(hex);
  return isBareByte(hex, bytes) ? 1 : prefixSize(bytes) + bytes;
}

function writeItem(out: Buffer, at: number, hex: string): number {
  const bytes = byteLength(hex);
  if (isBareByte(hex, bytes)) {
    out[at] = singleByte(hex);
    return at + 1;
  }
  at = writePrefix(out, at, 0x80, bytes);
  if (bytes === 0) return at;
  if (hex.length % 2 === 0) return at + out.write(hex.substring(2), at, 'hex');
  out[at] = Number.parseInt(hex[2]!, 16);
  return at + 1 + out.write(hex.substring(3), at + 1, 'hex');
}

/** Size of the RLP prefix of a string (`offset` 0x80) or list (0xc0) whose payload has `length` bytes. */
function prefixSize(length: number): number {
  if (length <= 55) return 1;
  let size = 1;
  for (let rest = length; rest > 0; rest = Math.floor(rest / 256)) size++;
  return size;
}

function writePrefix(out: Uint8Array, at: number, offset: 0x80 | 0xc0, length: number): number {
  if (length <= 55) {
    out[at] = offset + length;
    return at + 1;
  }
  const lengthBytes = prefixSize(length) - 1;
  out[at] = offset + 55 + lengthBytes;
  for (let i = lengthBytes, rest = length; i > 0; i--, rest = Math.floor(rest / 256)) out[at + i] = rest % 256;
  return at + 1 + lengthBytes;
}

/** `keccak256(rlp(header fields))` as lower-case `0x` hex: the hash a block with these fields has. */
export function computeHeaderHash(header: HeaderFields): string {
  const digest = keccak256(encodeHeaderRlp(header));
  return `0x${Buffer.from(digest.buffer, digest.byteOffset, digest.byteLength).toString('hex')}`;
}

/**
 * Whether the header's fields hash to its `hash` (or to `expected`, when given).
 *
 * @example verifyHeaderHash(genesis) // → { ok: true, computed: '0xd4e5…8fa3' }
 */
export function verifyHeaderHash(
  header: Readonly<Pick<HeaderJson, 'hash'>> & HeaderFields,
  expected: string = header.hash,
): { ok: boolean; computed: string } {
  const computed = computeHeaderHash(header);
  return { ok: computed === expected.toLowerCase(), computed };
}
