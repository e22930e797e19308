/**
 * Starts a Koa app on a real socket and stops it gracefully: stop accepting, let in-flight requests
 * finish (bounded), then close idle keep-alive connections.
 */
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import type Koa from 'koa';

/** A listening HTTP server. */
export interface RunningServer {
  readonly server: http.Server;
  readonly port: number;
  readonly host: string;
  /** Base URL, e.g. `http://127.0.0.1:8800`. */
  readonly url: string;
  /** Stops accepting, waits up to `graceMs` for in-flight requests, then force-closes. */
  close(graceMs?: number): Promise<void>;
}

/** Options of {@link listen}. */
export interface ListenOptions {
  /**
   * Sees each request before the Koa app and returns true when it handled it (the wake gateway's
   * host-based routing); the Koa app gets every other request.
   */
  readonly intercept?: (req: http.IncomingMessage, res: http.ServerResponse) => boolean;
}

/** Listens on `host:port` (port 0 picks a free one). */
export async function listen(app: Koa, port: number, host = '127.0.0.1', options: ListenOptions = {}): Promise<RunningServer> {
  const callback = app.callback();
  const intercept = options.intercept;
  const server = http.createServer(intercept === undefined ? callback : (req, res) => {
    if (!intercept(req, res)) void callback(req, res);
  });
  server.keepAliveTimeout = 5_000;
  await new Promise<void>((resolve, reject) => {
    server.once('error', reject);
    server.listen(port, host, () => {
      server.off('error', reject);
      resolve();
    });
  });
  const address = server.address() as AddressInfo;
  const shownHost = address.family === 'IPv6' ? `[${address.address}]` : address.address;
  let closing: Promise<void> | undefined;
  return {
    server,
    port: address.port,
    host: address.address,
    url: `http://${shownHost}:${address.port}`,
    close(graceMs = 10_000) {
      closing ??= new Promise<void>((resolve) => {
        const timer = setTimeout(() => server.closeAllConnections(), graceMs);
        timer.unref();
        // Keep-alive connections become idle as their last response ends: sweep them as they do.
        const sweep = setInterval(() => server.closeIdleConnections(), 50);
        sweep.unref();
        server.close(() => {
          clearTimeout(timer);
          clearInterval(sweep);
          resolve();
        });
        server.closeIdleConnections();
      });
      return closing;
    },
  };
}
