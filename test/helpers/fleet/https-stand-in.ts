/**
 * The HTTPS server under every stand-in: loopback only, JSON in and out, each request recorded
 * (method, path, headers, raw body) so a test can check exactly what the platform sent.
 */
import https from 'node:https';
import type http from 'node:http';
import type { AddressInfo } from 'node:net';
import type { TestCertificates } from './test-certificates.js';

/** One received request. */
export interface ReceivedRequest {
  readonly method: string;
  readonly path: string;
  readonly headers: http.IncomingHttpHeaders;
  readonly body: string;
}

/** What a handler answers; `hold` leaves the request unanswered (the socket stays open). */
export type StandInAnswer = { readonly status: number; readonly body?: unknown } | { readonly hold: true };

export interface HttpsStandIn {
  readonly url: string;
  readonly received: ReceivedRequest[];
  close(): Promise<void>;
}

/** Starts an HTTPS server on 127.0.0.1 with the test certificate. */
export async function startHttpsStandIn(
  certs: TestCertificates,
  handle: (request: ReceivedRequest) => StandInAnswer | Promise<StandInAnswer>,
): Promise<HttpsStandIn> {
  const received: ReceivedRequest[] = [];
  const server = https.createServer({ cert: certs.certPem, key: certs.keyPem }, (req, res) => {
    const chunks: Buffer[] = [];
    req.on('data', (chunk: Buffer) => chunks.push(chunk));
    req.on('end', () => {
      const request: ReceivedRequest = {
        method: req.method ?? 'GET',
        path: req.url ?? '/',
        headers: req.headers,
        body: Buffer.concat(chunks).toString('utf8'),
      };
      received.push(request);
      void Promise.resolve(handle(request)).then(
        (answer) => {
          if ('hold' in answer) return;
          res.writeHead(answer.status, { 'content-type': 'application/json' });
          res.end(answer.body === undefined ? '' : JSON.stringify(answer.body));
        },
        (error: unknown) => {
          res.writeHead(500, { 'content-type': 'application/json' });
          res.end(JSON.stringify({ error: String(error) }));
        },
      );
    });
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as AddressInfo;
  return {
    url: `https://localhost:${port}`,
    received,
    close: () =>
      new Promise<void>((resolve) => {
        server.closeAllConnections();
        server.close(() => resolve());
      }),
  };
}
