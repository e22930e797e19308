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
