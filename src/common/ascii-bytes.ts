/**
 * ASCII written straight into a buffer, making no string: how the reference server writes its large answers
 * (devnet/transfers-json.ts, devnet/logs-answer.ts) and a first load writes its COPY text (warehouse/copy.ts
 * `copyLines`). Each `write…` answers where what it wrote ends.
 */

/**
 * Text known in advance (a key, a constant), as bytes: a call of Buffer#write costs more than a key's few bytes. A hash
 * and a key took 32–33 ns written with the key copied from its bytes, against 54–55 ns both written as text
 * (bench/NOTES.md, "A twenty-third day").
 */
export function writeKnown(known: Uint8Array, bytes: Buffer, at: number): number {
  bytes.set(known, at);
  return at + known.length;
}

/** Text whose every character is ASCII (as the reference server's chain store admits, and as a validated row's fields are). */
export function writeAscii(text: string, bytes: Buffer, at: number): number {
  return at + bytes.write(text, at, 'latin1');
}

/** `text`'s bytes, for `writeKnown`. */
export function known(text: string): Buffer {
  return Buffer.from(text, 'latin1');
}

/**
 * How many digits `n` has in `radix` (10 or 16); `n` a whole number from 0 to 2^53 - 1.
 *
 * @example digitsLength(255, 16) // → 2
 */
export function digitsLength(n: number, radix: 10 | 16): number {
  let length = 1;
  for (let rest = n; rest >= radix; rest = Math.floor(rest / radix)) length++;
  return length;
}

/**
 * Writes `n`'s digits in `radix` (lower-case hex) into `bytes` from `at`, and answers where they end; `n` a whole
 * number from 0 to 2^53 - 1.
 *
 * @example writeDigits(255, 16, bytes, 0) // → 2, bytes begin 'ff'
 */
export function writeDigits(n: number, radix: 10 | 16, bytes: Buffer, at: number): number {
  const end = at + digitsLength(n, radix);
  let rest = n;
  for (let p = end - 1; p >= at; p--) {
    const digit = rest % radix;
    bytes[p] = digit < 10 ? 0x30 + digit : 0x57 + digit; // 0-9, a-f
    rest = Math.floor(rest / radix);
  }
  return end;
}

/** `true` for a whole number `writeDigits` can write. */
export function isDigitsNumber(n: number): boolean {
  return Number.isSafeInteger(n) && n >= 0;
}
