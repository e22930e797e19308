/**
 * HTTP upgrades (WebSocket handshakes) on a listener: the handlers that serve them, and the HTTP
 * error answer every upgrade gets when no handler takes it. An upgraded socket leaves the HTTP
 * server's connection tracking, so nothing else would ever answer or close it.
 */
import type http from 'node:http';
import type { Duplex } from 'node:stream';

/** Serves an upgrade request; returns true when it took the socket (and will answer it), else false. */
export type UpgradeHandler = (req: http.IncomingMessage, socket: Duplex, head: Buffer) => boolean;

const REASONS: Record<number, string> = {
  400: 'Bad Request',
  401: 'Unauthorized',
  403: 'Forbidden',
  404: 'Not Found',
  426: 'Upgrade Required',
  429: 'Too Many Requests',
  500: 'Internal Server Error',
  501: 'Not Implemented',
  502: 'Bad Gateway',
  503: 'Service Unavailable',
  504: 'Gateway Timeout',
};

/** What an upgrade is refused with: the status and the `{ error }` body of every other error answer. */
export interface UpgradeRefusal {
  readonly status: number;
  readonly code: string;
  readonly message: string;
  readonly details?: Record<string, unknown>;
  readonly headers?: Record<string, string>;
}

/**
 * Answers an upgrade request with an HTTP error (`{ error: { code, message, details } }`, Connection:
 * close) and closes the socket once the answer is written.
 */
export function refuseUpgrade(socket: Duplex, refusal: UpgradeRefusal): void {
  if (socket.destroyed) return;
  const body = JSON.stringify({
    error: { code: refusal.code, message: refusal.message, details: refusal.details ?? {} },
  });
  const extra = Object.entries(refusal.headers ?? {})
    .map(([name, value]) => `${name}: ${value}\r\n`)
    .join('');
  const head = `HTTP/1.1 ${refusal.status} ${REASONS[refusal.status] ?? 'Error'}\r\nContent-Type: application/json; charset=utf-8\r\nContent-Length: ${Buffer.byteLength(body)}\r\n${extra}Connection: close\r\n\r\n`;
  // A client that never reads or never closes its side must not keep the socket: destroy it once the
  // answer is flushed.
  socket.end(head + body, () => socket.destroy());
}
