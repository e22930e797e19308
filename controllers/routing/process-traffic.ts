/**
 * The traffic the wake gateway saw of each process, cumulative since the API started: requests
 * begun, in flight, the in-flight integral over time and the last activity. The idle scaler reads
 * the activity; the autoscaler reads two samples and divides by the time between them.
 */

/**
 * What the gateway saw of one process, cumulative since the API started: the autoscaler reads two
 * samples and divides by the time between them (requests per second, average requests in flight).
 */
export interface ProcessTraffic {
  /** Requests begun (each proxied request or upgrade counts once). */
  readonly requests: number;
  /** Requests in flight right now. */
  readonly inFlight: number;
  /** Integral of the in-flight count over time, in request-milliseconds. */
  readonly inFlightMs: number;
  /** Last request begun or finished (ms since epoch), if any. */
  readonly lastActivityMs: number | undefined;
}

interface TrafficCounter {
  requests: number;
  inFlight: number;
  inFlightMs: number;
  changedMs: number;
  lastActivityMs: number | undefined;
}

/** The traffic counters of every process, by `<app>/<process>`. */
export class ProcessTrafficCounters {
  private readonly traffic = new Map<string, TrafficCounter>();

  /** Counts a request of the process as begun at `nowMs`. */
  begun(key: string, nowMs: number): void {
    const counter = this.counter(key, nowMs);
    counter.requests += 1;
    counter.inFlight += 1;
  }

  /** Counts a request of the process as finished at `nowMs`. */
  ended(key: string, nowMs: number): void {
    const counter = this.counter(key, nowMs);
    counter.inFlight = Math.max(0, counter.inFlight - 1);
  }

  /** Requests in flight and last activity (ms since epoch) of a process. */
  activity(key: string): { inFlight: number; lastActivityMs: number | undefined } {
    const counter = this.traffic.get(key);
    return { inFlight: counter?.inFlight ?? 0, lastActivityMs: counter?.lastActivityMs };
  }

  /** Cumulative traffic of a process up to `nowMs`. */
  trafficOf(key: string, nowMs: number): ProcessTraffic {
    const counter = this.traffic.get(key);
    if (counter === undefined) return { requests: 0, inFlight: 0, inFlightMs: 0, lastActivityMs: undefined };
    return {
      requests: counter.requests,
      inFlight: counter.inFlight,
      inFlightMs: counter.inFlightMs + counter.inFlight * Math.max(0, nowMs - counter.changedMs),
      lastActivityMs: counter.lastActivityMs,
    };
  }

  /** The counter of a process with its in-flight integral brought up to `nowMs` (a request begins or ends then). */
  private counter(key: string, nowMs: number): TrafficCounter {
    let counter = this.traffic.get(key);
    if (counter === undefined) {
      counter = { requests: 0, inFlight: 0, inFlightMs: 0, changedMs: nowMs, lastActivityMs: undefined };
      this.traffic.set(key, counter);
    }
    counter.inFlightMs += counter.inFlight * Math.max(0, nowMs - counter.changedMs);
    counter.changedMs = nowMs;
    counter.lastActivityMs = nowMs;
    return counter;
  }
}
