/**
 * A small HTTP client for tests: real `fetch` over a socket, JSON in and out.
 */

/** `fetch` that parses a JSON body (or returns text) and keeps status and headers. */
export async function request(
  url: string,
  init: RequestInit & { json?: unknown } = {},
): Promise<{ status: number; headers: Headers; body: any; text: string }> {
  const { json, ...rest } = init;
  const response = await fetch(url, {
    ...rest,
    ...(json === undefined
      ? {}
      : {
          body: JSON.stringify(json),
          headers: { 'content-type': 'application/json', ...(rest.headers as Record<string, string> | undefined) },
        }),
  });
  const text = await response.text();
  let body: unknown = text;
  if ((response.headers.get('content-type') ?? '').includes('json')) {
    try {
      body = JSON.parse(text);
    } catch {
      body = text;
    }
  }
  return { status: response.status, headers: response.headers, body, text };
}
