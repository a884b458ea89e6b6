/** Pure helpers for `0x` hex text: quantities (minimal, no leading zeros) and fixed-size data. */

const HEX_DATA = /^0x(?:[0-9a-fA-F]{2})*$/;
const HEX_QUANTITY = /^0x(?:0|[1-9a-fA-F][0-9a-fA-F]*)$/;

/** `true` for `0x` followed by an even number of hex digits. */
export function isHexData(text: string, bytes?: number): boolean {
  return HEX_DATA.test(text) && (bytes === undefined || text.length === 2 + 2 * bytes);
}

/** `true` for a minimal hex quantity: `0x0`, `0x1f`, never `0x01` or `0x`. */
export function isHexQuantity(text: string): boolean {
  return HEX_QUANTITY.test(text);
}

/** @example toQuantity(255n) // → '0xff' */
export function toQuantity(value: bigint | number): string {
  const v = BigInt(value);
  if (v < 0n) throw new RangeError(`a quantity cannot be negative: ${v}`);
  return `0x${v.toString(16)}`;
}

/** @example fromQuantity('0xff') // → 255n */
export function fromQuantity(text: string): bigint {
  if (!isHexQuantity(text)) throw new TypeError(`not a minimal 0x hex quantity: ${JSON.stringify(text)}`);
  return BigInt(text);
}

/** @example hexToBytes('0x0a0b') // → Uint8Array [10, 11] */
export function hexToBytes(text: string): Uint8Array {
  if (!isHexData(text)) throw new TypeError(`not 0x hex data of whole bytes: ${JSON.stringify(text.slice(0, 80))}`);
  return Uint8Array.from(Buffer.from(text.slice(2), 'hex'));
}

/** @example bytesToHex(new Uint8Array([10, 11])) // → '0x0a0b' */
export function bytesToHex(bytes: Uint8Array): string {
  return `0x${Buffer.from(bytes.buffer, bytes.byteOffset, bytes.byteLength).toString('hex')}`;
}

/** Minimal big-endian bytes of a quantity; zero is the empty byte string, as RLP wants it. */
export function quantityToBytes(text: string): Uint8Array {
  const v = fromQuantity(text);
  if (v === 0n) return new Uint8Array(0);
  let hex = v.toString(16);
  if (hex.length % 2) hex = `0${hex}`;
  return Uint8Array.from(Buffer.from(hex, 'hex'));
}
