/**
 * Starts a Koa app on a real socket (or one handed over by the host agent) and stops it gracefully:
 * stop accepting, answer in-flight requests and those already on their way with `Connection:
 * close` (bounded), then close idle keep-alive connections. Upgrade requests go to the handlers
 * registered with {@link RunningServer.onUpgrade}; one that no handler takes gets an HTTP error
 * answer, and every upgraded socket is closed when the server closes (ADR 0017).
 */
import http from 'node:http';
import net, { type AddressInfo } from 'node:net';
import type { Duplex } from 'node:stream';
import type Koa from 'koa';
import { refuseUpgrade, type UpgradeHandler } from './upgrade.js';

/** How long a closing server waits for requests on their way over open connections. */
const IDLE_GRACE_MS = 300;

/** A listening HTTP server. */
export interface RunningServer {
  readonly server: http.Server;
  readonly port: number;
  readonly host: string;
  /** Base URL, e.g. `http://127.0.0.1:8800`. */
  readonly url: string;
  /**
   * Stops accepting, closes every upgraded socket (WebSockets never finish on their own), waits up
   * to `graceMs` for in-flight requests, then force-closes.
   */
  close(graceMs?: number): Promise<void>;
  /**
   * Adds an upgrade handler, asked after the ones added before it (before them with `first`);
   * returns its remover. An upgrade no handler takes is answered 404.
   */
  onUpgrade(handler: UpgradeHandler, options?: { readonly first?: boolean }): () => void;
  /** Upgraded sockets open now (served or being refused). */
  upgradedSockets(): number;
}

/** Options of {@link listen}. */
export interface ListenOptions {
  /**
   * Sees each request before the Koa app and returns true when it handled it (the wake gateway's
   * host-based routing); the Koa app gets every other request.
   */
  readonly intercept?: (req: http.IncomingMessage, res: http.ServerResponse) => boolean;
  /**
   * An already listening socket to serve instead of binding `host:port` (one the host agent handed
   * over across an API restart, ADR 0159); `server.listen(handle)` takes it as it is.
   */
  readonly handle?: object;
}

/** Listens on `host:port` (port 0 picks a free one). */
export async function listen(
  app: Koa,
  port: number,
  host = '127.0.0.1',
  options: ListenOptions = {},
): Promise<RunningServer> {
  const callback = app.callback();
  const intercept = options.intercept;
  let closingNow = false;
  const inFlight = new Set<http.ServerResponse>();
  const server = http.createServer((req, res) => {
    // While draining, every answer not yet started says `Connection: close`: a keep-alive client
    // opens its next request on a new connection (the next process's), not on one about to close.
    if (closingNow) res.shouldKeepAlive = false;
    inFlight.add(res);
    res.once('close', () => inFlight.delete(res));
    if (intercept === undefined || !intercept(req, res)) void callback(req, res);
  });
  server.keepAliveTimeout = 5_000;
  const upgradeHandlers: UpgradeHandler[] = [];
  const upgraded = new Set<Duplex>();
  server.on('upgrade', (req: http.IncomingMessage, socket: Duplex, head: Buffer) => {
    upgraded.add(socket);
    socket.once('close', () => upgraded.delete(socket));
    // A socket error after the handshake is the handler's to report; never an uncaught exception.
    socket.on('error', () => undefined);
    if (closingNow)
      return refuseUpgrade(socket, { status: 503, code: 'shutting_down', message: 'the server is shutting down' });
    for (const handler of [...upgradeHandlers]) if (handler(req, socket, head)) return;
    const path = new URL(req.url ?? '/', 'http://localhost').pathname;
    refuseUpgrade(socket, {
      status: 404,
      code: 'route_not_found',
      message: `no upgrade (WebSocket) endpoint at ${path}`,
      details: { path },
    });
  });
  await new Promise<void>((resolve, reject) => {
    server.once('error', reject);
    const listening = () => {
      server.off('error', reject);
      resolve();
    };
    if (options.handle !== undefined) server.listen(options.handle, listening);
    else server.listen(port, host, listening);
  });
  const address = server.address() as AddressInfo;
  const shownHost = address.family === 'IPv6' ? `[${address.address}]` : address.address;
  let closing: Promise<void> | undefined;
  return {
    server,
    port: address.port,
    host: address.address,
    url: `http://${shownHost}:${address.port}`,
    onUpgrade(handler, options = {}) {
      if (options.first) upgradeHandlers.unshift(handler);
      else upgradeHandlers.push(handler);
      return () => {
        const at = upgradeHandlers.indexOf(handler);
        if (at >= 0) upgradeHandlers.splice(at, 1);
      };
    },
    upgradedSockets: () => upgraded.size,
    close(graceMs = 10_000) {
      closing ??= new Promise<void>((resolve) => {
        closingNow = true;
        for (const res of inFlight) if (!res.headersSent) res.shouldKeepAlive = false;
        // Upgraded sockets are outside the HTTP server's tracking and would keep close() waiting
        // forever: a WebSocket has no response to finish, so it is closed now.
        for (const socket of upgraded) socket.destroy();
        const timer = setTimeout(() => {
          server.closeAllConnections();
          // A refusal a client never reads can sit unflushed: the deadline ends it too.
          for (const socket of upgraded) socket.destroy();
        }, graceMs);
        timer.unref();
        // A connection accepted just before the close, or a keep-alive one between two requests,
        // has a request on its way: it gets IDLE_GRACE_MS to arrive and be answered (with
        // `Connection: close`) before idle connections are closed, as their last answer ends.
        // `http.Server#close` would close idle connections at once (and reset those clients), so
        // the listener is closed as a plain `net.Server`.
        let sweep: NodeJS.Timeout | undefined;
        const grace = setTimeout(() => {
          // The HTTP close now: it closes idle connections and stops its timeout checks (the
          // listener is closed already; the callback takes that error).
          server.close(() => undefined);
          sweep = setInterval(() => server.closeIdleConnections(), 50);
          sweep.unref();
        }, IDLE_GRACE_MS);
        grace.unref();
        net.Server.prototype.close.call(server, () => {
          clearTimeout(timer);
          clearTimeout(grace);
          clearInterval(sweep);
          resolve();
        });
      });
      return closing;
    },
  };
}
