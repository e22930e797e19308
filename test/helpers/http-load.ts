/**
 * HTTP load for zero-downtime checks: keep-alive clients and new-connection clients send GET
 * requests in a loop to one URL with a Host header; every answer, reset or timeout is recorded
 * with its time, so failures and latencies can be told apart per window of change.
 */
import http from 'node:http';

/** One request's outcome. */
export interface LoadSample {
  readonly startMs: number;
  readonly endMs: number;
  /** True for a 2xx answer read to its end. */
  readonly ok: boolean;
  /** `HTTP <status>`, an error code (ECONNRESET, ECONNREFUSED, ...) or `timeout`. */
  readonly outcome: string;
  /** The answer's body, when the load keeps bodies. */
  readonly body?: string;
}

/** Options of {@link startLoad}. */
export interface LoadOptions {
  readonly url: string;
  readonly host: string;
  /** Clients that reuse one connection. @default 4 */
  readonly keepAliveClients?: number;
  /** Clients that open a connection per request. @default 4 */
  readonly newConnectionClients?: number;
  /** A request without an answer by then fails. @default 5000 */
  readonly timeoutMs?: number;
  /** Keep each answer's body in its sample (small bodies only). @default false */
  readonly keepBodies?: boolean;
}

/** A running load. */
export interface Load {
  readonly samples: LoadSample[];
  /** Stops the clients and resolves once every request in flight ended. */
  stop(): Promise<LoadSample[]>;
}

/** Starts the clients at once. */
export function startLoad(options: LoadOptions): Load {
  const samples: LoadSample[] = [];
  let running = true;
  const timeoutMs = options.timeoutMs ?? 5000;
  const one = (agent: http.Agent | false): Promise<void> =>
    new Promise((resolve) => {
      const startMs = performance.now();
      let done = false;
      let body = '';
      const finish = (ok: boolean, outcome: string): void => {
        if (done) return;
        done = true;
        clearTimeout(timer);
        samples.push({ startMs, endMs: performance.now(), ok, outcome, ...(options.keepBodies ? { body } : {}) });
        resolve();
      };
      const request = http.get(options.url, { agent, headers: { host: options.host } }, (response) => {
        if (options.keepBodies) response.on('data', (chunk: Buffer) => (body += chunk.toString()));
        else response.resume();
        response.on('end', () => {
          const status = response.statusCode ?? 0;
          finish(status >= 200 && status < 300, `HTTP ${status}`);
        });
        response.on('error', (error: NodeJS.ErrnoException) => finish(false, error.code ?? error.message));
      });
      const timer = setTimeout(() => {
        request.destroy();
        finish(false, 'timeout');
      }, timeoutMs);
      request.on('error', (error: NodeJS.ErrnoException) => finish(false, error.code ?? error.message));
    });
  const client = async (agent: http.Agent | false): Promise<void> => {
    while (running) await one(agent);
    if (agent) agent.destroy();
  };
  const clients = [
    ...Array.from({ length: options.keepAliveClients ?? 4 }, () =>
      client(new http.Agent({ keepAlive: true, maxSockets: 1 })),
    ),
    ...Array.from({ length: options.newConnectionClients ?? 4 }, () => client(false)),
  ];
  return {
    samples,
    stop: async () => {
      running = false;
      await Promise.all(clients);
      return samples;
    },
  };
}

/** The samples that started within [fromMs, toMs). */
export function within(samples: readonly LoadSample[], fromMs: number, toMs: number): LoadSample[] {
  return samples.filter((s) => s.startMs >= fromMs && s.startMs < toMs);
}

/** Failed samples grouped by outcome, e.g. `{ 'HTTP 502': 3, ECONNRESET: 1 }`. */
export function failures(samples: readonly LoadSample[]): Record<string, number> {
  const out: Record<string, number> = {};
  for (const s of samples) if (!s.ok) out[s.outcome] = (out[s.outcome] ?? 0) + 1;
  return out;
}

/** The p-th percentile (0-100) of the samples' latencies in milliseconds; 0 when there are none. */
export function latencyPercentile(samples: readonly LoadSample[], p: number): number {
  if (samples.length === 0) return 0;
  const sorted = samples.map((s) => s.endMs - s.startMs).sort((a, b) => a - b);
  return sorted[Math.min(sorted.length - 1, Math.max(0, Math.ceil((p / 100) * sorted.length) - 1))]!;
}
