/**
 * Live event stream: `WS /api/v1/events` (alias `/ws`). Each recorded or changed event is sent as
 * one JSON message `{ kind: "recorded" | "updated", event }`; the first message is
 * `{ kind: "ready" }`. Optional query filters: `app`, `severity`.
 *
 * Needs scope `events:read` whenever authentication is on: the static control token (SVC_API_TOKEN)
 * grants it, and so do an issued scoped token that carries it and a validated edge access identity
 * (an administrator, as on the HTTP routes). The upgrade is never exempt from authentication. A browser cannot set `Authorization` on a WebSocket, so the token may instead travel
 * in `Sec-WebSocket-Protocol` as `svc.bearer.<base64url token>` beside `svc.events`, which the
 * server selects (the token is never echoed and never in the URL; docs/adr/0131).
 */
import type http from 'node:http';
import type { Duplex } from 'node:stream';
import { WebSocketServer, type WebSocket } from 'ws';
import type { LoggerPort as Logger } from '../../../domain/logger.js';
import type { EventService } from '../../../controllers/events/event-service.js';
import { Scope, type Principal } from '../../../domain/auth/index.js';
import { sha256Hex } from '../../http/bearer.js';
import type { EdgeIdentityCheck } from '../auth/auth.js';
import { upgradePrincipal } from '../auth/upgrade-principal.js';
import type { RunningServer } from '../../http/listen.js';
import { refuseUpgrade } from '../../http/upgrade.js';

/** The subprotocol a browser asks for; the server selects it. */
export const EVENT_STREAM_PROTOCOL = 'svc.events';
/** Paths of the stream. */
export const EVENT_STREAM_PATHS: readonly string[] = ['/api/v1/events', '/ws'];

/** Attaches the stream to the listener's upgrade handlers; returns a closer. */
export function attachEventStream(
  server: Pick<RunningServer, 'onUpgrade'>,
  events: EventService,
  options: {
    apiToken: string | undefined;
    requireExplicitAuth: boolean;
    logger: Logger;
    scopedToken?: (secret: string) => Principal | undefined;
    edgeIdentity?: EdgeIdentityCheck;
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
    const app = url.searchParams.get('app') ?? undefined;
    const severity = url.searchParams.get('severity') ?? undefined;
    const auth = { tokenHash, scopedToken: options.scopedToken, edgeIdentity: options.edgeIdentity };
    const caller = authOn
      ? upgradePrincipal(req, auth, Scope.eventsRead, 'the event stream')
      : Promise.resolve({ principal: undefined });
    void caller.then(
      (found) => {
        if ('refusal' in found) refuseUpgrade(socket, found.refusal);
        else if (!socket.destroyed) serve(req, socket, head, app, severity);
      },
      (err: unknown) => {
        options.logger.error({ err }, 'event stream: the caller could not be checked');
        refuseUpgrade(socket, { status: 500, code: 'internal_error', message: 'the caller could not be checked' });
      },
    );
    return true;
  };
  const serve = (
    req: http.IncomingMessage,
    socket: Duplex,
    head: Buffer,
    app: string | undefined,
    severity: string | undefined,
  ): void => {
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
