import { createKeccak } from 'hash-wasm';

/**
 * keccak256 of bytes, synchronous, through hash-wasm's WebAssembly Keccak (one instance, set up once when the
 * module loads). The bloom check hashes every distinct address it meets, a million rows a run: measured here on
 * 32-byte inputs, @noble/hashes' keccak_256 took 5.3–6.7 µs a hash and hash-wasm 0.8–1.0 µs (`npm run bench`
 * prints the header figure).
 *
 * @example keccak256(new Uint8Array(0)) // → <Uint8Array c5 d2 46 01 …> (keccak256 of nothing)
 */
export function keccak256(data: Uint8Array): Uint8Array {
  hasher.init();
  hasher.update(data);
  return hasher.digest('binary');
}

const hasher = await createKeccak(256);
