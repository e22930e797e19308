/**
 * One raw HTTP/1.1 POST, so a test controls Content-Length and chunking (the fast paths before Koa
 * take only some framings: ADR 0200, ADR 0215).
 */
import http from 'node:http';

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
