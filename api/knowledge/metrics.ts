/**
 * Prometheus metrics of the knowledge store (admin listener, `/metrics`): writes and retrievals by
 * namespace mode and outcome, their latencies (retrievals also per path class), admission
 * rejections, webhook deliveries and the review queue size. Every label holds a closed set
 * (docs/observability.md). Also the runtime totals of `/v1/stats` and `/admin/api/metrics`.
 */
import { Counter, Gauge, Histogram, type Registry } from 'prom-client';
import type {
  AdmissionRejectionReason,
  KnowledgeTelemetry,
  WebhookDeliveryResult,
} from '../../domain/knowledge/knowledge-telemetry.js';
import type { RetrievalPath } from '../../domain/knowledge/retrieval/retrieval-path.js';

const BUCKETS = [0.0005, 0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5];
/** Retrieval latencies kept for the percentiles of `/v1/stats` (the most recent ones). */
const LATENCY_WINDOW = 1024;

/** The `mode` label when the namespace does not exist (a failed request to an unknown namespace). */
export const UNKNOWN_MODE = 'unknown';

/** Names of the families, as the admin dashboard reads them. */
export const KNOWLEDGE_METRICS = {
  writes: 'svc_knowledge_writes_total',
  writeDuration: 'svc_knowledge_write_duration_seconds',
  retrievals: 'svc_knowledge_retrievals_total',
  retrieveDuration: 'svc_knowledge_retrieve_duration_seconds',
  retrievalPathDuration: 'svc_knowledge_retrieval_path_duration_seconds',
  admissionRejections: 'svc_knowledge_admission_rejections_total',
  reviewQueueSize: 'svc_knowledge_review_queue_size',
  webhookDeliveries: 'svc_knowledge_webhook_deliveries_total',
} as const;

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

/** How a timed retrieval is labelled: its namespace's mode (read after it ran) and its path class. */
export interface RetrievalLabels {
  readonly mode: () => string;
  /** Undefined for a request that selects no path (it fails validation): no path sample. */
  readonly path: RetrievalPath | undefined;
}

/** Knowledge store metrics registered on one registry; also the services' telemetry port. */
export class KnowledgeMetrics implements KnowledgeTelemetry {
  readonly writes: Counter<'mode' | 'outcome'>;
  readonly writeSeconds: Histogram;
  readonly retrievals: Counter<'mode' | 'outcome'>;
  readonly retrieveSeconds: Histogram;
  readonly retrievalPathSeconds: Histogram<'path'>;
  readonly admissionRejections: Counter<'reason'>;
  readonly webhookDeliveries: Counter<'result'>;
  readonly #registry: Registry;
  readonly #latencies: number[] = [];
  #latencyCursor = 0;
  #latencySumUs = 0;
  #counts = { retrievals: 0, retrievalErrors: 0, writes: 0, admitted: 0, rejected: 0 };

  constructor(registry: Registry) {
    this.#registry = registry;
    const registers = [registry];
    this.writes = new Counter({
      name: KNOWLEDGE_METRICS.writes,
      help: 'Knowledge writes by namespace mode and outcome (admitted, rejected, deduplicated, error)',
      labelNames: ['mode', 'outcome'],
      registers,
    });
    this.writeSeconds = new Histogram({
      name: KNOWLEDGE_METRICS.writeDuration,
      help: 'Latency of knowledge writes',
      buckets: BUCKETS,
      registers,
    });
    this.retrievals = new Counter({
      name: KNOWLEDGE_METRICS.retrievals,
      help: 'Knowledge retrievals (REST retrieve and GraphQL search) by namespace mode and outcome (ok, error)',
      labelNames: ['mode', 'outcome'],
      registers,
    });
    this.retrieveSeconds = new Histogram({
      name: KNOWLEDGE_METRICS.retrieveDuration,
      help: 'Latency of knowledge retrievals',
      buckets: BUCKETS,
      registers,
    });
    this.retrievalPathSeconds = new Histogram({
      name: KNOWLEDGE_METRICS.retrievalPathDuration,
      help: 'Latency of knowledge retrievals by the paths they run: vector, text, graph, or hybrid (more than one)',
      labelNames: ['path'],
      buckets: BUCKETS,
      registers,
    });
    this.admissionRejections = new Counter({
      name: KNOWLEDGE_METRICS.admissionRejections,
      help: 'Writes the admission check refused, by reason (low_credibility)',
      labelNames: ['reason'],
      registers,
    });
    this.webhookDeliveries = new Counter({
      name: KNOWLEDGE_METRICS.webhookDeliveries,
      help: 'Handoff webhook delivery attempts by result (delivered, retrying, failed)',
      labelNames: ['result'],
      registers,
    });
  }

  /**
   * Registers `svc_knowledge_review_queue_size`, read from `pending()` at each scrape (after the
   * services exist: they need this object as their telemetry first).
   */
  watchReviewQueue(pending: () => number, onError: (error: unknown) => void = () => undefined): void {
    new Gauge({
      name: KNOWLEDGE_METRICS.reviewQueueSize,
      help: 'Pending review items (open, assigned or snoozed) over every namespace, under the default thresholds',
      registers: [this.#registry],
      collect() {
        try {
          this.set(pending());
        } catch (error) {
          onError(error);
        }
      },
    });
  }

  admissionRejected(reason: AdmissionRejectionReason): void {
    this.admissionRejections.inc({ reason });
  }

  webhookDelivery(result: WebhookDeliveryResult): void {
    this.webhookDeliveries.inc({ result });
  }

  /** Times `fn` as a write; the outcome label comes from `outcomeOf`, the mode from `modeOf` once it ran. */
  async timeWrite<T>(
    fn: () => Promise<T>,
    outcomeOf: (value: T) => string,
    modeOf: () => string = () => UNKNOWN_MODE,
  ): Promise<T> {
    const end = this.writeSeconds.startTimer();
    try {
      const value = await fn();
      const outcome = outcomeOf(value);
      this.writes.inc({ mode: modeOf(), outcome });
      this.#counts.writes++;
      if (outcome === 'rejected') this.#counts.rejected++;
      else this.#counts.admitted++;
      return value;
    } catch (error) {
      this.writes.inc({ mode: modeOf(), outcome: 'error' });
      throw error;
    } finally {
      end();
    }
  }

  /**
   * Times a batch of writes: each item counts as one write with its own outcome, and each observes
   * the batch's latency (every item is answered when the batch is). Invalid items never reach `fn`
   * and are not counted, as a single write refused by validation is not.
   */
  async timeWriteBatch<T>(
    fn: () => Promise<T[]>,
    outcomeOf: (item: T) => string,
    modeOf: () => string = () => UNKNOWN_MODE,
  ): Promise<T[]> {
    const started = performance.now();
    const items = await fn();
    const seconds = (performance.now() - started) / 1000;
    const mode = modeOf();
    // One counter increment per outcome, not per item: labelling an increment hashes its labels
    // (docs/adr/0208). The histogram has no labels and takes each item's observation.
    const byOutcome = new Map<string, number>();
    for (const item of items) {
      const outcome = outcomeOf(item);
      byOutcome.set(outcome, (byOutcome.get(outcome) ?? 0) + 1);
      this.writeSeconds.observe(seconds);
      if (outcome === 'error') continue;
      this.#counts.writes++;
      if (outcome === 'rejected') this.#counts.rejected++;
      else this.#counts.admitted++;
    }
    for (const [outcome, n] of byOutcome) this.writes.inc({ mode, outcome }, n);
    return items;
  }

  /**
   * Times `fn` as one request that writes several nodes (`POST /ingest`, an acquisition approval):
   * each node written counts as a write with its own outcome, as `POST /write` counts its one.
   */
  async timeWrites<T>(
    fn: () => Promise<T>,
    outcomesOf: (value: T) => readonly string[],
    modeOf: () => string = () => UNKNOWN_MODE,
  ): Promise<T> {
    const end = this.writeSeconds.startTimer();
    try {
      const value = await fn();
      for (const outcome of outcomesOf(value)) {
        this.writes.inc({ mode: modeOf(), outcome });
        this.#counts.writes++;
        if (outcome === 'rejected') this.#counts.rejected++;
        else this.#counts.admitted++;
      }
      return value;
    } catch (error) {
      this.writes.inc({ mode: modeOf(), outcome: 'error' });
      throw error;
    } finally {
      end();
    }
  }

  /** Times `fn` as a retrieval, labelled by `labels`. */
  async timeRetrieve<T>(
    fn: () => Promise<T>,
    labels: RetrievalLabels = { mode: () => UNKNOWN_MODE, path: undefined },
  ): Promise<T> {
    const end = this.retrieveSeconds.startTimer();
    const started = performance.now();
    this.#counts.retrievals++;
    try {
      const value = await fn();
      this.retrievals.inc({ mode: labels.mode(), outcome: 'ok' });
      return value;
    } catch (error) {
      this.retrievals.inc({ mode: labels.mode(), outcome: 'error' });
      this.#counts.retrievalErrors++;
      throw error;
    } finally {
      end();
      const seconds = (performance.now() - started) / 1000;
      if (labels.path !== undefined) this.retrievalPathSeconds.observe({ path: labels.path }, seconds);
      this.#recordLatency(seconds * 1e6);
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
    const at = (p: number) =>
      sorted.length === 0 ? 0 : sorted[Math.min(sorted.length - 1, Math.ceil((p / 100) * sorted.length) - 1)]!;
    const c = this.#counts;
    const round = (x: number) => Math.round(x * 10) / 10;
    return {
      retrievalTotal: c.retrievals,
      retrievalErrors: c.retrievalErrors,
      ingestTotal: c.writes,
      ingestAdmitted: c.admitted,
      ingestRejected: c.rejected,
      latencyP50Us: round(at(50)),
      latencyP95Us: round(at(95)),
      latencyMeanUs: c.retrievals === 0 ? 0 : round(this.#latencySumUs / c.retrievals),
    };
  }
}
