/**
 * Secret safety of the operator views: credentials embedded in URLs are masked, and a last guard
 * replaces any known secret value that would still reach a response.
 */

/** What replaces a secret value. */
export const REDACTED = '[redacted]';

/** Secrets shorter than this are not searched for (they would match ordinary words). */
export const MIN_GUARDED_SECRET_LENGTH = 6;

const URL_USERINFO = /([a-z][a-z0-9+.-]*:\/\/)[^/\s@]+@/gi;

/** `text` with the user-info part of every URL (`https://user:token@host`) masked. */
export function redactCredentials(text: string): string {
  return text.replace(URL_USERINFO, `$1${REDACTED}@`);
}

/** `text` redacted and cut to `max` characters (an ellipsis marks the cut). */
export function shortText(text: string | null, max = 500): string | null {
  if (text === null) return null;
  const clean = redactCredentials(text);
  return clean.length <= max ? clean : `${clean.slice(0, max - 1)}…`;
}

function scrubString(text: string, secrets: readonly string[]): string {
  let out = text;
  for (const secret of secrets) if (out.includes(secret)) out = out.split(secret).join(REDACTED);
  return out;
}

/**
 * A deep copy of `value` in which every occurrence of a secret in a string (keys included) is
 * replaced by {@link REDACTED}. Secrets shorter than {@link MIN_GUARDED_SECRET_LENGTH} are ignored.
 */
export function scrubSecretValues<T>(value: T, secrets: readonly string[]): T {
  const guarded = secrets.filter((s) => s.length >= MIN_GUARDED_SECRET_LENGTH);
  if (guarded.length === 0) return value;
  const walk = (node: unknown): unknown => {
    if (typeof node === 'string') return scrubString(node, guarded);
    if (Array.isArray(node)) return node.map(walk);
    if (node !== null && typeof node === 'object') {
      const out: Record<string, unknown> = {};
      for (const [key, child] of Object.entries(node)) out[scrubString(key, guarded)] = walk(child);
      return out;
    }
    return node;
  };
  return walk(value) as T;
}

/** True when the JSON form of `value` contains one of `secrets` (guarded lengths only). */
export function containsSecretValue(value: unknown, secrets: readonly string[]): boolean {
  const text = JSON.stringify(value) ?? '';
  return secrets.some((s) => s.length >= MIN_GUARDED_SECRET_LENGTH && text.includes(s));
}

const SECRET_NAME = /(SECRET|PASSWORD|PASSWD|TOKEN|API_?KEY|PRIVATE_?KEY|CREDENTIAL)/i;

/** True when a variable name reads like it holds a secret (`DB_PASSWORD`, `STRIPE_API_KEY`). */
export function looksLikeSecretName(name: string): boolean {
  return SECRET_NAME.test(name);
}
