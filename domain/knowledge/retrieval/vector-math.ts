/**
 * Vector arithmetic for retrieval: normalization, cosine, sign-bit codes and Hamming distance.
 */

/** Returns a unit-length copy of `v`, or undefined when `v` has zero length or a non-finite entry. */
export function normalize(v: ArrayLike<number>): Float32Array | undefined {
  let sum = 0;
  for (let i = 0; i < v.length; i++) {
    const x = v[i]!;
    if (!Number.isFinite(x)) return undefined;
    sum += x * x;
  }
  if (sum === 0) return undefined;
  const norm = Math.sqrt(sum);
  const out = new Float32Array(v.length);
  for (let i = 0; i < v.length; i++) out[i] = v[i]! / norm;
  return out;
}

/** Dot product of two equal-length vectors (the cosine when both are unit length). */
export function dot(a: ArrayLike<number>, b: ArrayLike<number>, bOffset = 0): number {
  let s = 0;
  for (let i = 0; i < a.length; i++) s += a[i]! * b[bOffset + i]!;
  return s;
}

/** Cosine similarity of two vectors of any length (0 when either is zero). */
export function cosine(a: ArrayLike<number>, b: ArrayLike<number>): number {
  let ab = 0;
  let aa = 0;
  let bb = 0;
  for (let i = 0; i < a.length; i++) {
    const x = a[i]!;
    const y = b[i]!;
    ab += x * y;
    aa += x * x;
    bb += y * y;
  }
  return aa === 0 || bb === 0 ? 0 : ab / Math.sqrt(aa * bb);
}

/** Sign-bit code of a vector: bit i is set when component i is positive (sqlite-vec's vec_quantize_binary). */
export function signCode(
  v: ArrayLike<number>,
  out: Uint32Array = new Uint32Array(Math.ceil(v.length / 32)),
  offset = 0,
): Uint32Array {
  for (let w = 0; w < Math.ceil(v.length / 32); w++) out[offset + w] = 0;
  for (let i = 0; i < v.length; i++) {
    if (v[i]! > 0) out[offset + (i >> 5)]! |= 1 << (i & 31);
  }
  return out;
}

/** Population counts of every 16-bit value. */
export const POPCOUNT16: Uint8Array = (() => {
  const table = new Uint8Array(65536);
  for (let i = 1; i < 65536; i++) table[i] = table[i >> 1]! + (i & 1);
  return table;
})();
