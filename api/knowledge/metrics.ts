/**
 * Prometheus metrics of the knowledge store: ingest and retrieval counts (rates) and latencies.
 */
import { Counter, Histogram, type Registry } from 'prom-client';

const BUCKETS = [0.0005, 0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5];
/** Retrieval latencies kept for the percentiles of `/v1/stats` (the most recent ones). */
const LATENCY_WINDOW = 1024;

/** Runtime totals in the origin's terms (`/v1/stats`, `/admin/api/metrics`): since the process started. */
export interface RuntimeTotals {
  readonly retrievalTotal: number;
  readonly retrievalErrors: number;
  readonly ingestTotal: number;
  readonly ingestAdmitted: number;
  readonly ingestRejected: number;
  /** Retrieval latency percentiles over the last 1024 retrievals and the mean over all, microseconds. */
  readonly latencyP50Us: number;
  readonly latencyP95Us: number;
  readonly latencyMeanUs: number;
}

/** Knowledge store metrics registered on one registry. */
export class KnowledgeMetrics {
  readonly writes: Counter<'outcome'>;
  readonly writeSeconds: Histogram;
  readonly retrievals: Counter<'outcome'>;
  readonly retrieveSeconds: Histogram;
  readonly #latencies: number[] = [];
  #latencyCursor = 0;
  #latencySumUs = 0;
  #counts = { retrievals: 0, retrievalErrors: 0, writes: 0, admitted: 0, rejected: 0 };

  constructor(registry: Registry) {
    this.writes = new Counter({ name: 'svc_knowledge_writes_total', help: 'Knowledge writes by outcome (admitted, rejected, deduplicated, error)', labelNames: ['outcome'], registers: [registry] });
    this.writeSeconds = new Histogram({ name: 'svc_knowledge_write_duration_seconds', help: 'Latency of knowledge writes', buckets: BUCKETS, registers: [registry] });
    this.retrievals = new Counter({ name: 'svc_knowledge_retrievals_total', help: 'Knowledge retrievals by outcome (ok, error)', labelNames: ['outcome'], registers: [registry] });
    this.retrieveSeconds = new Histogram({ name: 'svc_knowledge_retrieve_duration_seconds', help: 'Latency of knowledge retrievals', buckets: BUCKETS, registers: [registry] });
  }

  /** Times `fn` as a write; the outcome label comes from `outcomeOf`. */
  async timeWrite<T>(fn: () => Promise<T>, outcomeOf: (value: T) => string): Promise<T> {
    const end = this.writeSeconds.startTimer();
    try {
      const value = await fn();
      const outcome = outcomeOf(value);
      this.writes.inc({ outcome });
      this.#counts.writes++;
      if (outcome === 'rejected') this.#counts.rejected++;
      else this.#counts.admitted++;
      return value;
    } catch (error) {
      this.writes.inc({ outcome: 'error' });
      throw error;
    } finally {
      end();
    }
  }

  /** Times `fn` as a retrieval. */
  async timeRetrieve<T>(fn: () => Promise<T>): Promise<T> {
    const end = this.retrieveSeconds.startTimer();
    const started = performance.now();
    this.#counts.retrievals++;
    try {
      const value = await fn();
      this.retrievals.inc({ outcome: 'ok' });
      return value;
    } catch (error) {
      this.retrievals.inc({ outcome: 'error' });
      this.#counts.retrievalErrors++;
      throw error;
    } finally {
      end();
      this.#recordLatency((performance.now() - started) * 1000);
    }
  }

  #recordLatency(us: number): void {
    this.#latencySumUs += us;
    if (this.#latencies.length < LATENCY_WINDOW) this.#latencies.push(us);
    else this.#latencies[this.#latencyCursor] = us;
    this.#latencyCursor = (this.#latencyCursor + 1) % LATENCY_WINDOW;
  }

  /** Totals since start, in the origin's terms (writes count as its "ingest"). */
  totals(): RuntimeTotals {
    const sorted = [...this.#latencies].sort((a, b) => a - b);
    const at = (p: number) => (sorted.length === 0 ? 0 : sorted[Math.min(sorted.length - 1, Math.ceil((p / 100) * sorted.length) - 1)]!);
    const c = this.#counts;
    const round = (x: number) => Math.round(x * 10) / 10;
    return {
      retrievalTotal: c.retrievals, retrievalErrors: c.retrievalErrors, ingestTotal: c.writes, ingestAdmitted: c.admitted, ingestRejected: c.rejected,
      latencyP50Us: round(at(50)), latencyP95Us: round(at(95)), latencyMeanUs: c.retrievals === 0 ? 0 : round(this.#latencySumUs / c.retrievals),
    };
  }
}
