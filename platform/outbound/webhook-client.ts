/**
 * The knowledge store's outbound webhooks (handoff webhooks, the review evaluator, acquisition
 * connectors) through the outbound guard: the target's host is resolved, every address must pass
 * the guard unless private targets are allowed by configuration, the connection is pinned to the
 * checked address (no second lookup to rebind), redirects are never followed, and each request has
 * a timeout (docs/adr/0033-handoff-webhooks.md, docs/adr/0135-one-outbound-guard.md).
 */
import http from 'node:http';
import https from 'node:https';
import { isIP, type LookupFunction } from 'node:net';
import { ValidationError } from '../../domain/errors.js';
import { RESPONSE_BODY_LIMIT, sha256Hex, type CheckedTarget, type SendOutcome, type WebhookClient } from '../../domain/knowledge/webhook-port.js';
import { blockedAddressReason, defaultResolve, type OutboundPolicy } from './outbound-guard.js';

/** {@link WebhookClient} over node:http, checking targets with the outbound guard and `policy`. */
export class GuardedWebhookClient implements WebhookClient {
  readonly #policy: OutboundPolicy;

  constructor(policy: OutboundPolicy) {
    this.#policy = policy;
  }

  checkTarget(raw: string): Promise<CheckedTarget> {
    return checkTarget(raw, this.#policy);
  }

  postJson(target: CheckedTarget, body: string, headers: Record<string, string>, timeoutMs: number): Promise<SendOutcome> {
    return postJson(target, body, headers, timeoutMs);
  }
}

/**
 * Parses and checks a target URL: http or https, no credentials, and every resolved address
 * allowed by the guard unless `policy.allowPrivate`. Throws a ValidationError (`target_not_allowed`,
 * `target_not_resolvable` or `invalid_target_url`).
 */
export async function checkTarget(raw: string, policy: OutboundPolicy): Promise<CheckedTarget> {
  let url: URL;
  try {
    url = new URL(raw);
  } catch {
    throw new ValidationError('target_url: is not an absolute URL', { code: 'invalid_target_url' });
  }
  if (url.protocol !== 'http:' && url.protocol !== 'https:') throw new ValidationError(`target_url: scheme ${url.protocol} is not http or https`, { code: 'invalid_target_url' });
  if (url.username !== '' || url.password !== '') throw new ValidationError('target_url: must not carry credentials', { code: 'invalid_target_url' });
  const host = url.hostname.replace(/^\[|\]$/g, '');
  let addresses: readonly string[];
  if (isIP(host) !== 0) {
    addresses = [host];
  } else {
    try {
      addresses = await (policy.resolve ?? defaultResolve)(host);
    } catch {
      throw new ValidationError(`target_url: host ${host} does not resolve`, { code: 'target_not_resolvable' });
    }
  }
  const first = addresses[0];
  if (first === undefined) throw new ValidationError(`target_url: host ${host} has no address`, { code: 'target_not_resolvable' });
  if (!policy.allowPrivate) {
    for (const address of addresses) {
      const reason = blockedAddressReason(address);
      if (reason !== undefined) {
        throw new ValidationError(`target_url: ${host} resolves to ${address}, a ${reason} address; set SVC_KNOWLEDGE_ALLOW_PRIVATE_TARGETS=true to allow it`, { code: 'target_not_allowed', details: { reason } });
      }
    }
  }
  return { url, address: first, family: isIP(first) === 6 ? 6 : 4 };
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
