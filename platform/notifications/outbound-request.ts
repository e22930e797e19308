/**
 * Outbound HTTP: one POST to a checked target, pinned to the address the guard approved, with a
 * timeout, never following redirects (a 3xx is a failed delivery).
 */
import { resolveTarget, type OutboundPolicy, type ResolvedTarget } from '../outbound/outbound-guard.js';
import { OPERATOR_CONFIGURED, sendPinned } from '../outbound/pinned-post.js';

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

/**
 * POSTs `body` to `url` through the outbound guard under `policy` (a refusal rejects with
 * OutboundRefused). Without a policy the target is operator-configured (the event sink): any address,
 * and every failure, name resolution included, is a failed delivery.
 */
export async function postTo(url: URL, options: PostOptions, policy?: OutboundPolicy): Promise<DeliveryResult> {
  let target: ResolvedTarget;
  if (policy !== undefined) {
    target = await resolveTarget(url, policy);
  } else {
    try {
      target = await resolveTarget(url, OPERATOR_CONFIGURED);
    } catch (error) {
      return { ok: false, status: 0, error: (error as Error).message };
    }
  }
  try {
    const res = await sendPinned(url, target, {
      headers: options.headers,
      body: options.body,
      timeoutMs: options.timeoutMs ?? 10_000,
      bodyLimit: 0,
      timeoutMessage: 'timed out',
    });
    if (res.status >= 300 && res.status < 400)
      return { ok: false, status: res.status, error: `redirect ${res.status} not followed` };
    if (res.status >= 200 && res.status < 300) return { ok: true, status: res.status };
    return { ok: false, status: res.status, error: `HTTP ${res.status}` };
  } catch (error) {
    return { ok: false, status: 0, error: (error as Error).message };
  }
}
