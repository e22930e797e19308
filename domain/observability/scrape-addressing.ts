/**
 * Scrape addressing: the address at which the metrics store reaches the control plane and the app
 * processes on this host.
 */

/** The host name container engines give a container for the host it runs on. */
export const HOST_GATEWAY = 'host.docker.internal';

/** Where the metrics store reaches this host. */
export interface ScrapeAddressing {
  /** `host:port` of the control plane's `/metrics` as the metrics store sees it. */
  readonly controlPlaneTarget: string;
  /** Host that replaces a loopback instance address (`127.0.0.1:<port>` becomes `<host>:<port>`). */
  readonly hostAlias: string;
}

/** Options of {@link scrapeAddressing}. */
export interface ScrapeAddressingOptions {
  /** Address the API binds to (`SVC_HOST`). */
  readonly bindHost: string;
  /** Port the API listens on (the real one, also when `SVC_PORT=0`). */
  readonly port: number;
  /** `SVC_OBSERVABILITY_TARGET`: `host:port` of the control plane as the metrics store sees it. */
  readonly override?: string | undefined;
}

/** True for an address only this host can reach: 127.0.0.0/8, ::1, localhost. */
export function isLoopbackHost(host: string): boolean {
  const bare = host.replace(/^\[(.*)\]$/, '$1').toLowerCase();
  return bare === 'localhost' || bare === '::1' || /^127\.\d{1,3}\.\d{1,3}\.\d{1,3}$/.test(bare);
}

/** True for the wildcard addresses 0.0.0.0 and ::, which bind every interface. */
export function isWildcardHost(host: string): boolean {
  const bare = host.replace(/^\[(.*)\]$/, '$1');
  return bare === '0.0.0.0' || bare === '::';
}

/** `host:port`, with an IPv6 host in brackets. */
export function hostPort(host: string, port: number): string {
  return host.includes(':') && !host.startsWith('[') ? `[${host}]:${port}` : `${host}:${port}`;
}

/**
 * The host part of `host:port` (`[v6]:port` keeps its brackets); undefined when `target` is not of
 * that form or the port is outside 1-65535.
 */
export function splitHostPort(target: string): { host: string; port: number } | undefined {
  const match = /^(\[[0-9A-Fa-f:.]+\]|[A-Za-z0-9](?:[A-Za-z0-9.-]{0,251}[A-Za-z0-9])?):(\d{1,5})$/.exec(target);
  if (!match) return undefined;
  const port = Number(match[2]);
  if (port < 1 || port > 65535) return undefined;
  return { host: match[1]!, port };
}

/**
 * Where the metrics store scrapes: an explicit override wins; an API bound to loopback (or to every
 * interface) is reached from a container through {@link HOST_GATEWAY}; any other bind address is
 * used as is.
 */
export function scrapeAddressing(options: ScrapeAddressingOptions): ScrapeAddressing {
  if (options.override !== undefined) {
    const parsed = splitHostPort(options.override);
    if (!parsed) throw new Error(`SVC_OBSERVABILITY_TARGET: "${options.override}" is not host:port`);
    return { controlPlaneTarget: options.override, hostAlias: parsed.host };
  }
  const host = isLoopbackHost(options.bindHost) || isWildcardHost(options.bindHost) ? HOST_GATEWAY : options.bindHost;
  return { controlPlaneTarget: hostPort(host, options.port), hostAlias: host };
}

/** The scrape address of an instance registered at `address:port`. */
export function instanceTarget(addressing: ScrapeAddressing, address: string, port: number): string {
  return isLoopbackHost(address) || isWildcardHost(address)
    ? hostPort(addressing.hostAlias, port)
    : hostPort(address, port);
}
