/**
 * The CLI's client of the control plane API: base URL from `--api`, `SVC_API_URL`, or
 * `http://127.0.0.1:$SVC_PORT`; bearer token from `SVC_API_TOKEN`.
 */
import { ApiError } from './cli-error.js';

export interface ApiClientOptions {
  readonly api?: string;
}

/** Base URL of the control plane the CLI talks to. */
export function apiBaseUrl(options: ApiClientOptions = {}): string {
  const explicit = options.api ?? process.env.SVC_API_URL;
  if (explicit) return explicit.replace(/\/+$/, '');
  return `http://127.0.0.1:${process.env.SVC_PORT ?? '8800'}`;
}

/** Options of one call: the API address and, for mutations, an Idempotency-Key. */
export interface ApiCallOptions extends ApiClientOptions {
  readonly idempotencyKey?: string;
}

async function call<T>(
  method: 'GET' | 'POST' | 'DELETE',
  path: string,
  body: unknown,
  options: ApiCallOptions,
): Promise<T> {
  const base = apiBaseUrl(options);
  const token = process.env.SVC_API_TOKEN;
  let response: Response;
  try {
    response = await fetch(`${base}${path}`, {
      method,
      headers: {
        ...(method === 'POST' ? { 'content-type': 'application/json' } : {}),
        ...(token ? { authorization: `Bearer ${token}` } : {}),
        ...(options.idempotencyKey ? { 'idempotency-key': options.idempotencyKey } : {}),
      },
      ...(method === 'POST' ? { body: JSON.stringify(body ?? {}) } : {}),
    });
  } catch (cause) {
    // fetch says only "fetch failed"; the reason (ECONNREFUSED, ENOTFOUND, ...) is its cause.
    const inner = (cause as Error & { cause?: { code?: string; message?: string } }).cause;
    const reason = inner?.code ?? inner?.message ?? (cause as Error).message;
    throw new ApiError(
      0,
      'unreachable',
      `cannot reach the control plane at ${base} (${reason}); is \`svc serve\` running? set --api or SVC_API_URL`,
    );
  }
  const text = await response.text();
  let parsed: any;
  try {
    parsed = JSON.parse(text);
  } catch {
    parsed = undefined;
  }
  if (!response.ok) {
    const details = parsed?.error?.details;
    throw new ApiError(
      response.status,
      parsed?.error?.code ?? 'http_error',
      parsed?.error?.message ?? `${response.status} ${response.statusText}`,
      typeof details === 'object' && details !== null && !Array.isArray(details)
        ? (details as Record<string, unknown>)
        : {},
    );
  }
  return parsed as T;
}

/** GETs `path` and returns the parsed JSON body; throws `ApiError` on a non-2xx answer. */
export function apiGet<T>(path: string, options: ApiClientOptions = {}): Promise<T> {
  return call<T>('GET', path, undefined, options);
}

/** POSTs `body` as JSON to `path` and returns the parsed answer; throws `ApiError` on a non-2xx answer. */
export function apiPost<T>(path: string, body: unknown, options: ApiCallOptions = {}): Promise<T> {
  return call<T>('POST', path, body, options);
}

/** DELETEs `path` and returns the parsed answer; throws `ApiError` on a non-2xx answer. */
export function apiDelete<T>(path: string, options: ApiClientOptions = {}): Promise<T> {
  return call<T>('DELETE', path, undefined, options);
}
