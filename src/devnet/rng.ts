/**
 * A small seeded pseudo-random generator for the devnet: sfc32, seeded through splitmix32. Pure (no
 * Math.random, no global state): the same seed always gives the same sequence, on every platform.
 */

/** Character codes of the lower-case hex digits. */
const HEX_DIGITS: readonly number[] = Array.from('0123456789abcdef', (c) => c.charCodeAt(0));

const TWO_POW_32 = 2 ** 32;

/** A seeded random source. Every method advances the sequence. */
export interface Rng {
  /** A uniform unsigned 32-bit integer. */
  uint32(): number;
  /** A uniform float in [0, 1). */
  next(): number;
  /** A uniform integer in [lo, hiInclusive]; the range may hold at most 2^32 values. */
  int(lo: number, hiInclusive: number): number;
  /** `true` with probability `p` (0 never, 1 always). */
  chance(p: number): boolean;
  /** A uniformly chosen element of a non-empty array. */
  pick<T>(items: readonly T[]): T;
  /** `n` random bytes. */
  bytes(n: number): Uint8Array;
  /** `n` random bytes as lower-case `0x` hex (`0x` for n = 0). */
  hex(n: number): string;
  /** A uniform bigint in [0, limit). */
  bigintBelow(limit: bigint): bigint;
}

/** One splitmix32 step: returns the next state and its output. */
function splitmix32(state: number): [next: number, out: number] {
  const next = (state + 0x9e3779b9) | 0;
  let z = next;
  z = Math.imul(z ^ (z >>> 16), 0x85ebca6b);
  z = Math.imul(z ^ (z >>> 13), 0xc2b2ae35);
  z ^= z >>> 16;
  return [next, z >>> 0];
}

/** The 32-bit finaliser of MurmurHash3: a good avalanche on one word. */
function fmix32(x: number): number {
  let h = x | 0;
  h ^= h >>> 16;
  h = Math.imul(h, 0x85ebca6b);
  h ^= h >>> 13;
  h = Math.imul(h, 0xc2b2ae35);
  h ^= h >>> 16;
  return h >>> 0;
}

function checkSeed(seed: number): void {
  if (!Number.isSafeInteger(seed)) throw new RangeError(`a seed must be a safe integer, got ${seed}`);
}

/** Folds a safe integer (possibly negative or above 2^32) into 32 bits, keeping the high bits' influence. */
function foldSeed(seed: number): number {
  const high = Math.floor(seed / TWO_POW_32) | 0;
  return (seed >>> 0) ^ (high === 0 ? 0 : fmix32(high ^ 0x5bd1e995));
}

/**
 * A child seed for a named sub-stream, so that independent parts of a generator do not share a sequence.
 *
 * @example deriveSeed(1, 'headers') // → the same 32-bit integer every time; deriveSeed(1, 'tokens') differs
 */
export function deriveSeed(seed: number, label: string): number {
  checkSeed(seed);
  // FNV-1a over the UTF-16 code units of the label, started from the folded seed.
  let h = (0x811c9dc5 ^ fmix32(foldSeed(seed))) >>> 0;
  for (let i = 0; i < label.length; i++) {
    h ^= label.charCodeAt(i);
    h = Math.imul(h, 0x01000193);
  }
  return fmix32(h ^ label.length);
}

class Sfc32 implements Rng {
  private a: number;
  private b: number;
  private c: number;
  private d: number;
  /** Scratch space for hex(): `0x` then the digits, reused from call to call. */
  private text: Buffer = Buffer.alloc(0);

  constructor(seed: number) {
    let s = foldSeed(seed);
    let out: number;
    [s, out] = splitmix32(s);
    this.a = out;
    [s, out] = splitmix32(s);
    this.b = out;
    [s, out] = splitmix32(s);
    this.c = out;
    [, out] = splitmix32(s);
    this.d = out;
    for (let i = 0; i < 12; i++) this.uint32();
  }

  uint32(): number {
    const t0 = (this.a + this.b) | 0;
    this.a = this.b ^ (this.b >>> 9);
    this.b = (this.c + (this.c << 3)) | 0;
    this.c = (this.c << 21) | (this.c >>> 11);
    this.d = (this.d + 1) | 0;
    const t = (t0 + this.d) | 0;
    this.c = (this.c + t) | 0;
    return t >>> 0;
  }

  next(): number {
    return this.uint32() / TWO_POW_32;
  }

  int(lo: number, hiInclusive: number): number {
    if (!Number.isSafeInteger(lo) || !Number.isSafeInteger(hiInclusive) || hiInclusive < lo) {
      throw new RangeError(`int(lo, hi) needs integers with lo ≤ hi, got ${lo}, ${hiInclusive}`);
    }
    const range = hiInclusive - lo + 1;
    if (range > TWO_POW_32) throw new RangeError(`int(lo, hi) covers at most 2^32 values, got ${range}`);
    // Rejection sampling keeps the result unbiased for every range.
    const limit = TWO_POW_32 - (TWO_POW_32 % range);
    let u = this.uint32();
    while (u >= limit) u = this.uint32();
    return lo + (u % range);
  }

  chance(p: number): boolean {
    return this.next() < p;
  }

  pick<T>(items: readonly T[]): T {
    if (items.length === 0) throw new RangeError('pick() needs a non-empty array');
    return items[this.int(0, items.length - 1)]!;
  }

  bytes(n: number): Uint8Array {
    checkLength(n);
    const out = new Uint8Array(n);
    for (let i = 0; i < n; i += 4) {
      const w = this.uint32();
      out[i] = w & 0xff;
      if (i + 1 < n) out[i + 1] = (w >>> 8) & 0xff;
      if (i + 2 < n) out[i + 2] = (w >>> 16) & 0xff;
      if (i + 3 < n) out[i + 3] = w >>> 24;
    }
    return out;
  }

  hex(n: number): string {
    checkLength(n);
    const size = 2 + 2 * n;
    if (this.text.length < size) {
      this.text = Buffer.allocUnsafe(Math.max(size, 2 * this.text.length));
      this.text[0] = 0x30; // '0'
      this.text[1] = 0x78; // 'x'
    }
    const text = this.text;
    let p = 2;
    for (let i = 0; i < n; i += 4) {
      const w = this.uint32();
      for (let k = 0; k < 4 && i + k < n; k++) {
        const byte = (w >>> (8 * k)) & 0xff;
        text[p++] = HEX_DIGITS[byte >>> 4]!;
        text[p++] = HEX_DIGITS[byte & 0xf]!;
      }
    }
    // One flat string, not a rope of concatenations: hashes and addresses stay compact in memory.
    return text.toString('latin1', 0, p);
  }

  bigintBelow(limit: bigint): bigint {
    if (limit <= 0n) throw new RangeError(`bigintBelow() needs a positive limit, got ${limit}`);
    if (limit === 1n) return 0n;
    const bits = (limit - 1n).toString(2).length;
    const words = Math.ceil(bits / 32);
    const topBits = bits - 32 * (words - 1);
    const topMask = topBits === 32 ? 0xffffffff : (1 << topBits) - 1;
    for (;;) {
      let text = '0x';
      text += ((this.uint32() & topMask) >>> 0).toString(16);
      for (let i = 1; i < words; i++) text += this.uint32().toString(16).padStart(8, '0');
      const value = BigInt(text);
      if (value < limit) return value;
    }
  }
}

function checkLength(n: number): void {
  if (!Number.isSafeInteger(n) || n < 0) throw new RangeError(`a byte count must be an integer ≥ 0, got ${n}`);
}

/**
 * A new generator for `seed` (any safe integer).
 *
 * @example
 * const rng = createRng(42);
 * rng.int(1, 6); // a die roll, the same on every run
 * rng.hex(20);   // '0x…' a 20-byte address
 */
export function createRng(seed: number): Rng {
  checkSeed(seed);
  return new Sfc32(seed);
}
