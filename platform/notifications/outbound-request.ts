/**
 * Outbound HTTP: one POST to a checked target, pinned to the address the guard approved, with a
 * timeout, never following redirects (a 3xx is a failed delivery).
 */
import http from 'node:http';
import https from 'node:https';
import type { LookupFunction } from 'node:net';
import { resolveTarget, type OutboundPolicy } from '../outbound/outbound-guard.js';

/** Result of one delivery attempt. */
export interface DeliveryResult {
  readonly ok: boolean;
  readonly status: number;
  /** Why it failed; never contains secrets. */
  readonly error?: string;
}

export interface PostOptions {
  readonly headers: Readonly<Record<string, string>>;
  readonly body: string | Buffer;
  /** @default 10000 */
  readonly timeoutMs?: number;
}

/** POSTs `body` to `url` after the SSRF check (`policy` undefined skips it: operator-configured sink). */
export async function postTo(url: URL, options: PostOptions, policy?: OutboundPolicy): Promise<DeliveryResult> {
  let lookup: LookupFunction | undefined;
  if (policy !== undefined) {
    const target = await resolveTarget(url, policy);
    lookup = (_host, opts, callback) => {
      if ((opts as { all?: boolean }).all) (callback as unknown as (e: null, a: { address: string; family: number }[]) => void)(null, [{ address: target.address, family: target.family }]);
      else callback(null, target.address, target.family);
    };
  }
  const client = url.protocol === 'https:' ? https : http;
  return new Promise<DeliveryResult>((resolve) => {
    const req = client.request(url, {
      method: 'POST',
      headers: { ...options.headers, 'content-length': String(Buffer.byteLength(options.body)) },
      timeout: options.timeoutMs ?? 10_000,
      ...(lookup ? { lookup } : {}),
      agent: false,
    }, (res) => {
      res.resume();
      res.on('end', () => {
        const status = res.statusCode ?? 0;
        if (status >= 300 && status < 400) resolve({ ok: false, status, error: `redirect ${status} not followed` });
        else if (status >= 200 && status < 300) resolve({ ok: true, status });
        else resolve({ ok: false, status, error: `HTTP ${status}` });
      });
      res.on('error', (error) => resolve({ ok: false, status: 0, error: error.message }));
    });
    req.on('timeout', () => req.destroy(new Error('timed out')));
    req.on('error', (error) => resolve({ ok: false, status: 0, error: error.message }));
    req.end(options.body);
  });
}
