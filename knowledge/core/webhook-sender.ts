/**
 * Signed outbound webhooks with SSRF protection: the target's host is resolved, every address must
 * be public unless private targets are allowed by configuration, the connection is pinned to the
 * checked address (no second lookup to rebind), redirects are never followed, and each request has
 * a timeout. The body is signed with HMAC-SHA-256; the secret is only held for the call
 * (docs/adr/0033-handoff-webhooks.md).
 */
import { createHash, createHmac } from 'node:crypto';
import { lookup as dnsLookup } from 'node:dns/promises';
import http from 'node:http';
import https from 'node:https';
import { isIP, type LookupFunction } from 'node:net';
import { ValidationError } from '../../domain/errors.js';
import { blockedAddressReason } from '../../platform/outbound/outbound-guard.js';

/** Header carrying `sha256=<hex HMAC-SHA-256 of the raw body>`. */
export const SIGNATURE_HEADER = 'x-svc-signature-256';
/** Header naming the event type of the payload. */
export const EVENT_HEADER = 'x-svc-event';
/** Header carrying the delivery id (the digest event id for handoffs). */
export const DELIVERY_HEADER = 'x-svc-delivery';
/** Header carrying the attempt number, starting at 1. */
export const ATTEMPT_HEADER = 'x-svc-attempt';

/** Most bytes of a response body kept (and returned). */
export const RESPONSE_BODY_LIMIT = 64 * 1024;

/** `sha256=<hex>` HMAC-SHA-256 of `body` with `secret`. */
export function signBody(secret: string, body: string): string {
  return `sha256=${createHmac('sha256', secret).update(body, 'utf8').digest('hex')}`;
}

/** Hex SHA-256 of a text or bytes. */
export function sha256Hex(data: string | Buffer): string {
  return createHash('sha256').update(data).digest('hex');
}

/** A target URL whose address was checked. */
export interface CheckedTarget {
  readonly url: URL;
  readonly address: string;
  readonly family: 4 | 6;
}

/** Resolves names for {@link checkTarget}; replaceable in tests. */
export type Resolver = (host: string) => Promise<{ address: string; family: number }[]>;

const defaultResolver: Resolver = (host) => dnsLookup(host, { all: true, verbatim: true });

/**
 * Parses and checks a target URL: http or https, no credentials, and every resolved address public
 * unless `allowPrivate`. Throws a ValidationError (`target_not_allowed` or `invalid_target_url`).
 */
export async function checkTarget(raw: string, allowPrivate: boolean, resolve: Resolver = defaultResolver): Promise<CheckedTarget> {
  let url: URL;
  try {
    url = new URL(raw);
  } catch {
    throw new ValidationError('target_url: is not an absolute URL', { code: 'invalid_target_url' });
  }
  if (url.protocol !== 'http:' && url.protocol !== 'https:') throw new ValidationError(`target_url: scheme ${url.protocol} is not http or https`, { code: 'invalid_target_url' });
  if (url.username !== '' || url.password !== '') throw new ValidationError('target_url: must not carry credentials', { code: 'invalid_target_url' });
  const host = url.hostname.replace(/^\[|\]$/g, '');
  let addresses: { address: string; family: number }[];
  if (isIP(host) !== 0) {
    addresses = [{ address: host, family: isIP(host) }];
  } else {
    try {
      addresses = await resolve(host);
    } catch {
      throw new ValidationError(`target_url: host ${host} does not resolve`, { code: 'target_not_resolvable' });
    }
  }
  const first = addresses[0];
  if (!first) throw new ValidationError(`target_url: host ${host} has no address`, { code: 'target_not_resolvable' });
  if (!allowPrivate) {
    for (const a of addresses) {
      const reason = blockedAddressReason(a.address);
      if (reason !== undefined) {
        throw new ValidationError(`target_url: ${host} resolves to ${a.address}, a ${reason} address; set SVC_KNOWLEDGE_ALLOW_PRIVATE_TARGETS=true to allow it`, { code: 'target_not_allowed', details: { reason } });
      }
    }
  }
  return { url, address: first.address, family: first.family === 6 ? 6 : 4 };
}

/** What came back from one request. */
export interface SendOutcome {
  readonly statusCode: number | null;
  readonly success: boolean;
  readonly responseBody: string | null;
  readonly responseSha256: string | null;
  readonly error: string | null;
  readonly durationMs: number;
}

/** Posts `body` to a checked target, pinned to its checked address; 2xx is success, redirects are not followed. */
export function postJson(target: CheckedTarget, body: string, headers: Record<string, string>, timeoutMs: number): Promise<SendOutcome> {
  const started = performance.now();
  const pinned: LookupFunction = (_host, options, callback) => {
    if ((options as { all?: boolean }).all) (callback as unknown as (e: null, a: { address: string; family: number }[]) => void)(null, [{ address: target.address, family: target.family }]);
    else callback(null, target.address, target.family);
  };
  const client = target.url.protocol === 'https:' ? https : http;
  return new Promise<SendOutcome>((resolve) => {
    let settled = false;
    const finish = (o: Omit<SendOutcome, 'durationMs'>) => {
      if (settled) return;
      settled = true;
      resolve({ ...o, durationMs: Math.round(performance.now() - started) });
    };
    const req = client.request(target.url, {
      method: 'POST',
      lookup: pinned,
      headers: { 'content-type': 'application/json', 'content-length': String(Buffer.byteLength(body)), 'user-agent': 'svc-knowledge/1', ...headers },
    }, (res) => {
      const chunks: Buffer[] = [];
      let size = 0;
      res.on('data', (chunk: Buffer) => {
        if (size < RESPONSE_BODY_LIMIT) chunks.push(chunk.subarray(0, RESPONSE_BODY_LIMIT - size));
        size += chunk.length;
      });
      res.on('end', () => {
        const bytes = Buffer.concat(chunks);
        const status = res.statusCode ?? 0;
        const success = status >= 200 && status < 300;
        const redirect = status >= 300 && status < 400;
        finish({
          statusCode: status, success, responseBody: bytes.toString('utf8'), responseSha256: sha256Hex(bytes),
          error: success ? null : redirect ? `redirect to ${String(res.headers.location ?? '(no location)').slice(0, 200)} not followed` : `target answered ${status}`,
        });
      });
      res.on('error', (e) => finish({ statusCode: status(res.statusCode), success: false, responseBody: null, responseSha256: null, error: `response failed: ${e.message}` }));
    });
    req.setTimeout(timeoutMs, () => {
      req.destroy(new Error(`timed out after ${timeoutMs} ms`));
    });
    req.on('error', (e) => finish({ statusCode: null, success: false, responseBody: null, responseSha256: null, error: e.message }));
    req.end(body);
  });
}

function status(code: number | undefined): number | null {
  return code ?? null;
}
