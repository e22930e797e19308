/**
 * A GET on a fresh connection (no keep-alive), optionally with another Host header: what a first
 * request to a woken or freshly deployed app sees.
 */
import http from 'node:http';

/** GET `url` (with `host` as its Host header when given); the status and the body as text. */
export function get(url: string, host?: string): Promise<{ status: number; body: string }> {
  return new Promise((resolve, reject) => {
    const req = http.request(url, { agent: false, headers: host ? { host } : {} }, (res) => {
      let body = '';
      res.setEncoding('utf8');
      res.on('data', (c: string) => (body += c));
      res.on('end', () => resolve({ status: res.statusCode ?? 0, body }));
    });
    req.on('error', reject);
    req.end();
  });
}
