/**
 * Endpoint URLs as people copy them from other docs (`https://my-app.example.com`,
 * `https://trove.example.com:4173`): an http or https URL of a hostname, with an optional port and no
 * path. The platform routes hostnames, so such a URL stands for its hostname (ADR 0016).
 */

/** What an endpoint URL written as a URL says besides its hostname. */
export interface EndpointUrl {
  /** The hostname, lowercased. */
  readonly hostname: string;
  readonly scheme: 'http' | 'https';
  /** The port written after the hostname, if any (not checked against 1-65535 here). */
  readonly port?: number;
}

const LABEL = '[A-Za-z0-9]([A-Za-z0-9-]{0,61}[A-Za-z0-9])?';
const URL_FORM = new RegExp(
  `^(?<scheme>https?)://(?<hostname>(\\*\\.)?${LABEL}(\\.${LABEL})*)(:(?<port>[0-9]{1,5}))?/?$`,
  'i',
);

/**
 * Reads `text` as an endpoint URL (`http(s)://host[:port][/]`); undefined when it is a bare hostname
 * or not of that form.
 */
export function parseEndpointUrl(text: string): EndpointUrl | undefined {
  const match = URL_FORM.exec(text);
  if (match === null) return undefined;
  const groups = match.groups!;
  const scheme = groups.scheme!.toLowerCase() as 'http' | 'https';
  const port = groups.port === undefined ? undefined : Number(groups.port);
  return { hostname: groups.hostname!.toLowerCase(), scheme, ...(port === undefined ? {} : { port }) };
}

/** The hostname an endpoint `url` routes: the URL's hostname, or the text itself when it is one. */
export function endpointHostname(url: string): string {
  return parseEndpointUrl(url)?.hostname ?? url;
}
