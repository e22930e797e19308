/**
 * The pages' one HTTP client: same-origin JSON calls with the session's bearer token. A 401 flips
 * the page to its sign-in prompt (through {@link onSignInNeeded}) instead of showing a broken page.
 */
import { sessionToken } from './session.js';

/** An error answer of the API: `{ error: { code, message, details } }`. */
export class ApiError extends Error {
  constructor(
    readonly status: number,
    readonly code: string,
    message: string,
    readonly details: Record<string, unknown> = {},
  ) {
    super(message);
    this.name = 'ApiError';
  }
}

type Listener = (reason: 'missing' | 'rejected') => void;
const listeners = new Set<Listener>();

/** Subscribes to "a call was refused for want of a valid token"; returns the unsubscriber. */
export function onSignInNeeded(listener: Listener): () => void {
  listeners.add(listener);
  return () => listeners.delete(listener);
}

/** Options of one call. */
export interface CallOptions {
  readonly method?: 'GET' | 'POST' | 'PUT';
  readonly body?: unknown;
  readonly headers?: Record<string, string>;
  readonly signal?: AbortSignal;
}

async function call(path: string, options: CallOptions, accept: string): Promise<Response> {
  const headers: Record<string, string> = { Accept: accept, ...(options.headers ?? {}) };
  const token = sessionToken();
  if (token !== undefined) headers.Authorization = `Bearer ${token}`;
  if (options.body !== undefined) headers['Content-Type'] = 'application/json';
  const response = await fetch(path, {
    method: options.method ?? 'GET',
    headers,
    credentials: 'omit',
    cache: 'no-store',
    ...(options.body !== undefined ? { body: JSON.stringify(options.body) } : {}),
    ...(options.signal !== undefined ? { signal: options.signal } : {}),
  });
  if (response.status === 401) {
    for (const listener of listeners) listener(token === undefined ? 'missing' : 'rejected');
  }
  if (!response.ok) {
    let code = `http_${response.status}`;
    let message = response.statusText || `HTTP ${response.status}`;
    let details: Record<string, unknown> = {};
    try {
      const body = (await response.json()) as {
        error?: { code?: string; message?: string; details?: Record<string, unknown> };
      };
      code = body.error?.code ?? code;
      message = body.error?.message ?? message;
      details = body.error?.details ?? {};
    } catch {
      // Not the JSON error shape: keep the status text.
    }
    throw new ApiError(response.status, code, message, details);
  }
  return response;
}

/** Calls a JSON route and answers its parsed body. */
export async function api<T = any>(path: string, options: CallOptions = {}): Promise<T> {
  const response = await call(path, options, 'application/json');
  if (response.status === 204) return undefined as T;
  return (await response.json()) as T;
}

/** Calls a text route (the Prometheus exposition). */
export async function apiText(path: string, options: CallOptions = {}): Promise<string> {
  return (await call(path, options, 'text/plain')).text();
}

/** Fills `{name}` placeholders of a path, each value URL-encoded. */
export function fillPath(template: string, values: Record<string, string>): string {
  return template.replace(/\{(\w+)\}/g, (_, name: string) => encodeURIComponent(values[name] ?? ''));
}
