/**
 * HTTP health check: the local driver's periodic probe of an instance, reported to the registry
 * as passing (2xx), warning (429) or critical (anything else, errors, timeouts).
 */
import http from 'node:http';
import type { HealthStatus, RegistryWriter } from '../../domain/registry/index.js';

/** What one probe saw. */
export interface ProbeResult {
  readonly status: HealthStatus;
  readonly output: string;
}

/** Probes `url` once within `timeoutMs`, on a fresh connection (no keep-alive reuse between probes). */
export function probeHttp(url: string, timeoutMs: number): Promise<ProbeResult> {
  return new Promise((resolve) => {
    let done = false;
    const finish = (result: ProbeResult): void => {
      if (done) return;
      done = true;
      clearTimeout(timer);
      resolve(result);
    };
    const request = http.get(url, { agent: false, headers: { 'user-agent': 'svc-health-check' } }, (response) => {
      const chunks: Buffer[] = [];
      let size = 0;
      response.on('data', (chunk: Buffer) => {
        if (size < 512) chunks.push(chunk);
        size += chunk.length;
      });
      response.on('end', () => {
        const code = response.statusCode ?? 0;
        const body = Buffer.concat(chunks).toString('utf8').slice(0, 512);
        const status: HealthStatus = code >= 200 && code < 300 ? 'passing' : code === 429 ? 'warning' : 'critical';
        finish({ status, output: `HTTP GET ${url}: ${code} ${response.statusMessage ?? ''} Output: ${body}` });
      });
      response.on('error', (error) => finish({ status: 'critical', output: `HTTP GET ${url}: ${error.message}` }));
    });
    const timer = setTimeout(() => {
      request.destroy();
      finish({ status: 'critical', output: `HTTP GET ${url}: timed out after ${timeoutMs}ms` });
    }, timeoutMs);
    request.on('error', (error: NodeJS.ErrnoException) =>
      finish({ status: 'critical', output: `HTTP GET ${url}: ${error.code ?? error.message}` }),
    );
  });
}

/** Options of one periodic check. */
export interface HttpHealthCheckOptions {
  readonly registry: RegistryWriter;
  readonly instanceId: string;
  readonly checkId: string;
  readonly url: string;
  readonly intervalMs: number;
  readonly timeoutMs: number;
}

/** Runs a probe every interval until stopped; never two probes at once. */
export class HttpHealthCheck {
  readonly #options: HttpHealthCheckOptions;
  #timer: NodeJS.Timeout | undefined;
  #stopped = false;

  constructor(options: HttpHealthCheckOptions) {
    this.#options = options;
  }

  /** Starts probing; the first probe runs after `firstDelayMs`. */
  start(firstDelayMs = this.#options.intervalMs): void {
    this.#schedule(firstDelayMs);
  }

  /** Runs a probe now (e.g. after a restart) and reschedules. */
  probeNow(): void {
    if (this.#stopped) return;
    clearTimeout(this.#timer);
    this.#schedule(0);
  }

  stop(): void {
    this.#stopped = true;
    clearTimeout(this.#timer);
  }

  #schedule(delay: number): void {
    if (this.#stopped) return;
    this.#timer = setTimeout(() => void this.#run(), delay);
    this.#timer.unref();
  }

  async #run(): Promise<void> {
    const { registry, instanceId, checkId, url, timeoutMs, intervalMs } = this.#options;
    const result = await probeHttp(url, timeoutMs);
    if (this.#stopped) return;
    registry.updateCheck({
      instanceId,
      checkId,
      status: result.status,
      output: result.output,
      checkedAt: new Date().toISOString(),
    });
    this.#schedule(intervalMs);
  }
}
