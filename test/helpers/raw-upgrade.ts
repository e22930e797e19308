/**
 * Raw upgrade requests over a plain TCP socket: what a WebSocket client sends, without a client
 * library that would give up or close on its own.
 */
import net from 'node:net';

/** An open socket that sent an upgrade request, and the bytes the server answered so far. */
export interface RawUpgrade {
  readonly socket: net.Socket;
  /** Everything received until now. */
  received(): string;
  /** Resolves with everything received once the server closes its side. */
  readonly ended: Promise<string>;
}

/**
 * Connects to `baseUrl` and sends a WebSocket handshake for `path`. With `complete: false` the
 * request's final empty line is held back, so the server never sees a whole request.
 */
export function rawUpgrade(
  baseUrl: string,
  path: string,
  options: { complete?: boolean; headers?: Record<string, string> } = {},
): Promise<RawUpgrade> {
  const url = new URL(baseUrl);
  return new Promise((resolve, reject) => {
    const socket = net.connect(Number(url.port), url.hostname, () => {
      const headers = {
        Host: url.host,
        Connection: 'Upgrade',
        Upgrade: 'websocket',
        'Sec-WebSocket-Version': '13',
        'Sec-WebSocket-Key': 'dGhlIHNhbXBsZSBub25jZQ==',
        ...options.headers,
      };
      const head = `GET ${path} HTTP/1.1\r\n${Object.entries(headers)
        .map(([k, v]) => `${k}: ${v}\r\n`)
        .join('')}`;
      socket.write(options.complete === false ? head : `${head}\r\n`);
      resolve({ socket, received: () => text, ended });
    });
    let text = '';
    socket.on('data', (chunk: Buffer) => (text += chunk.toString()));
    socket.on('error', () => undefined);
    const ended = new Promise<string>((done) => socket.once('close', () => done(text)));
    socket.once('error', reject);
  });
}
