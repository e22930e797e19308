/**
 * The CLI's client of the control plane API: base URL from `--api`, `SVC_API_URL`, or
 * `http://127.0.0.1:$SVC_PORT`; bearer token from `SVC_API_TOKEN`.
 */
import http from 'node:http';
import https from 'node:https';
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
  let response: { status: number; statusText: string; text: string };
  try {
    response = await send(
      method,
      `${base}${path}`,
      {
        ...(method === 'POST' ? { 'content-type': 'application/json' } : {}),
        ...(token ? { authorization: `Bearer ${token}` } : {}),
        ...(options.idempotencyKey ? { 'idempotency-key': options.idempotencyKey } : {}),
      },
      method === 'POST' ? JSON.stringify(body ?? {}) : undefined,
    );
  } catch (cause) {
    const reason = (cause as NodeJS.ErrnoException).code ?? (cause as Error).message;
    throw new ApiError(
      0,
      'unreachable',
      `cannot reach the control plane at ${base} (${reason}); is \`svc serve\` running? set --api or SVC_API_URL`,
    );
  }
  const text = response.text;
  let parsed: any;
  try {
    parsed = JSON.parse(text);
  } catch {
    parsed = undefined;
  }
  if (response.status < 200 || response.status > 299) {
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

/**
 * One HTTP request with Node's own client: `fetch` would load undici's whole client on first use,
 * a fifth of a second of every command's start (ADR 0156).
 */
function send(
  method: string,
  url: string,
  headers: Record<string, string>,
  body: string | undefined,
): Promise<{ status: number; statusText: string; text: string }> {
  return new Promise((resolve, reject) => {
    const target = new URL(url);
    const client = target.protocol === 'https:' ? https : http;
    const request = client.request(
      target,
      { method, headers: { ...headers, ...(body === undefined ? {} : { 'content-length': Buffer.byteLength(body) }) } },
      (answer) => {
        const chunks: Buffer[] = [];
        answer.on('data', (chunk: Buffer) => chunks.push(chunk));
        answer.once('error', reject);
        answer.once('end', () =>
          resolve({
            status: answer.statusCode ?? 0,
            statusText: answer.statusMessage ?? '',
            text: Buffer.concat(chunks).toString('utf8'),
          }),
        );
      },
    );
    request.once('error', reject);
    request.end(body);
  });
}
