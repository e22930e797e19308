/**
 * `WS /api/v1/exec-sessions/{id}/attach`: a created exec session's PTY over a WebSocket (ADR 0168).
 *
 * Client to server, text frames of JSON: `{ "type": "stdin", "data": "..." }` and
 * `{ "type": "resize", "cols": 120, "rows": 40 }`; a binary frame is stdin as it is. Server to
 * client: `{ "type": "stdout", "data": "..." }` and, last, `{ "type": "exit", "exitCode", "signal",
 * "reason" }`, then a normal close. Closing the socket ends the session.
 *
 * Authentication as the event stream's (ADR 0131): `Authorization: Bearer`, or from a browser the
 * `svc.bearer.<base64url token>` subprotocol entry beside `svc.exec`, or a validated edge access
 * identity (as on the HTTP routes); the caller needs `apps:exec` and must be the session's creator. The compatibility exec path is a POST, never an upgrade.
 */
import type http from 'node:http';
import type { Duplex } from 'node:stream';
import { WebSocketServer, type RawData, type WebSocket } from 'ws';
import { Scope, type Principal } from '../../../domain/auth/index.js';
import { isDomainError } from '../../../domain/errors.js';
import type { LoggerPort } from '../../../domain/logger.js';
import type { ExecSessions } from '../../../controllers/exec/exec-sessions.js';
import { sha256Hex } from '../../http/bearer.js';
import { errorResponse } from '../../http/error-middleware.js';
import type { RunningServer } from '../../http/listen.js';
import { refuseUpgrade } from '../../http/upgrade.js';
import type { EdgeIdentityCheck } from '../auth/auth.js';
import { upgradePrincipal } from '../auth/upgrade-principal.js';
import { callerName } from './exec-routes.js';

/** The subprotocol a browser asks for; the server selects it. */
export const EXEC_PROTOCOL = 'svc.exec';
const ATTACH = /^\/api\/v1\/exec-sessions\/([^/]+)\/attach$/;
const SESSIONS = /^\/api\/v1\/exec-sessions(\/.*)?$/;
const COMPATIBILITY = /^\/api\/apps\/[^/]+\/exec\/?$/;
/** Largest client frame: a paste of 64 KiB. */
const MAX_FRAME = 65536;

function parseFrame(raw: RawData, binary: boolean): { stdin: string } | { cols: number; rows: number } | undefined {
  const text = Buffer.isBuffer(raw) ? raw.toString('utf8') : Buffer.concat(raw as Buffer[]).toString('utf8');
  if (binary) return { stdin: text };
  let frame: unknown;
  try {
    frame = JSON.parse(text);
  } catch {
    return undefined;
  }
  if (typeof frame !== 'object' || frame === null) return undefined;
  const f = frame as Record<string, unknown>;
  if (f.type === 'stdin' && typeof f.data === 'string') return { stdin: f.data };
  const size = (v: unknown) => typeof v === 'number' && Number.isInteger(v) && v >= 2 && v <= 1000;
  if (f.type === 'resize' && size(f.cols) && size(f.rows)) return { cols: f.cols as number, rows: f.rows as number };
  return undefined;
}

/** Attaches the exec socket to the listener's upgrade handlers; returns a closer. */
export function attachExecSocket(
  server: Pick<RunningServer, 'onUpgrade'>,
  sessions: ExecSessions,
  options: {
    readonly apiToken: string | undefined;
    readonly requireExplicitAuth: boolean;
    readonly logger: LoggerPort;
    readonly scopedToken?: (secret: string) => Principal | undefined;
    readonly edgeIdentity?: EdgeIdentityCheck;
  },
): { close(): void } {
  const wss = new WebSocketServer({
    noServer: true,
    maxPayload: MAX_FRAME,
    handleProtocols: (protocols) => (protocols.has(EXEC_PROTOCOL) ? EXEC_PROTOCOL : false),
  });
  const tokenHash = options.apiToken === undefined ? undefined : sha256Hex(options.apiToken);
  const authOn = tokenHash !== undefined || options.requireExplicitAuth;
  const refuse = (socket: Duplex, status: number, code: string, message: string, details = {}) => {
    refuseUpgrade(socket, {
      status,
      code,
      message,
      details,
      headers: status === 401 ? { 'WWW-Authenticate': 'Bearer' } : {},
    });
    return true;
  };
  const onUpgrade = (req: http.IncomingMessage, socket: Duplex, head: Buffer): boolean => {
    const path = new URL(req.url ?? '/', 'http://localhost').pathname;
    const match = ATTACH.exec(path);
    if (match === null) {
      if (COMPATIBILITY.test(path))
        return refuse(
          socket,
          400,
          'not_an_upgrade',
          `compatibility exec is POST ${path} { command }, not a WebSocket`,
          {
            path,
          },
        );
      if (!SESSIONS.test(path)) return false;
      return refuse(
        socket,
        404,
        'route_not_found',
        `no WebSocket at ${path}: attach a session at /api/v1/exec-sessions/{id}/attach`,
        { path },
      );
    }
    const id = decodeURIComponent(match[1]!);
    const auth = { tokenHash, scopedToken: options.scopedToken, edgeIdentity: options.edgeIdentity };
    const found = authOn
      ? upgradePrincipal(req, auth, Scope.appsExec, 'exec')
      : Promise.resolve({ principal: undefined });
    void found.then(
      (result) => {
        if ('refusal' in result) refuseUpgrade(socket, result.refusal);
        else if (!socket.destroyed) admit(req, socket, head, id, authOn ? callerName(result.principal) : undefined);
      },
      (err: unknown) => {
        options.logger.error({ err }, 'exec socket: the caller could not be checked');
        refuseUpgrade(socket, { status: 500, code: 'internal_error', message: 'the caller could not be checked' });
      },
    );
    return true;
  };
  /** Checks the session belongs to `caller`, then completes the handshake. */
  const admit = (req: http.IncomingMessage, socket: Duplex, head: Buffer, id: string, caller: string | undefined) => {
    try {
      sessions.get(id, caller);
    } catch (error) {
      if (!isDomainError(error)) options.logger.error({ err: error }, 'exec socket: the session could not be read');
      const answer = errorResponse(error);
      refuseUpgrade(socket, { status: answer.status, ...answer.body.error, headers: answer.headers });
      return;
    }
    wss.handleUpgrade(req, socket, head, (ws: WebSocket) => serve(ws, id, caller));
  };
  const serve = (ws: WebSocket, id: string, caller: string | undefined) => {
    let attachment;
    try {
      attachment = sessions.attach(id, caller, {
        output: (data) => {
          if (ws.readyState === ws.OPEN) ws.send(JSON.stringify({ type: 'stdout', data }));
        },
        exit: (exit) => {
          if (ws.readyState === ws.OPEN) {
            ws.send(JSON.stringify({ type: 'exit', ...exit }));
            ws.close(1000, 'session ended');
          }
        },
      });
    } catch (error) {
      const message = error instanceof Error ? error.message : 'the session could not start';
      ws.send(JSON.stringify({ type: 'error', message }));
      ws.close(1011, 'session could not start');
      if (!isDomainError(error)) options.logger.error({ err: error }, 'exec session did not start');
      return;
    }
    const session = attachment;
    ws.on('message', (raw, binary) => {
      const frame = parseFrame(raw, binary);
      if (frame === undefined) return;
      if ('stdin' in frame) session.input(frame.stdin);
      else session.resize(frame);
    });
    ws.on('close', () => session.detach());
    ws.on('error', () => session.detach());
  };
  const remove = server.onUpgrade(onUpgrade);
  return {
    close() {
      remove();
      for (const client of wss.clients) client.terminate();
      wss.close();
    },
  };
}
