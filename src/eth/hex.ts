/** Pure helpers for `0x` hex text: quantities (minimal, no leading zeros) and fixed-size data. */

const HEX_DIGITS = /^0x[0-9a-fA-F]*$/;
const HEX_QUANTITY = /^0x(?:0|[1-9a-fA-F][0-9a-fA-F]*)$/;

/** `true` for `0x` followed by an even number of hex digits. */
export function isHexData(text: string, bytes?: number): boolean {
  return (bytes === undefined ? text.length % 2 === 0 : text.length === 2 + 2 * bytes) && HEX_DIGITS.test(text);
}

/** `true` for a minimal hex quantity: `0x0`, `0x1f`, never `0x01` or `0x`. */
export function isHexQuantity(text: string): boolean {
  return HEX_QUANTITY.test(text);
}

/** @example toQuantity(255n) // → '0xff' */
export function toQuantity(value: bigint | number): string {
  // a number needs no BigInt (the reference server writes four per log it serves)
  if (typeof value === 'number' && Number.isSafeInteger(value) && value >= 0) return `0x${value.toString(16)}`;
  const v = BigInt(value);
  if (v < 0n) throw new RangeError(`a quantity cannot be negative: ${v}`);
  return `0x${v.toString(16)}`;
}

/** @example fromQuantity('0xff') // → 255n */
export function fromQuantity(text: string): bigint {
  if (!isHexQuantity(text)) throw new TypeError(`not a minimal 0x hex quantity: ${JSON.stringify(text)}`);
  return BigInt(text);
}
