/**
 * The CLI's client of the control plane API: base URL from `--api`, `SVC_API_URL`, or
 * `http://127.0.0.1:$SVC_PORT`; bearer token from `SVC_API_TOKEN`.
 */
export interface ApiClientOptions {
  readonly api?: string;
}

/** Base URL of the control plane the CLI talks to. */
export function apiBaseUrl(options: ApiClientOptions = {}): string {
  const explicit = options.api ?? process.env.SVC_API_URL;
  if (explicit) return explicit.replace(/\/+$/, '');
  return `http://127.0.0.1:${process.env.SVC_PORT ?? '8800'}`;
}

/** An API answer that was not 2xx, with the error body's message. */
export class ApiError extends Error {
  constructor(readonly status: number, readonly code: string, message: string) {
    super(message);
    this.name = 'ApiError';
  }
}

/** GETs `path` and returns the parsed JSON body; throws `ApiError` on a non-2xx answer. */
export async function apiGet<T>(path: string, options: ApiClientOptions = {}): Promise<T> {
  const base = apiBaseUrl(options);
  const token = process.env.SVC_API_TOKEN;
  let response: Response;
  try {
    response = await fetch(`${base}${path}`, { headers: token ? { authorization: `Bearer ${token}` } : {} });
  } catch (cause) {
    throw new ApiError(0, 'unreachable', `cannot reach the control plane at ${base} (is \`svc serve\` running? set --api or SVC_API_URL): ${(cause as Error).message}`);
  }
  const text = await response.text();
  let body: any;
  try {
    body = JSON.parse(text);
  } catch {
    body = undefined;
  }
  if (!response.ok) {
    throw new ApiError(response.status, body?.error?.code ?? 'http_error', body?.error?.message ?? `${response.status} ${response.statusText}`);
  }
  return body as T;
}
