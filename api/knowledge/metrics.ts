/**
 * Prometheus metrics of the knowledge store: ingest and retrieval counts (rates) and latencies.
 */
import { Counter, Histogram, type Registry } from 'prom-client';

const BUCKETS = [0.0005, 0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5];

/** Knowledge store metrics registered on one registry. */
export class KnowledgeMetrics {
  readonly writes: Counter<'outcome'>;
  readonly writeSeconds: Histogram;
  readonly retrievals: Counter<'outcome'>;
  readonly retrieveSeconds: Histogram;

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
      this.writes.inc({ outcome: outcomeOf(value) });
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
    try {
      const value = await fn();
      this.retrievals.inc({ outcome: 'ok' });
      return value;
    } catch (error) {
      this.retrievals.inc({ outcome: 'error' });
      throw error;
    } finally {
      end();
    }
  }
}
