/**
 * keccak256 (the original Keccak padding, as Ethereum hashes, not NIST SHA3-256), for block header hashes.
 *
 * The same function as `keccak_256` of @noble/hashes (the unit test compares them on every length from 0 to
 * 1,200 bytes), written for speed: keccak-f[1600] keeps its 25 lanes in 50 local 32-bit variables and does
 * each step with the rotation offsets written out; noble's table-driven loop took 2.5 to 4 times as long for
 * a 560-byte header here, and header verification spends most of its time hashing. Lane `x + 5y` is
 * `a{2(x + 5y)}` (low 32 bits) and `a{2(x + 5y) + 1}` (high 32 bits), read from the input little-endian.
 *
 * @example Buffer.from(keccak256(new Uint8Array(0))).toString('hex') // → 'c5d2460186f7233c927e7db2dcc703c0e500b653ca82273b7bfad8045d85a470'
 */
export function keccak256(data: Uint8Array): Uint8Array {
  const state = new Uint32Array(50);
  const full = data.length - (data.length % RATE);
  for (let at = 0; at < full; at += RATE) {
    absorb(state, data, at);
    permute(state);
  }
  const last = new Uint8Array(RATE);
  last.set(data.subarray(full));
  last[data.length - full] = 0x01;
  last[RATE - 1]! |= 0x80;
  absorb(state, last, 0);
  permute(state);
  const digest = new Uint8Array(32);
  for (let w = 0; w < 8; w++) {
    const word = state[w]!;
    digest[4 * w] = word;
    digest[4 * w + 1] = word >>> 8;
    digest[4 * w + 2] = word >>> 16;
    digest[4 * w + 3] = word >>> 24;
  }
  return digest;
}

/** Bytes absorbed per permutation: 200 − 2 × 32. */
const RATE = 136;

/** XORs one block of `RATE` bytes from `at` into the state, little-endian. */
function absorb(state: Uint32Array, bytes: Uint8Array, at: number): void {
  for (let w = 0; w < RATE / 4; w++) {
    const i = at + 4 * w;
    state[w]! ^= bytes[i]! | (bytes[i + 1]! << 8) | (bytes[i + 2]! << 16) | (bytes[i + 3]! << 24);
  }
}

/** The ι constants of the 24 rounds, low and high 32 bits. */
const ROUND_LO = Uint32Array.of(
  0x00000001, 0x00008082, 0x0000808a, 0x80008000, 0x0000808b, 0x80000001,
  0x80008081, 0x00008009, 0x0000008a, 0x00000088, 0x80008009, 0x8000000a,
  0x8000808b, 0x0000008b, 0x00008089, 0x00008003, 0x00008002, 0x00000080,
  0x0000800a, 0x8000000a, 0x80008081, 0x00008080, 0x80000001, 0x80008008,
);
const ROUND_HI = Uint32Array.of(
  0x00000000, 0x00000000, 0x80000000, 0x80000000, 0x00000000, 0x00000000,
  0x80000000, 0x80000000, 0x00000000, 0x00000000, 0x00000000, 0x00000000,
  0x00000000, 0x80000000, 0x80000000, 0x80000000, 0x80000000, 0x80000000,
  0x00000000, 0x80000000, 0x80000000, 0x80000000, 0x00000000, 0x80000000,
);

/** keccak-f[1600]: 24 rounds of θ, ρ, π, χ, ι on the state, in place. */
function permute(s: Uint32Array): void {
  let a0 = s[0]!, a1 = s[1]!, a2 = s[2]!, a3 = s[3]!, a4 = s[4]!, a5 = s[5]!, a6 = s[6]!, a7 = s[7]!, a8 = s[8]!, a9 = s[9]!;
  let a10 = s[10]!, a11 = s[11]!, a12 = s[12]!, a13 = s[13]!, a14 = s[14]!, a15 = s[15]!, a16 = s[16]!, a17 = s[17]!, a18 = s[18]!, a19 = s[19]!;
  let a20 = s[20]!, a21 = s[21]!, a22 = s[22]!, a23 = s[23]!, a24 = s[24]!, a25 = s[25]!, a26 = s[26]!, a27 = s[27]!, a28 = s[28]!, a29 = s[29]!;
  let a30 = s[30]!, a31 = s[31]!, a32 = s[32]!, a33 = s[33]!, a34 = s[34]!, a35 = s[35]!, a36 = s[36]!, a37 = s[37]!, a38 = s[38]!, a39 = s[39]!;
  let a40 = s[40]!, a41 = s[41]!, a42 = s[42]!, a43 = s[43]!, a44 = s[44]!, a45 = s[45]!, a46 = s[46]!, a47 = s[47]!, a48 = s[48]!, a49 = s[49]!;
  for (let round = 0; round < 24; round++) {
    // θ: each lane takes the parity of two neighbouring columns (C), one of them rotated by 1
    const c0 = a0 ^ a10 ^ a20 ^ a30 ^ a40, c1 = a1 ^ a11 ^ a21 ^ a31 ^ a41;
    const c2 = a2 ^ a12 ^ a22 ^ a32 ^ a42, c3 = a3 ^ a13 ^ a23 ^ a33 ^ a43;
    const c4 = a4 ^ a14 ^ a24 ^ a34 ^ a44, c5 = a5 ^ a15 ^ a25 ^ a35 ^ a45;
    const c6 = a6 ^ a16 ^ a26 ^ a36 ^ a46, c7 = a7 ^ a17 ^ a27 ^ a37 ^ a47;
    const c8 = a8 ^ a18 ^ a28 ^ a38 ^ a48, c9 = a9 ^ a19 ^ a29 ^ a39 ^ a49;
    const d0 = c8 ^ ((c2 << 1) | (c3 >>> 31)), d1 = c9 ^ ((c3 << 1) | (c2 >>> 31));
    const d2 = c0 ^ ((c4 << 1) | (c5 >>> 31)), d3 = c1 ^ ((c5 << 1) | (c4 >>> 31));
    const d4 = c2 ^ ((c6 << 1) | (c7 >>> 31)), d5 = c3 ^ ((c7 << 1) | (c6 >>> 31));
    const d6 = c4 ^ ((c8 << 1) | (c9 >>> 31)), d7 = c5 ^ ((c9 << 1) | (c8 >>> 31));
    const d8 = c6 ^ ((c0 << 1) | (c1 >>> 31)), d9 = c7 ^ ((c1 << 1) | (c0 >>> 31));
    a0 ^= d0; a1 ^= d1; a2 ^= d2; a3 ^= d3; a4 ^= d4; a5 ^= d5; a6 ^= d6; a7 ^= d7; a8 ^= d8; a9 ^= d9;
    a10 ^= d0; a11 ^= d1; a12 ^= d2; a13 ^= d3; a14 ^= d4; a15 ^= d5; a16 ^= d6; a17 ^= d7; a18 ^= d8; a19 ^= d9;
    a20 ^= d0; a21 ^= d1; a22 ^= d2; a23 ^= d3; a24 ^= d4; a25 ^= d5; a26 ^= d6; a27 ^= d7; a28 ^= d8; a29 ^= d9;
    a30 ^= d0; a31 ^= d1; a32 ^= d2; a33 ^= d3; a34 ^= d4; a35 ^= d5; a36 ^= d6; a37 ^= d7; a38 ^= d8; a39 ^= d9;
    a40 ^= d0; a41 ^= d1; a42 ^= d2; a43 ^= d3; a44 ^= d4; a45 ^= d5; a46 ^= d6; a47 ^= d7; a48 ^= d8; a49 ^= d9;
    // ρ and π: lane (x, y) rotated by its offset moves to (y, 2x + 3y)
    const b0 = a0, b1 = a1; // lane 0 by 0
    const b2 = (a13 << 12) | (a12 >>> 20), b3 = (a12 << 12) | (a13 >>> 20); // lane 6 by 44
    const b4 = (a25 << 11) | (a24 >>> 21), b5 = (a24 << 11) | (a25 >>> 21); // lane 12 by 43
    const b6 = (a36 << 21) | (a37 >>> 11), b7 = (a37 << 21) | (a36 >>> 11); // lane 18 by 21
    const b8 = (a48 << 14) | (a49 >>> 18), b9 = (a49 << 14) | (a48 >>> 18); // lane 24 by 14
    const b10 = (a6 << 28) | (a7 >>> 4), b11 = (a7 << 28) | (a6 >>> 4); // lane 3 by 28
    const b12 = (a18 << 20) | (a19 >>> 12), b13 = (a19 << 20) | (a18 >>> 12); // lane 9 by 20
    const b14 = (a20 << 3) | (a21 >>> 29), b15 = (a21 << 3) | (a20 >>> 29); // lane 10 by 3
    const b16 = (a33 << 13) | (a32 >>> 19), b17 = (a32 << 13) | (a33 >>> 19); // lane 16 by 45
    const b18 = (a45 << 29) | (a44 >>> 3), b19 = (a44 << 29) | (a45 >>> 3); // lane 22 by 61
    const b20 = (a2 << 1) | (a3 >>> 31), b21 = (a3 << 1) | (a2 >>> 31); // lane 1 by 1
    const b22 = (a14 << 6) | (a15 >>> 26), b23 = (a15 << 6) | (a14 >>> 26); // lane 7 by 6
    const b24 = (a26 << 25) | (a27 >>> 7), b25 = (a27 << 25) | (a26 >>> 7); // lane 13 by 25
    const b26 = (a38 << 8) | (a39 >>> 24), b27 = (a39 << 8) | (a38 >>> 24); // lane 19 by 8
    const b28 = (a40 << 18) | (a41 >>> 14), b29 = (a41 << 18) | (a40 >>> 14); // lane 20 by 18
    const b30 = (a8 << 27) | (a9 >>> 5), b31 = (a9 << 27) | (a8 >>> 5); // lane 4 by 27
    const b32 = (a11 << 4) | (a10 >>> 28), b33 = (a10 << 4) | (a11 >>> 28); // lane 5 by 36
    const b34 = (a22 << 10) | (a23 >>> 22), b35 = (a23 << 10) | (a22 >>> 22); // lane 11 by 10
    const b36 = (a34 << 15) | (a35 >>> 17), b37 = (a35 << 15) | (a34 >>> 17); // lane 17 by 15
    const b38 = (a47 << 24) | (a46 >>> 8), b39 = (a46 << 24) | (a47 >>> 8); // lane 23 by 56
    const b40 = (a5 << 30) | (a4 >>> 2), b41 = (a4 << 30) | (a5 >>> 2); // lane 2 by 62
    const b42 = (a17 << 23) | (a16 >>> 9), b43 = (a16 << 23) | (a17 >>> 9); // lane 8 by 55
    const b44 = (a29 << 7) | (a28 >>> 25), b45 = (a28 << 7) | (a29 >>> 25); // lane 14 by 39
    const b46 = (a31 << 9) | (a30 >>> 23), b47 = (a30 << 9) | (a31 >>> 23); // lane 15 by 41
    const b48 = (a42 << 2) | (a43 >>> 30), b49 = (a43 << 2) | (a42 >>> 30); // lane 21 by 2
    // χ: each lane ^= (not next lane in its row) and the one after
    a0 = b0 ^ (~b2 & b4); a1 = b1 ^ (~b3 & b5);
    a2 = b2 ^ (~b4 & b6); a3 = b3 ^ (~b5 & b7);
    a4 = b4 ^ (~b6 & b8); a5 = b5 ^ (~b7 & b9);
    a6 = b6 ^ (~b8 & b0); a7 = b7 ^ (~b9 & b1);
    a8 = b8 ^ (~b0 & b2); a9 = b9 ^ (~b1 & b3);
    a10 = b10 ^ (~b12 & b14); a11 = b11 ^ (~b13 & b15);
    a12 = b12 ^ (~b14 & b16); a13 = b13 ^ (~b15 & b17);
    a14 = b14 ^ (~b16 & b18); a15 = b15 ^ (~b17 & b19);
    a16 = b16 ^ (~b18 & b10); a17 = b17 ^ (~b19 & b11);
    a18 = b18 ^ (~b10 & b12); a19 = b19 ^ (~b11 & b13);
    a20 = b20 ^ (~b22 & b24); a21 = b21 ^ (~b23 & b25);
    a22 = b22 ^ (~b24 & b26); a23 = b23 ^ (~b25 & b27);
    a24 = b24 ^ (~b26 & b28); a25 = b25 ^ (~b27 & b29);
    a26 = b26 ^ (~b28 & b20); a27 = b27 ^ (~b29 & b21);
    a28 = b28 ^ (~b20 & b22); a29 = b29 ^ (~b21 & b23);
    a30 = b30 ^ (~b32 & b34); a31 = b31 ^ (~b33 & b35);
    a32 = b32 ^ (~b34 & b36); a33 = b33 ^ (~b35 & b37);
    a34 = b34 ^ (~b36 & b38); a35 = b35 ^ (~b37 & b39);
    a36 = b36 ^ (~b38 & b30); a37 = b37 ^ (~b39 & b31);
    a38 = b38 ^ (~b30 & b32); a39 = b39 ^ (~b31 & b33);
    a40 = b40 ^ (~b42 & b44); a41 = b41 ^ (~b43 & b45);
    a42 = b42 ^ (~b44 & b46); a43 = b43 ^ (~b45 & b47);
    a44 = b44 ^ (~b46 & b48); a45 = b45 ^ (~b47 & b49);
    a46 = b46 ^ (~b48 & b40); a47 = b47 ^ (~b49 & b41);
    a48 = b48 ^ (~b40 & b42); a49 = b49 ^ (~b41 & b43);
    // ι
    a0 ^= ROUND_LO[round]!;
    a1 ^= ROUND_HI[round]!;
  }
  s[0] = a0; s[1] = a1; s[2] = a2; s[3] = a3; s[4] = a4; s[5] = a5; s[6] = a6; s[7] = a7; s[8] = a8; s[9] = a9;
  s[10] = a10; s[11] = a11; s[12] = a12; s[13] = a13; s[14] = a14; s[15] = a15; s[16] = a16; s[17] = a17; s[18] = a18; s[19] = a19;
  s[20] = a20; s[21] = a21; s[22] = a22; s[23] = a23; s[24] = a24; s[25] = a25; s[26] = a26; s[27] = a27; s[28] = a28; s[29] = a29;
  s[30] = a30; s[31] = a31; s[32] = a32; s[33] = a33; s[34] = a34; s[35] = a35; s[36] = a36; s[37] = a37; s[38] = a38; s[39] = a39;
  s[40] = a40; s[41] = a41; s[42] = a42; s[43] = a43; s[44] = a44; s[45] = a45; s[46] = a46; s[47] = a47; s[48] = a48; s[49] = a49;
}
