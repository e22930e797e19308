/**
 * A small HTTP client for tests: real `fetch` over a socket, JSON in and out.
 */

/** `fetch` that parses a JSON body (or returns text) and keeps status and headers. */
export async function request(
  url: string,
  init: RequestInit & { json?: unknown } = {},
): Promise<{ status: number; headers: Headers; body: any; text: string }> {
  const { json, ...rest } = init;
  const send = () =>
    fetch(url, {
      ...rest,
      ...(json === undefined
        ? {}
        : {
            body: JSON.stringify(json),
            headers: { 'content-type': 'application/json', ...(rest.headers as Record<string, string> | undefined) },
          }),
    });
  let response: Response;
  try {
    response = await send();
  } catch (error) {
    // A kept-alive connection the server closed as idle while this process was busy (a test file's
    // other tests share its event loop): a browser sends an idempotent request again, and so does this.
    const code = (error as { cause?: { code?: string } }).cause?.code ?? '';
    const idempotent = ['GET', 'HEAD'].includes((rest.method ?? 'GET').toUpperCase());
    if (!idempotent || !['UND_ERR_SOCKET', 'ECONNRESET'].includes(code)) throw error;
    response = await send();
  }
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
