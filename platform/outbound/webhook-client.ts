/**
 * The knowledge store's outbound webhooks (handoff webhooks, the review evaluator, acquisition
 * connectors) through the outbound guard: the target's host is resolved, every address must pass
 * the guard unless private targets are allowed by configuration, the connection is pinned to the
 * checked address (no second lookup to rebind), redirects are never followed, and each request has
 * a timeout (docs/adr/0033-handoff-webhooks.md, docs/adr/0135-one-outbound-guard.md).
 */
import { isIP } from 'node:net';
import { ValidationError } from '../../domain/errors.js';
import {
  RESPONSE_BODY_LIMIT,
  sha256Hex,
  type CheckedTarget,
  type SendOutcome,
  type WebhookClient,
} from '../../domain/knowledge/webhook-port.js';
import { blockedAddressReason, defaultResolve, type OutboundPolicy } from './outbound-guard.js';
import { sendPinned } from './pinned-post.js';

/** {@link WebhookClient} over node:http, checking targets with the outbound guard and `policy`. */
export class GuardedWebhookClient implements WebhookClient {
  readonly #policy: OutboundPolicy;

  constructor(policy: OutboundPolicy) {
    this.#policy = policy;
  }

  checkTarget(raw: string): Promise<CheckedTarget> {
    return checkTarget(raw, this.#policy);
  }

  postJson(
    target: CheckedTarget,
    body: string,
    headers: Record<string, string>,
    timeoutMs: number,
  ): Promise<SendOutcome> {
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
  if (url.protocol !== 'http:' && url.protocol !== 'https:')
    throw new ValidationError(`target_url: scheme ${url.protocol} is not http or https`, {
      code: 'invalid_target_url',
    });
  if (url.username !== '' || url.password !== '')
    throw new ValidationError('target_url: must not carry credentials', { code: 'invalid_target_url' });
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
  if (first === undefined)
    throw new ValidationError(`target_url: host ${host} has no address`, { code: 'target_not_resolvable' });
  if (!policy.allowPrivate) {
    for (const address of addresses) {
      const reason = blockedAddressReason(address);
      if (reason !== undefined) {
        throw new ValidationError(
          `target_url: ${host} resolves to ${address}, a ${reason} address; set SVC_KNOWLEDGE_ALLOW_PRIVATE_TARGETS=true to allow it`,
          { code: 'target_not_allowed', details: { reason } },
        );
      }
    }
  }
  return { url, address: first, family: isIP(first) === 6 ? 6 : 4 };
}

/** Posts `body` to a checked target, pinned to its checked address; 2xx is success, redirects are not followed. */
export async function postJson(
  target: CheckedTarget,
  body: string,
  headers: Record<string, string>,
  timeoutMs: number,
): Promise<SendOutcome> {
  const started = performance.now();
  const durationMs = () => Math.round(performance.now() - started);
  try {
    const res = await sendPinned(target.url, target, {
      headers: { 'content-type': 'application/json', 'user-agent': 'svc-knowledge/1', ...headers },
      body,
      timeoutMs,
      bodyLimit: RESPONSE_BODY_LIMIT,
    });
    const status = res.status;
    const success = status >= 200 && status < 300;
    const redirect = status >= 300 && status < 400;
    return {
      statusCode: status,
      success,
      responseBody: res.body.toString('utf8'),
      responseSha256: sha256Hex(res.body),
      error: success
        ? null
        : redirect
          ? `redirect to ${String(res.headers.location ?? '(no location)').slice(0, 200)} not followed`
          : `target answered ${status}`,
      durationMs: durationMs(),
    };
  } catch (error) {
    return {
      statusCode: null,
      success: false,
      responseBody: null,
      responseSha256: null,
      error: (error as Error).message,
      durationMs: durationMs(),
    };
  }
}
