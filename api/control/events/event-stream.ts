/**
 * Live event stream: `WS /api/v1/events` (alias `/ws`). Each recorded or changed event is sent as
 * one JSON message `{ kind: "recorded" | "updated", event }`; the first message is
 * `{ kind: "ready" }`. Optional query filters: `app`, `severity`.
 *
 * Needs scope `events:read` whenever authentication is on: the static control token (SVC_API_TOKEN)
 * grants it, and so does an issued scoped token that carries it. The upgrade is never exempt from
 * bearer auth. A browser cannot set `Authorization` on a WebSocket, so the token may instead travel
 * in `Sec-WebSocket-Protocol` as `svc.bearer.<base64url token>` beside `svc.events`, which the
 * server selects (the token is never echoed and never in the URL; docs/adr/0131).
 */
import type http from 'node:http';
import type { Duplex } from 'node:stream';
import { WebSocketServer, type WebSocket } from 'ws';
import type { LoggerPort as Logger } from '../../../domain/logger.js';
import type { EventService } from '../../../controllers/events/event-service.js';
import { grants, Scope, type Principal } from '../../../domain/auth/index.js';
import { sha256Hex } from '../../http/bearer.js';
import { bearerPrincipal } from '../auth/auth.js';
import type { RunningServer } from '../../http/listen.js';
import { refuseUpgrade } from '../../http/upgrade.js';

/** The subprotocol a browser asks for; the server selects it. */
export const EVENT_STREAM_PROTOCOL = 'svc.events';
/** Prefix of the subprotocol entry that carries a base64url bearer token. */
export const BEARER_PROTOCOL_PREFIX = 'svc.bearer.';

/** The bearer token of an upgrade: the Authorization header, else the `svc.bearer.` subprotocol entry. */
export function upgradeBearerToken(req: Pick<http.IncomingMessage, 'headers'>): string | undefined {
  const match = /^Bearer\s+(\S+)\s*$/i.exec(req.headers.authorization ?? '');
  if (match?.[1] !== undefined) return match[1];
  const offered = (req.headers['sec-websocket-protocol'] ?? '').split(',').map((p) => p.trim());
  const entry = offered.find((p) => p.startsWith(BEARER_PROTOCOL_PREFIX));
  if (entry === undefined) return undefined;
  const encoded = entry.slice(BEARER_PROTOCOL_PREFIX.length);
  if (!/^[A-Za-z0-9_-]+$/.test(encoded)) return undefined;
  const token = Buffer.from(encoded, 'base64url').toString('utf8');
  return token === '' ? undefined : token;
}

/** Paths of the stream. */
export const EVENT_STREAM_PATHS: readonly string[] = ['/api/v1/events', '/ws'];

function refuse(socket: Duplex, status: number, code: string, message: string): true {
  refuseUpgrade(socket, { status, code, message, headers: { 'WWW-Authenticate': 'Bearer' } });
  return true;
}

/** Attaches the stream to the listener's upgrade handlers; returns a closer. */
export function attachEventStream(
  server: Pick<RunningServer, 'onUpgrade'>,
  events: EventService,
  options: {
    apiToken: string | undefined;
    requireExplicitAuth: boolean;
    logger: Logger;
    scopedToken?: (secret: string) => Principal | undefined;
  },
): { close(): void; clients(): number } {
  const wss = new WebSocketServer({
    noServer: true,
    maxPayload: 4096,
    // Select the stream's own subprotocol; the token entry is never echoed back.
    handleProtocols: (protocols) => (protocols.has(EVENT_STREAM_PROTOCOL) ? EVENT_STREAM_PROTOCOL : false),
  });
  const tokenHash = options.apiToken === undefined ? undefined : sha256Hex(options.apiToken);
  const authOn = tokenHash !== undefined || options.requireExplicitAuth;
  const onUpgrade = (req: http.IncomingMessage, socket: Duplex, head: Buffer): boolean => {
    const url = new URL(req.url ?? '/', 'http://localhost');
    if (!EVENT_STREAM_PATHS.includes(url.pathname)) return false; // another handler's path
    if (authOn) {
      const token = upgradeBearerToken(req);
      if (token === undefined)
        return refuse(
          socket,
          401,
          'missing_credentials',
          'the event stream needs Authorization: Bearer <token> (or the svc.bearer.<base64url token> subprotocol) with scope events:read',
        );
      const principal = bearerPrincipal(token, tokenHash, options.scopedToken);
      if (principal === undefined) return refuse(socket, 401, 'invalid_credentials', 'the bearer token is not valid');
      if (!grants(principal, Scope.eventsRead))
        return refuse(socket, 403, 'insufficient_scope', 'the bearer token does not carry scope events:read');
    }
    const app = url.searchParams.get('app') ?? undefined;
    const severity = url.searchParams.get('severity') ?? undefined;
    wss.handleUpgrade(req, socket, head, (ws: WebSocket) => {
      const unsubscribe = events.subscribe((changes) => {
        for (const change of changes) {
          if (app !== undefined && change.event.app !== app) continue;
          if (severity !== undefined && change.event.severity !== severity) continue;
          if (ws.readyState === ws.OPEN) ws.send(JSON.stringify(change));
        }
      });
      ws.on('close', unsubscribe);
      ws.on('error', unsubscribe);
      ws.on('message', () => undefined);
      ws.send(JSON.stringify({ kind: 'ready' }));
    });
    return true;
  };
  const remove = server.onUpgrade(onUpgrade);
  return {
    clients: () => wss.clients.size,
    close() {
      remove();
      for (const client of wss.clients) client.terminate();
      wss.close();
    },
  };
}
