/**
 * The wake gateway at the HTTP edge: a streaming reverse proxy in front of the Koa app. Requests
 * whose Host matches a public endpoint, and the explicit form `/api/wake-gateway/{hostname}/{path}`,
 * are handled here; everything else goes to the API. Requests are forwarded with undici (pooled
 * keep-alive connections, bodies streamed both ways); WebSocket upgrades go through http-proxy-3
 * (ADR 0094). The upstream is always a registry instance of the mapped process, never a URL taken
 * from the request.
 */
import type http from 'node:http';
import type { Duplex } from 'node:stream';
import { ProxyServer } from 'http-proxy-3';
import { Agent } from 'undici';
import { isDomainError, UnauthorizedError, ValidationError, type DomainError } from '../../../domain/errors.js';
import {
  DEFAULT_WAKE_TIMEOUT_MS,
  hostOfHeader,
  isLocalHostname,
  normalizeHostname,
  wakeTimeoutMs,
} from '../../../domain/routing/index.js';
import type { ReadyUpstream, WakeGateway, WakeTarget } from '../../../controllers/routing/wake-gateway.js';
import type { ServiceInstance } from '../../../domain/registry/index.js';
import type { AccessObservations } from '../../../controllers/routing/access-observations.js';
import type { LoggerPort as Logger } from '../../../domain/logger.js';
import { secretEquals, sha256Hex } from '../../http/bearer.js';
import { traceMark } from '../../../domain/observability/trace-marks.js';
import {
  forwardHeaders,
  hasBody,
  isLoopbackPeer,
  responseHeaders,
  UNTRUSTED_DROPPED,
} from './gateway-forward-headers.js';
import { rejectUpgrade, sendError, wakeFailure } from './gateway-error-answers.js';

/** Path other upgrade listeners see on an upgrade the gateway claimed. */
const CLAIMED_UPGRADE_PATH = '/.svc-wake-gateway/claimed-upgrade';

/** Prefix of the explicit-path form. */
export const WAKE_GATEWAY_PREFIX = '/api/wake-gateway/';

export interface WakeGatewayProxyOptions {
  readonly gateway: WakeGateway;
  readonly access: AccessObservations;
  readonly logger: Logger;
  /** The control token; the explicit form needs it when set (and it is never forwarded). */
  readonly apiToken: string | undefined;
  /** Default readiness wait. @default 30000 */
  readonly defaultTimeoutMs?: number;
}

/** The gateway's handlers for the HTTP server. */
export interface WakeGatewayProxy {
  /** Handles the request when it is gateway traffic (returns true), else leaves it to the API. */
  handleRequest(req: http.IncomingMessage, res: http.ServerResponse): boolean;
  /** Handles a WebSocket upgrade for gateway traffic (returns true), else leaves it alone. */
  handleUpgrade(req: http.IncomingMessage, socket: Duplex, head: Buffer): boolean;
  close(): void;
}

interface Routed {
  readonly target: WakeTarget;
  readonly host: string;
  /** The path and query to forward (gateway query parameters removed). */
  readonly url: string;
  readonly timeoutMs: number;
  readonly explicit: boolean;
}

/** Creates the proxy handlers. */
export function createWakeGatewayProxy(options: WakeGatewayProxyOptions): WakeGatewayProxy {
  const tokenHash = options.apiToken === undefined ? undefined : sha256Hex(options.apiToken);
  // Plain requests: undici's pooled keep-alive connections per upstream origin. No body timeout, so
  // long-lived streams (server-sent events, downloads) are not cut; the client's close aborts them.
  const upstream = new Agent({ keepAliveTimeout: 4_000, bodyTimeout: 0, headersTimeout: 300_000 });
  // Upgrades: one http-proxy-3 server per upstream origin.
  const wsProxies = new Map<string, ProxyServer>();
  const wsProxyFor = (address: string, port: number): ProxyServer => {
    const target = `http://${address}:${port}`;
    let proxy = wsProxies.get(target);
    if (!proxy) {
      proxy = new ProxyServer({ target, xfwd: true, ws: true });
      proxy.on('error', () => undefined);
      if (wsProxies.size > 1024) wsProxies.clear();
      wsProxies.set(target, proxy);
    }
    return proxy;
  };

  const upstreamFailed = (res: http.ServerResponse, routed: Routed, error: Error): void => {
    if (res.destroyed) return;
    options.logger.warn(
      { err: error, app: routed.target.app, hostname: routed.target.hostname },
      'wake gateway: upstream failed',
    );
    if (!res.headersSent)
      sendError(res, {
        status: 502,
        code: 'upstream_unavailable',
        message: `the upstream of ${routed.target.hostname} did not answer`,
        details: { hostname: routed.target.hostname },
        headers: {},
      });
    else res.destroy();
  };

  const forward = (
    req: http.IncomingMessage,
    res: http.ServerResponse,
    routed: Routed,
    instance: ServiceInstance,
    action: string,
  ): void => {
    const origin = `http://${instance.address.includes(':') ? `[${instance.address}]` : instance.address}:${instance.port}`;
    const body = hasBody(req) ? req : null;
    upstream.stream(
      { origin, method: req.method ?? 'GET', path: routed.url, headers: forwardHeaders(req, routed), body },
      ({ statusCode, headers }) => {
        res.writeHead(statusCode, responseHeaders(headers, action));
        return res;
      },
      (error) => {
        if (error !== null) upstreamFailed(res, routed, error);
      },
    );
  };

  // Host header values seen recently and their normalized hostnames: a pure function, cached so a
  // keep-alive client's requests skip the parsing.
  const hostCache = new Map<string, string | undefined>();
  const hostOf = (header: string | undefined): string | undefined => {
    if (header === undefined) return undefined;
    if (hostCache.has(header)) return hostCache.get(header);
    const host = hostOfHeader(header);
    if (hostCache.size >= 1024) hostCache.clear();
    hostCache.set(header, host);
    return host;
  };

  const route = (req: http.IncomingMessage): Routed | DomainError | undefined => {
    const rawUrl = req.url ?? '/';
    // Only origin-form targets (`/path?query`): an absolute-form URL never selects an upstream.
    if (!rawUrl.startsWith('/'))
      return hostOf(req.headers.host) !== undefined && options.gateway.resolve(hostOf(req.headers.host)!) !== undefined
        ? new ValidationError('the request target must be a path', { code: 'invalid_request_target' })
        : undefined;
    const explicit = rawUrl.startsWith(WAKE_GATEWAY_PREFIX);
    let host: string | undefined;
    let rest: string;
    if (explicit) {
      const after = rawUrl.slice(WAKE_GATEWAY_PREFIX.length);
      const cut = after.search(/[/?]/);
      const name = cut === -1 ? after : after.slice(0, cut);
      host = normalizeHostname(decodeURIComponent(name));
      if (host === undefined)
        return new ValidationError(`"${name}" is not a hostname`, {
          code: 'invalid_hostname',
          details: { hostname: name },
        });
      rest = cut === -1 ? '/' : after.slice(cut);
      if (!rest.startsWith('/')) rest = `/${rest}`;
    } else {
      host = hostOf(req.headers.host);
      if ((host === undefined || options.gateway.resolve(host) === undefined) && isLoopbackPeer(req)) {
        const forwarded = req.headers['x-forwarded-host'];
        const first = (Array.isArray(forwarded) ? forwarded[0] : forwarded)?.split(',')[0]?.trim();
        const viaProxy = hostOfHeader(first);
        if (viaProxy !== undefined && options.gateway.resolve(viaProxy) !== undefined) host = viaProxy;
      }
      if (host === undefined || isLocalHostname(host)) return undefined;
      rest = rawUrl;
    }
    const target = options.gateway.resolve(host);
    if (target === undefined) {
      if (!explicit) return undefined;
      return new ValidationError(`${host} is not a public endpoint of any app`, {
        code: 'unknown_endpoint',
        details: { hostname: host },
      });
    }
    // The query is only parsed (and re-encoded) when it carries the gateway's own parameter.
    if (!rest.includes('wakeTimeout=')) {
      return { target, host, url: rest, timeoutMs: options.defaultTimeoutMs ?? DEFAULT_WAKE_TIMEOUT_MS, explicit };
    }
    const [pathname = '/', query] = splitOnce(rest, '?');
    const params = new URLSearchParams(query ?? '');
    let timeoutMs: number;
    try {
      timeoutMs = wakeTimeoutMs(params.get('wakeTimeout') ?? undefined, options.defaultTimeoutMs);
    } catch (error) {
      return error as DomainError;
    }
    params.delete('wakeTimeout');
    const remaining = params.toString();
    return { target, host, url: remaining === '' ? pathname : `${pathname}?${remaining}`, timeoutMs, explicit };
  };

  const authorize = (req: http.IncomingMessage, routed: Routed): DomainError | undefined => {
    if (!routed.explicit || tokenHash === undefined) return undefined;
    const match = /^Bearer\s+(\S+)\s*$/i.exec(req.headers.authorization ?? '');
    if (match?.[1] !== undefined && secretEquals(match[1], tokenHash)) {
      // The control token authorizes the gateway call; it is not the app's business.
      delete req.headers.authorization;
      return undefined;
    }
    return new UnauthorizedError(
      match ? 'the bearer token is not valid' : 'this endpoint needs Authorization: Bearer <token>',
      { code: match ? 'invalid_credentials' : 'missing_credentials' },
    );
  };

  /** For upgrades (http-proxy-3 forwards `req.headers` as they are). */
  const sanitize = (req: http.IncomingMessage, routed: Routed): void => {
    if (!isLoopbackPeer(req)) {
      for (const name of UNTRUSTED_DROPPED) delete req.headers[name];
    }
    // The explicit form forwards the Host of the public endpoint, as the edge would have sent it.
    if (routed.explicit) req.headers.host = routed.host;
    req.url = routed.url;
  };

  return {
    handleRequest(req, res) {
      const routed = route(req);
      if (routed === undefined) return false;
      if (isDomainError(routed)) {
        sendError(res, routed);
        return true;
      }
      const denied = authorize(req, routed);
      if (denied) {
        sendError(res, denied);
        return true;
      }
      const { target } = routed;
      options.gateway.begin(target);
      // The instance this request went to: the balancer counts it as loaded until the response closes.
      let claimed: ServiceInstance | undefined;
      res.once('close', () => {
        options.gateway.end(target, claimed);
        options.access.recordGateway(target.hostname, res.statusCode);
      });
      const warm = options.gateway.readyNow(target);
      if (warm !== undefined) {
        options.gateway.stats.proxied += 1;
        claimed = options.gateway.claim(warm.instance);
        forward(req, res, routed, warm.instance, warm.action);
        return true;
      }
      traceMark('gateway:wait');
      // Forwarded when the wake resolves (in the registry's turn) or, for a passing instance found
      // first, when the promise resolves: once either way.
      let forwarded = false;
      const go = ({ instance, action }: ReadyUpstream): void => {
        if (forwarded) return;
        forwarded = true;
        traceMark('gateway:forward');
        if (res.destroyed) return;
        options.gateway.stats.proxied += 1;
        claimed = options.gateway.claim(instance);
        forward(req, res, routed, instance, action);
      };
      options.gateway.ready(target, routed.timeoutMs, go).then(go, (error: unknown) => {
        if (forwarded) return;
        if (!isDomainError(error))
          options.logger.error({ err: error, hostname: target.hostname }, 'wake gateway failed');
        if (!res.headersSent) sendError(res, wakeFailure(error));
        // The body was never read: drain it so the connection can be reused.
        req.resume();
      });
      return true;
    },
    handleUpgrade(req, socket, head) {
      const routed = route(req);
      if (routed === undefined) return false;
      if (isDomainError(routed)) {
        rejectUpgrade(socket, routed);
        return true;
      }
      const denied = authorize(req, routed);
      if (denied) {
        rejectUpgrade(socket, denied);
        return true;
      }
      sanitize(req, routed);
      // Other upgrade listeners (the event stream on /ws) run after this one on the same request:
      // hide the path from them while the wake is pending, restore it for the proxy.
      const forwardUrl = req.url;
      req.url = CLAIMED_UPGRADE_PATH;
      const { target } = routed;
      options.gateway.begin(target);
      let claimed: ServiceInstance | undefined;
      socket.once('close', () => options.gateway.end(target, claimed));
      options.access.recordGateway(target.hostname, 101);
      options.gateway.ready(target, routed.timeoutMs).then(
        ({ instance }) => {
          if (socket.destroyed) return;
          req.url = forwardUrl;
          claimed = options.gateway.claim(instance);
          // Upgraded sockets leave the pool: no keep-alive agent for them.
          wsProxyFor(instance.address, instance.port).ws(req, socket, head, { agent: false }, () => socket.destroy());
        },
        (error: unknown) => rejectUpgrade(socket, wakeFailure(error)),
      );
      return true;
    },
    close() {
      wsProxies.clear();
      void upstream.destroy().catch(() => undefined);
    },
  };
}

function splitOnce(text: string, separator: string): [string, string | undefined] {
  const at = text.indexOf(separator);
  return at === -1 ? [text, undefined] : [text.slice(0, at), text.slice(at + 1)];
}
