/**
 * Small formatting helpers shared by the pages.
 */

/** "3m ago", "in 2h": a timestamp relative to now. */
export function relativeTime(iso: string | null | undefined, now = Date.now()): string {
  if (iso === null || iso === undefined) return '—';
  const at = Date.parse(iso);
  if (Number.isNaN(at)) return iso;
  const seconds = Math.round((at - now) / 1000);
  const abs = Math.abs(seconds);
  const text =
    abs < 60
      ? `${abs}s`
      : abs < 3600
        ? `${Math.round(abs / 60)}m`
        : abs < 86_400
          ? `${Math.round(abs / 3600)}h`
          : `${Math.round(abs / 86_400)}d`;
  return seconds <= 0 ? `${text} ago` : `in ${text}`;
}

/** An ISO time as `2026-11-25 06:36:43 UTC`. */
export function utcTime(iso: string | null | undefined): string {
  if (iso === null || iso === undefined) return '—';
  return `${iso
    .replace('T', ' ')
    .replace(/\.\d+Z$/, '')
    .replace(/Z$/, '')} UTC`;
}

/** Bytes as `45.4 MB`. */
export function bytes(n: number | null | undefined): string {
  if (n === null || n === undefined) return '—';
  const units = ['B', 'KB', 'MB', 'GB', 'TB'];
  let value = n;
  let unit = 0;
  while (value >= 1000 && unit < units.length - 1) {
    value /= 1000;
    unit += 1;
  }
  return `${value.toFixed(unit === 0 ? 0 : 1)} ${units[unit]}`;
}

/** A duration between two ISO times as `1.2s`. */
export function elapsed(from: string | null | undefined, to: string | null | undefined): string {
  if (!from || !to) return '';
  return `${((Date.parse(to) - Date.parse(from)) / 1000).toFixed(1)}s`;
}

/** A number with at most `digits` decimals. */
export function num(n: number | null | undefined, digits = 2): string {
  if (n === null || n === undefined || Number.isNaN(n)) return '—';
  return Number.isInteger(n) ? String(n) : n.toFixed(digits);
}

/** A short commit. */
export function shortCommit(commit: string | null | undefined): string {
  return commit ? commit.slice(0, 12) : '—';
}

/**
 * A knowledge node id shortened for display: its last 8 characters. Node ids are UUIDv7s (ADR 0202):
 * their first characters are the write's time, shared by every node written in the same minute, and
 * the last ones are random. The admin search matches any part of an id, so the short form finds it.
 */
export function shortNodeId(id: string): string {
  return id.slice(-8);
}
