/**
 * HTTP health check: the local driver's periodic probe of an instance, reported to the registry
 * as passing (2xx), warning (429) or critical (anything else, errors, timeouts).
 */
import http from 'node:http';
import net from 'node:net';
import type { HealthStatus, RegistryWriter } from '../../../domain/registry/index.js';
import { traceMark } from '../../../domain/observability/trace-marks.js';

/** What one probe saw. */
export interface ProbeResult {
  readonly status: HealthStatus;
  readonly output: string;
  /** True when nothing listened on the port (the connection was refused). */
  readonly refused?: boolean;
}

/**
 * Probes `url` once within `timeoutMs`, on a fresh connection (no keep-alive reuse between probes):
 * a new one, or `connected`, a connection to its port just accepted (ADR 0199).
 */
export function probeHttp(url: string, timeoutMs: number, connected?: net.Socket): Promise<ProbeResult> {
  return new Promise((resolve) => {
    let done = false;
    const finish = (result: ProbeResult): void => {
      if (done) return;
      done = true;
      clearTimeout(timer);
      resolve(result);
    };
    const request = http.get(
      url,
      // Node uses createConnection only without an agent (agent: false would make a new one).
      connected
        ? { headers: { 'user-agent': 'svc-health-check' }, createConnection: () => connected }
        : { agent: false, headers: { 'user-agent': 'svc-health-check' } },
      (response) => {
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
      },
    );
    const timer = setTimeout(() => {
      request.destroy();
      finish({ status: 'critical', output: `HTTP GET ${url}: timed out after ${timeoutMs}ms` });
    }, timeoutMs);
    request.on('error', (error: NodeJS.ErrnoException) =>
      finish({
        status: 'critical',
        output: `HTTP GET ${url}: ${error.code ?? error.message}`,
        ...(error.code === 'ECONNREFUSED' ? { refused: true } : {}),
      }),
    );
  });
}

/**
 * A TCP connection to `host:port` once accepted within `timeoutMs`, undefined when refused or timed
 * out: the cheap half of a probe, to learn when a starting process listens. The probe that follows
 * is sent on it, so the app accepts one connection, not two (ADR 0199).
 */
export function portAccepts(host: string, port: number, timeoutMs: number): Promise<net.Socket | undefined> {
  return new Promise((resolve) => {
    const socket = net.connect({ host, port });
    const done = (accepted: boolean): void => {
      clearTimeout(timer);
      socket.removeAllListeners('error');
      if (accepted) {
        // An error after this point is the probe's (its request listens on the socket).
        socket.on('error', () => undefined);
        resolve(socket);
      } else {
        socket.destroy();
        resolve(undefined);
      }
    };
    const timer = setTimeout(() => done(false), timeoutMs);
    socket.once('connect', () => done(true));
    socket.once('error', () => done(false));
  });
}

/**
 * While a caller awaits the service (a cold wake holds requests, `Registry.markAwaited`) and the
 * port refused the latest probe, the pause between two connection attempts; the HTTP probe runs as
 * soon as one is accepted (ADR 0163). A refused loopback connection costs tens of microseconds.
 */
export const AWAITED_PORT_POLL_MS = 2;

/**
 * First retry delay before the first pass; it doubles up to {@link STARTUP_MAX_RETRY_MS} inside the
 * start-up window (a deploy waits for that pass: an app that listens 10 ms after a probe is seen
 * at most this late), and up to the check's interval after it.
 */
export const STARTUP_FIRST_RETRY_MS = 50;
/** Longest retry delay inside the start-up window. */
export const STARTUP_MAX_RETRY_MS = 250;

/** Options of one periodic check. */
export interface HttpHealthCheckOptions {
  readonly registry: RegistryWriter;
  /** The instance's service: while a caller awaits it, a starting check looks for the port eagerly. */
  readonly service?: string;
  readonly instanceId: string;
  readonly checkId: string;
  readonly url: string;
  readonly intervalMs: number;
  readonly timeoutMs: number;
  /**
   * Start-up window: until its first pass the check probes at once, then after 50 ms, doubling up
   * to 250 ms (the interval after the window), and a failure inside the window is reported as `starting` (no health event).
   * A check that has not passed when the window ends reports its failures plainly. @default 60000
   */
  readonly startupWindowMs?: number;
  /** Called after every probe with its status (the runner follows whether its allocation passes). */
  readonly onResult?: (status: HealthStatus) => void;
}

/** Default start-up window of a check. */
export const DEFAULT_STARTUP_WINDOW_MS = 60_000;

/** Runs a probe at once, then with a start-up backoff until the first pass, then every interval; never two probes at once. */
export class HttpHealthCheck {
  readonly #options: HttpHealthCheckOptions;
  #timer: NodeJS.Timeout | undefined;
  #stopped = false;
  #passed = false;
  #startupEndsAt = 0;
  #retryMs = STARTUP_FIRST_RETRY_MS;
  #last: HealthStatus | undefined;
  /** A probe or a connection attempt is running (never two at once). */
  #inFlight = false;
  #offAwaited: (() => void) | undefined;
  readonly #host: string;
  readonly #port: number;

  constructor(options: HttpHealthCheckOptions) {
    this.#options = options;
    const url = new URL(options.url);
    this.#host = url.hostname.replace(/^\[|\]$/g, '');
    this.#port = Number(url.port || 80);
  }

  /** The latest probe's status; undefined before the first probe. */
  get lastStatus(): HealthStatus | undefined {
    return this.#last;
  }

  /** Starts probing (the first probe runs after `firstDelayMs`, at once by default); the start-up window opens now. */
  start(firstDelayMs = 0): void {
    this.#startupEndsAt = Date.now() + (this.#options.startupWindowMs ?? DEFAULT_STARTUP_WINDOW_MS);
    const { registry, service } = this.#options;
    if (service !== undefined && registry.onAwaited !== undefined) {
      // A wake that begins while this check backs off: look for the port now rather than at the next retry.
      this.#offAwaited = registry.onAwaited(service, () => {
        if (!this.#passed && !this.#inFlight && !this.#stopped) {
          clearTimeout(this.#timer);
          this.#schedule(0);
        }
      });
    }
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
    this.#offAwaited?.();
    this.#offAwaited = undefined;
  }

  #schedule(delay: number): void {
    if (this.#stopped) return;
    this.#timer = setTimeout(() => void this.#run(), delay);
    this.#timer.unref();
  }

  /** True while the check has not passed, is in its start-up window, and a caller awaits its service. */
  #awaited(): boolean {
    const { registry, service } = this.#options;
    return (
      !this.#passed &&
      service !== undefined &&
      registry.isAwaited?.(service) === true &&
      Date.now() < this.#startupEndsAt
    );
  }

  /** Start-up backoff delay of the next retry (doubling, capped), advancing it. */
  #backoff(): number {
    const { intervalMs } = this.#options;
    const starting = !this.#passed && Date.now() < this.#startupEndsAt;
    const cap = starting ? Math.min(STARTUP_MAX_RETRY_MS, intervalMs) : intervalMs;
    const delay = Math.min(this.#retryMs, cap);
    this.#retryMs = Math.min(this.#retryMs * 2, cap);
    return delay;
  }

  /** Tries to connect every {@link AWAITED_PORT_POLL_MS} while awaited; probes as soon as the port accepts. */
  async #watchPort(): Promise<void> {
    if (this.#stopped) return;
    if (!this.#awaited()) {
      this.#schedule(this.#backoff());
      return;
    }
    this.#inFlight = true;
    let accepted: net.Socket | undefined;
    try {
      accepted = await portAccepts(this.#host, this.#port, this.#options.timeoutMs);
    } finally {
      this.#inFlight = false;
    }
    if (this.#stopped) {
      accepted?.destroy();
      return;
    }
    if (accepted) {
      traceMark('check:port-accepted');
      void this.#run(accepted);
      return;
    }
    this.#timer = setTimeout(() => void this.#watchPort(), AWAITED_PORT_POLL_MS);
    this.#timer.unref();
  }

  async #run(connected?: net.Socket): Promise<void> {
    const { registry, instanceId, checkId, url, timeoutMs, intervalMs } = this.#options;
    this.#inFlight = true;
    let result: ProbeResult;
    traceMark('check:probe');
    try {
      result = await probeHttp(url, timeoutMs, connected);
    } finally {
      this.#inFlight = false;
    }
    if (this.#stopped) return;
    if (result.status === 'passing') this.#passed = true;
    traceMark(`check:${result.status}`);
    const starting = !this.#passed && Date.now() < this.#startupEndsAt;
    this.#last = result.status;
    registry.updateCheck({
      instanceId,
      checkId,
      status: result.status,
      output: result.output,
      checkedAt: new Date().toISOString(),
      ...(starting ? { starting } : {}),
    });
    this.#options.onResult?.(result.status);
    if (this.#passed) {
      this.#schedule(intervalMs);
      return;
    }
    if (result.refused === true && this.#awaited()) {
      // Nothing listens yet and a request waits: connection attempts are cheaper than probes.
      this.#timer = setTimeout(() => void this.#watchPort(), AWAITED_PORT_POLL_MS);
      this.#timer.unref();
      return;
    }
    this.#schedule(this.#backoff());
  }
}
