/**
 * Kubernetes names: how job, group, service and port names become valid object names, label
 * values and port names, deterministically and without collisions.
 */
import { createHash } from 'node:crypto';

/** First `length` hex characters of the SHA-256 of `text`. */
export function shortHash(text: string, length = 8): string {
  return createHash('sha256').update(text).digest('hex').slice(0, length);
}

function sanitize(raw: string): string {
  return raw
    .toLowerCase()
    .replace(/[^a-z0-9-]+/g, '-')
    .replace(/-{2,}/g, '-')
    .replace(/^-+|-+$/g, '');
}

function withHash(base: string, raw: string, max: number): string {
  const hash = shortHash(raw);
  const head = base.slice(0, max - hash.length - 1).replace(/-+$/, '');
  return head === '' ? hash : `${head}-${hash}`;
}

/**
 * A DNS-1123 label (lower-case letters, digits and `-`, alphanumeric at both ends, at most `max`
 * characters). A name that is already valid is kept; one that had to be changed or truncated gets
 * an 8-hex hash of the original as suffix, so two different inputs never share a name.
 */
export function dnsLabel(raw: string, max = 63): string {
  const clean = sanitize(raw);
  if (clean === raw && clean.length > 0 && clean.length <= max) return clean;
  return withHash(clean, raw, max);
}

/** A DNS-1035 label (a {@link dnsLabel} that also starts with a letter), as Services need. */
export function dns1035Label(raw: string, max = 63): string {
  const label = dnsLabel(raw, max);
  return /^[a-z]/.test(label) ? label : dnsLabel(`s-${raw}`, max);
}

/**
 * A label value (at most 63 of letters, digits, `-`, `_`, `.`, alphanumeric at both ends); values
 * that do not fit are sanitized and hash-suffixed like {@link dnsLabel}.
 */
export function labelValue(raw: string): string {
  if (/^([A-Za-z0-9]([A-Za-z0-9._-]{0,61}[A-Za-z0-9])?)$/.test(raw)) return raw;
  return withHash(sanitize(raw), raw, 63);
}

/** A container port name (IANA service name: at most 15 of `a-z0-9-`, one letter at least, no `--`). */
export function portName(label: string): string {
  const clean = sanitize(label);
  if (clean === label && clean.length <= 15 && /[a-z]/.test(clean)) return clean;
  const hash = shortHash(label, 4);
  const head = clean.slice(0, 10).replace(/-+$/, '');
  return /[a-z]/.test(head) ? `${head}-${hash}` : `p-${hash}`;
}
