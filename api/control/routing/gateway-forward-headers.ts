/**
 * The headers the wake gateway forwards: hop-by-hop headers never cross it, edge identity and
 * forwarded headers are trusted only from the loopback boundary, and the X-Forwarded-* headers
 * are extended as a conventional proxy does.
 */
import type http from 'node:http';

/** Identity headers an edge access layer sets; trusted only from the loopback boundary. */
export const EDGE_IDENTITY_HEADERS = [
  'edge-access-jwt-assertion',
  'edge-access-authenticated-user-email',
  'cf-access-jwt-assertion',
  'cf-access-authenticated-user-email',
  'cf-access-client-id',
  'cf-access-client-secret',
  'cf-connecting-ip',
  'true-client-ip',
  'x-real-ip',
];
const FORWARDED_HEADERS = ['x-forwarded-for', 'x-forwarded-host', 'x-forwarded-proto', 'x-forwarded-port', 'forwarded'];
/** Request headers that only come from a trusted (loopback) peer. */
export const UNTRUSTED_DROPPED = new Set([...EDGE_IDENTITY_HEADERS, ...FORWARDED_HEADERS]);
/**
 * Hop-by-hop headers (RFC 9110 7.6.1), never forwarded in either direction; `expect` is answered
 * by the gateway's own server, `proxy-authorization` is meant for a proxy, not the app.
 */
const HOP_BY_HOP = new Set([
  'connection',
  'keep-alive',
  'proxy-connection',
  'proxy-authorization',
  'transfer-encoding',
  'te',
  'trailer',
  'upgrade',
  'expect',
  'http2-settings',
]);

/** True when the direct socket peer is loopback (the trusted boundary: a local tunnel daemon or proxy). */
export function isLoopbackPeer(req: http.IncomingMessage): boolean {
  const address = req.socket.remoteAddress ?? '';
  return address === '::1' || address.startsWith('127.') || address.startsWith('::ffff:127.');
}

/** The header names a Connection header lists (hop-by-hop by declaration); undefined for the usual bare values. */
function connectionTokens(connection: string | string[] | undefined): Set<string> | undefined {
  if (connection === undefined || connection === 'keep-alive' || connection === 'close') return undefined;
  return new Set(
    (Array.isArray(connection) ? connection.join(',') : connection)
      .toLowerCase()
      .split(',')
      .map((name) => name.trim()),
  );
}

/** The response headers sent to the client: the upstream's minus hop-by-hop ones, plus the gateway's. */
export function responseHeaders(headers: http.IncomingHttpHeaders, action: string): http.OutgoingHttpHeaders {
  const out: http.OutgoingHttpHeaders = {};
  const named = connectionTokens(headers.connection);
  for (const name in headers) if (!HOP_BY_HOP.has(name) && !named?.has(name)) out[name] = headers[name];
  out['x-svc-wake-gateway'] = 'true';
  out['x-svc-wake-action'] = action;
  return out;
}

/** True when the request carries a body (a length above zero or a transfer coding). */
export function hasBody(req: http.IncomingMessage): boolean {
  const length = req.headers['content-length'];
  return req.headers['transfer-encoding'] !== undefined || (length !== undefined && length !== '0');
}

/**
 * The headers sent upstream: hop-by-hop headers (and any the Connection header names) dropped,
 * edge identity and forwarded headers dropped unless the peer is the trusted loopback boundary,
 * X-Forwarded-For/-Port/-Proto extended and X-Forwarded-Host set, as a conventional proxy does.
 */
export function forwardHeaders(
  req: http.IncomingMessage,
  routed: { readonly explicit: boolean; readonly host: string },
): Record<string, string | string[]> {
  const trusted = isLoopbackPeer(req);
  const named = connectionTokens(req.headers.connection);
  const headers: Record<string, string | string[]> = {};
  const incoming = req.headers;
  for (const name in incoming) {
    const value = incoming[name];
    if (value === undefined || HOP_BY_HOP.has(name) || named?.has(name) || (!trusted && UNTRUSTED_DROPPED.has(name)))
      continue;
    headers[name] = value;
  }
  // The explicit form forwards the Host of the public endpoint, as the edge would have sent it.
  if (routed.explicit) headers.host = routed.host;
  const forwardedFor = headers['x-forwarded-for'];
  headers['x-forwarded-for'] =
    forwardedFor === undefined
      ? (req.socket.remoteAddress ?? '')
      : `${String(forwardedFor)},${req.socket.remoteAddress ?? ''}`;
  const forwardedPort = headers['x-forwarded-port'];
  const port = String(req.socket.localPort ?? '');
  headers['x-forwarded-port'] = forwardedPort === undefined ? port : `${String(forwardedPort)},${port}`;
  const forwardedProto = headers['x-forwarded-proto'];
  headers['x-forwarded-proto'] = forwardedProto === undefined ? 'http' : `${String(forwardedProto)},http`;
  headers['x-forwarded-host'] ??= headers.host ?? '';
  return headers;
}
