/**
 * The one outbound HTTP POST of both services: the URL's host is resolved and checked by the
 * outbound guard under a policy, the connection goes to the address that was checked (no second
 * lookup to rebind), a fresh connection per request (a pooled socket could have been checked for
 * another request), redirects are never followed, and the socket times out when idle
 * (docs/adr/0135-one-outbound-guard.md).
 */
import http from 'node:http';
import https from 'node:https';
import tls from 'node:tls';
import type { LookupFunction } from 'node:net';
import { resolveTarget, type OutboundPolicy } from './outbound-guard.js';
import { OutboundTimeout } from '../errors.js';

/**
 * The policy of endpoints an operator configures (the event sink, the embedder, the reranker, the
 * extractor): any address is allowed, as it always was (model servers commonly run on loopback or a
 * private network); the request still goes through the guard's resolution and pinning.
 */
export const OPERATOR_CONFIGURED: OutboundPolicy = { allowPrivate: true };

/** What one pinned POST sends. */
export interface PinnedPost {
  readonly headers: Readonly<Record<string, string>>;
  readonly body: string | Buffer;
  readonly timeoutMs: number;
  /** Most response bytes kept (the rest is read and dropped); 0 discards the body. @default no limit */
  readonly bodyLimit?: number;
  /** Message of the {@link OutboundTimeout}. @default `timed out after <timeoutMs> ms` */
  readonly timeoutMessage?: string;
  /** Request method. @default POST */
  readonly method?: 'GET' | 'POST' | 'PUT';
  /** Extra CA certificates (PEM) trusted for an https target, besides the system's. */
  readonly ca?: string;
}

/** What came back. */
export interface PinnedResponse {
  readonly status: number;
  readonly headers: http.IncomingHttpHeaders;
  /** The kept bytes of the body (see `bodyLimit`). */
  readonly body: Buffer;
}

/** A lookup that answers the checked addresses whatever the host (all of them when asked for all). */
export function pinnedLookup(target: PinnedTarget): LookupFunction {
  const all = target.all ?? [{ address: target.address, family: target.family }];
  return (_host, options, callback) => {
    if ((options as { all?: boolean }).all)
      (callback as unknown as (e: null, a: readonly { address: string; family: number }[]) => void)(null, all);
    else callback(null, target.address, target.family);
  };
}

/** The checked address (and optionally every checked address) to connect to. */
export interface PinnedTarget {
  readonly address: string;
  readonly family: 4 | 6;
  readonly all?: readonly { readonly address: string; readonly family: 4 | 6 }[];
}

/**
 * POSTs to `url` after the guard approved its addresses under `policy`. Rejects with the guard's
 * OutboundRefused (or the resolver's error), an {@link OutboundTimeout}, or the connection's error.
 */
export async function pinnedPost(url: URL, policy: OutboundPolicy, request: PinnedPost): Promise<PinnedResponse> {
  return sendPinned(url, await resolveTarget(url, policy), request);
}

/** POSTs to `url`, connected to `target`, an address the guard approved for it. */
export function sendPinned(url: URL, target: PinnedTarget, request: PinnedPost): Promise<PinnedResponse> {
  const client = url.protocol === 'https:' ? https : http;
  const limit = request.bodyLimit ?? Number.POSITIVE_INFINITY;
  return new Promise<PinnedResponse>((resolve, reject) => {
    const req = client.request(
      url,
      {
        method: request.method ?? 'POST',
        headers: { ...request.headers, 'content-length': String(Buffer.byteLength(request.body)) },
        lookup: pinnedLookup(target),
        agent: false,
        ...(request.ca === undefined ? {} : { ca: [...tls.rootCertificates, request.ca] }),
      },
      (res) => {
        const chunks: Buffer[] = [];
        let size = 0;
        res.on('data', (chunk: Buffer) => {
          if (size < limit) chunks.push(chunk.subarray(0, Math.max(0, limit - size)));
          size += chunk.length;
        });
        res.on('end', () =>
          resolve({ status: res.statusCode ?? 0, headers: res.headers, body: Buffer.concat(chunks) }),
        );
        res.on('error', reject);
      },
    );
    req.setTimeout(request.timeoutMs, () =>
      req.destroy(new OutboundTimeout(request.timeoutMessage ?? `timed out after ${request.timeoutMs} ms`)),
    );
    req.on('error', reject);
    req.end(request.body);
  });
}
