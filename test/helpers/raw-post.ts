/**
 * One raw HTTP/1.1 POST, so a test controls Content-Length and chunking (the fast paths before Koa
 * take only some framings: ADR 0200, ADR 0215).
 */
import http from 'node:http';
import type { ExecutionContext } from 'ava';

/** Sends `options.body` to `base + path`; the answer, its JSON body parsed (an empty body is ''). */
export function rawPost(
  base: string,
  path: string,
  options: { body: string; headers?: Record<string, string>; chunked?: boolean },
): Promise<{ status: number; headers: http.IncomingHttpHeaders; body: any }> {
  return new Promise((resolve, reject) => {
    const req = http.request(
      `${base}${path}`,
      {
        method: 'POST',
        headers: {
          'content-type': 'application/json',
          ...(options.chunked ? {} : { 'content-length': String(Buffer.byteLength(options.body)) }),
          ...options.headers,
        },
      },
      (res) => {
        const chunks: Buffer[] = [];
        res.on('data', (c: Buffer) => chunks.push(c));
        res.on('end', () => {
          const text = Buffer.concat(chunks).toString('utf8');
          resolve({ status: res.statusCode!, headers: res.headers, body: text === '' ? '' : JSON.parse(text) });
        });
      },
    );
    req.on('error', reject);
    if (options.chunked) req.write(options.body.slice(0, 1));
    req.end(options.chunked ? options.body.slice(1) : options.body);
  });
}

/** A {@link rawPost} answer. */
export type RawAnswer = Awaited<ReturnType<typeof rawPost>>;

/**
 * Sends each request to a fast path (`path`) and to the Koa route behind it (`path?via=koa`: a query
 * string sends it past the fast path), and checks that both answer alike: status, body, error code,
 * content type, the named headers and the set of header names.
 */
export function fastPathBesideKoa(t: ExecutionContext, base: string, path: string) {
  const both = async (request: Parameters<typeof rawPost>[2]): Promise<[RawAnswer, RawAnswer]> => [
    await rawPost(base, path, request),
    await rawPost(base, `${path}?via=koa`, request),
  ];
  const same = (
    label: string,
    [a, b]: [RawAnswer, RawAnswer],
    status: number,
    code?: string,
    headers: string[] = [],
  ): void => {
    t.is(a.status, status, `${label}: ${JSON.stringify(a.body)}`);
    t.is(b.status, status, `${label} (Koa): ${JSON.stringify(b.body)}`);
    t.deepEqual(a.body, b.body, label);
    if (code !== undefined) t.is(a.body.error.code, code, label);
    for (const name of ['content-type', ...headers]) t.is(a.headers[name], b.headers[name], `${label}: ${name}`);
    t.deepEqual(Object.keys(a.headers).sort(), Object.keys(b.headers).sort(), `${label}: header names`);
  };
  return { both, same };
}
