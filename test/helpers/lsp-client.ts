/**
 * A minimal Language Server Protocol client over stdio (Content-Length framing, JSON-RPC 2.0),
 * enough to drive a real language server from a test.
 */
import { spawn, type ChildProcessWithoutNullStreams } from 'node:child_process';

type Message = { id?: number; method?: string; params?: any; result?: any; error?: any };

/** A running language server. */
export class LspClient {
  private readonly child: ChildProcessWithoutNullStreams;
  private buffer = Buffer.alloc(0);
  private nextId = 1;
  private readonly pending = new Map<number, (message: Message) => void>();
  private readonly listeners: ((message: Message) => void)[] = [];
  stderr = '';

  constructor(
    command: string,
    args: readonly string[],
    private readonly onRequest: (method: string, params: any) => unknown,
  ) {
    this.child = spawn(command, [...args], { stdio: ['pipe', 'pipe', 'pipe'] });
    this.child.stderr.on('data', (chunk: Buffer) => (this.stderr += chunk.toString()));
    this.child.stdout.on('data', (chunk: Buffer) => this.receive(chunk));
  }

  private receive(chunk: Buffer): void {
    this.buffer = Buffer.concat([this.buffer, chunk]);
    for (;;) {
      const headerEnd = this.buffer.indexOf('\r\n\r\n');
      if (headerEnd < 0) return;
      const header = this.buffer.subarray(0, headerEnd).toString();
      const length = Number(/Content-Length: (\d+)/i.exec(header)?.[1] ?? NaN);
      if (this.buffer.length < headerEnd + 4 + length) return;
      const body = this.buffer.subarray(headerEnd + 4, headerEnd + 4 + length).toString();
      this.buffer = this.buffer.subarray(headerEnd + 4 + length);
      this.dispatch(JSON.parse(body) as Message);
    }
  }

  private dispatch(message: Message): void {
    if (message.method !== undefined && message.id !== undefined) {
      this.send({ id: message.id, result: this.onRequest(message.method, message.params) ?? null });
      return;
    }
    if (message.id !== undefined) {
      this.pending.get(message.id)?.(message);
      this.pending.delete(message.id);
      return;
    }
    for (const listener of this.listeners) listener(message);
  }

  private send(message: Message): void {
    const body = JSON.stringify({ jsonrpc: '2.0', ...message });
    this.child.stdin.write(`Content-Length: ${Buffer.byteLength(body)}\r\n\r\n${body}`);
  }

  /** Sends a request and waits for its response. */
  request(method: string, params: unknown): Promise<any> {
    const id = this.nextId++;
    return new Promise((resolve, reject) => {
      this.pending.set(id, (message) =>
        message.error ? reject(new Error(JSON.stringify(message.error))) : resolve(message.result),
      );
      this.send({ id, method, params });
    });
  }

  /** Sends a notification. */
  notify(method: string, params: unknown): void {
    this.send({ method, params });
  }

  /** Resolves with the first notification of `method` that `accept` takes. */
  waitFor(method: string, accept: (params: any) => boolean = () => true): Promise<any> {
    return new Promise((resolve) => {
      const listener = (message: Message) => {
        if (message.method === method && accept(message.params)) {
          this.listeners.splice(this.listeners.indexOf(listener), 1);
          resolve(message.params);
        }
      };
      this.listeners.push(listener);
    });
  }

  /** Asks the server to shut down and exit. */
  async stop(): Promise<void> {
    try {
      await Promise.race([this.request('shutdown', null), new Promise((resolve) => setTimeout(resolve, 2000))]);
      this.notify('exit', null);
    } finally {
      setTimeout(() => this.child.kill('SIGKILL'), 1000).unref();
    }
  }
}
