/**
 * Small helpers shared by the benchmarks: numeric command-line options and order statistics.
 */

/** The number after `--<name>` on the command line, or `fallback`. */
export function arg(name: string, fallback: number): number {
  const index = process.argv.indexOf(`--${name}`);
  const value = index >= 0 ? Number(process.argv[index + 1]) : fallback;
  if (!Number.isFinite(value)) throw new Error(`--${name} needs a number`);
  return value;
}

/** The `p`-th percentile (0-100) of `values` (nearest rank on a sorted copy). */
export function percentile(values: readonly number[], p: number): number {
  const sorted = [...values].sort((a, b) => a - b);
  return sorted[Math.min(sorted.length - 1, Math.floor((p / 100) * sorted.length))]!;
}

/** The median of `values`. */
export function median(values: readonly number[]): number {
  return percentile(values, 50);
}

/** The positive whole number after `--<name>`, or `fallback`. */
export function positiveIntArg(name: string, fallback: number): number {
  const value = arg(name, fallback);
  if (!Number.isInteger(value) || value <= 0) throw new Error(`--${name} must be a positive integer`);
  return value;
}

/** A deterministic generator of numbers in [0, 1) (mulberry32), so runs are comparable. */
export function seededRandom(seed: number): () => number {
  let state = seed;
  return () => {
    state = (state + 0x6d2b79f5) | 0;
    let x = Math.imul(state ^ (state >>> 15), 1 | state);
    x = (x + Math.imul(x ^ (x >>> 7), 61 | x)) ^ x;
    return ((x ^ (x >>> 14)) >>> 0) / 4294967296;
  };
}
