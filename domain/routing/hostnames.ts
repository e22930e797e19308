/**
 * Public hostnames: how endpoint URLs and Host headers are normalized and matched.
 */

/** Lower-cases a hostname and drops a trailing dot; `undefined` for something that is not a hostname. */
export function normalizeHostname(text: string): string | undefined {
  const host = text.trim().toLowerCase().replace(/\.$/, '');
  if (!/^(\*\.)?[a-z0-9]([a-z0-9-]{0,61}[a-z0-9])?(\.[a-z0-9]([a-z0-9-]{0,61}[a-z0-9])?)*$/.test(host))
    return undefined;
  return host;
}

/** The hostname of a `Host` header value (`name`, `name:port`, `[v6]:port`), normalized; undefined when malformed. */
export function hostOfHeader(header: string | undefined): string | undefined {
  if (header === undefined || header === '') return undefined;
  if (header.startsWith('[')) return undefined; // an IPv6 literal is never a public endpoint
  const name = header.replace(/:\d+$/, '');
  return normalizeHostname(name);
}

/** True for names that can never be public endpoints served by the gateway: IP literals and localhost. */
export function isLocalHostname(host: string): boolean {
  return host === 'localhost' || host.endsWith('.localhost') || /^\d+\.\d+\.\d+\.\d+$/.test(host);
}

/** True when `host` is matched by the endpoint pattern `pattern` (exact, or `*.suffix` for one or more labels). */
export function hostnameMatches(pattern: string, host: string): boolean {
  if (pattern.startsWith('*.')) {
    const suffix = pattern.slice(1);
    return host.endsWith(suffix) && host.length > suffix.length;
  }
  return pattern === host;
}
