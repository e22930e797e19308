/**
 * A local HTTP receiver standing in for external event sinks and notification providers: it
 * records exactly what arrives (method, path, headers, raw body) and answers with a status the
 * test controls.
 */
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import type { ExecutionContext } from 'ava';

/** One received request. */
export interface Received {
  readonly method: string;
  readonly path: string;
  readonly headers: http.IncomingHttpHeaders;
  readonly body: string;
}

/** A running receiver. */
export interface Receiver {
  readonly url: string;
  readonly received: Received[];
  /** Status answered to the next requests. @default 200 */
  status: number;
  /** Extra response headers (e.g. a redirect Location). */
  responseHeaders: Record<string, string>;
  /** Resolves when at least `count` requests matched `filter`. */
  waitFor(count: number, filter?: (r: Received) => boolean, timeoutMs?: number): Promise<Received[]>;
}

/** Starts a receiver on 127.0.0.1, closed in teardown. */
export async function startReceiver(t: ExecutionContext): Promise<Receiver> {
  const waiters: (() => void)[] = [];
  const receiver: Receiver = {
    url: '',
    received: [],
    status: 200,
    responseHeaders: {},
    waitFor(count, filter = () => true, timeoutMs = 20_000) {
      return new Promise((resolve, reject) => {
        const timer = setTimeout(
          () =>
            reject(new Error(`receiver got ${receiver.received.filter(filter).length} of ${count} expected requests`)),
          timeoutMs,
        );
        const probe = () => {
          const matched = receiver.received.filter(filter);
          if (matched.length >= count) {
            clearTimeout(timer);
            resolve(matched);
            return true;
          }
          return false;
        };
        if (!probe())
          waiters.push(function again() {
            if (!probe()) waiters.push(again);
          });
      });
    },
  };
  const server = http.createServer((req, res) => {
    const chunks: Buffer[] = [];
    req.on('data', (c: Buffer) => chunks.push(c));
    req.on('end', () => {
      res.writeHead(receiver.status, { 'content-type': 'application/json', ...receiver.responseHeaders });
      res.end('{}');
      receiver.received.push({
        method: req.method ?? '',
        path: req.url ?? '',
        headers: req.headers,
        body: Buffer.concat(chunks).toString('utf8'),
      });
      for (const w of waiters.splice(0)) w();
    });
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  t.teardown(
    () =>
      new Promise<void>((resolve) => {
        server.closeAllConnections();
        server.close(() => resolve());
      }),
  );
  (receiver as { url: string }).url = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
  return receiver;
}
