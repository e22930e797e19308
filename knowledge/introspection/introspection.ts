/**
 * Knowledge store introspection: release, API version, features, migrations, backends and stats.
 * Backends are described by kind and version only: no connection strings or file paths.
 */
/** A feature the store advertises in `/v1/features` and `/v1/version`. */
export interface Feature {
  readonly name: string;
  /** Every advertised feature is stable: an extension that is not stable is not listed. */
  readonly status: 'stable';
  readonly since: string;
  readonly description: string;
  /**
   * The family of the spec's "Versioning" 2 a feature belongs to (`backup`, `restore`, `lifecycle`,
   * `doctor`); its name starts with the family. Absent for features outside those families.
   */
  readonly family?: FeatureFamily;
}

/** The feature families the spec names (docs/adr/0178). */
export const FEATURE_FAMILIES = ['backup', 'restore', 'lifecycle', 'doctor'] as const;
export type FeatureFamily = (typeof FEATURE_FAMILIES)[number];

/** Features this release serves. Append as capabilities land. */
export const FEATURES: readonly Feature[] = [
  {
    name: 'feature-introspection',
    status: 'stable',
    since: 'v0.1.0',
    description: 'Version, features, migrations and backends are discoverable over REST.',
  },
  {
    name: 'graph-memory-write',
    status: 'stable',
    since: 'v0.1.0',
    description: 'Writes with source-credibility admission, conflict detection, fingerprint dedup and edges.',
  },
  {
    name: 'bitemporal-reads',
    status: 'stable',
    since: 'v0.1.0',
    description: 'Nodes are versioned in valid time and transaction time; reads accept valid_at and known_at.',
  },
  {
    name: 'hybrid-retrieval',
    status: 'stable',
    since: 'v0.1.0',
    description: 'Vector, multi-vector, lexical (FTS5) and graph-walk candidates fused by reciprocal rank fusion.',
  },
  {
    name: 'weighted-ranking',
    status: 'stable',
    since: 'v0.1.0',
    description:
      'Scores are weighted sums of similarity, confidence, recency and utility with a per-component breakdown.',
  },
  {
    name: 'source-retraction',
    status: 'stable',
    since: 'v0.1.0',
    description: "Retracting a source writes a new node version and keeps other sources' corroboration.",
  },
  {
    name: 'source-trust-timeline',
    status: 'stable',
    since: 'v0.1.0',
    description:
      'Source credibility changes, retractions and feedback that changed a source form a timeline per source.',
  },
  {
    name: 'explain-rank',
    status: 'stable',
    since: 'v0.1.0',
    description: 'Explains why one node outranks another, factor by factor (REST, GraphQL, admin).',
  },
  {
    name: 'write-intent-recovery',
    status: 'stable',
    since: 'v0.1.0',
    description: 'Durable pending intents around every mutation; list and reconcile interrupted writes.',
  },
  {
    name: 'graphql-search',
    status: 'stable',
    since: 'v0.1.0',
    description:
      'GraphQL search with boolean filters over content, similarity, edges, source credibility and validity.',
  },
  {
    name: 'openai-compatible-embedder',
    status: 'stable',
    since: 'v0.1.0',
    description: 'Optional OpenAI-compatible embeddings endpoint for writes and text retrieval.',
  },
  {
    name: 'on-demand-profiling',
    status: 'stable',
    since: 'v0.1.0',
    description: 'CPU profiles and heap snapshots through the Node inspector on the admin listener.',
  },
  {
    name: 'feedback-event-log',
    status: 'stable',
    since: 'v0.1.0',
    description:
      'Validate, refute, useful and stale feedback with bounded update rules, durable intents and an append-only event log.',
  },
  {
    name: 'claim-narrative',
    status: 'stable',
    since: 'v0.1.0',
    description: 'A claim told with its evidence, contradictions and a confidence explanation.',
  },
  {
    name: 'claim-review-queue',
    status: 'stable',
    since: 'v0.1.0',
    description:
      'Refuted, stale, low-confidence and contradictory claims derived incrementally into a prioritized review queue.',
  },
  {
    name: 'review-workflow-persistence',
    status: 'stable',
    since: 'v0.1.0',
    description: 'Append-only review decisions (assignment, snooze with recheck, resolution); the latest is effective.',
  },
  {
    name: 'source-trust-anomaly-alerts',
    status: 'stable',
    since: 'v0.1.0',
    description:
      'Sources whose credibility fell or that were refuted repeatedly since their last label become review items.',
  },
  {
    name: 'review-queue-filters',
    status: 'stable',
    since: 'v0.1.0',
    description:
      'Additive queue filters: types, source, status, owner, escalation level, limit; thresholds as parameters.',
  },
  {
    name: 'review-escalation-rules',
    status: 'stable',
    since: 'v0.1.0',
    description:
      'Open or assigned items past escalationAfterHours escalate as review_overdue; strong anomalies escalate at once.',
  },
  {
    name: 'review-escalation-digest',
    status: 'stable',
    since: 'v0.1.0',
    description: 'Escalated items grouped by owner, source, type and escalation level.',
  },
  {
    name: 'review-escalation-digest-export',
    status: 'stable',
    since: 'v0.1.0',
    description: 'Durable escalation digest snapshots.',
  },
  {
    name: 'review-handoff-feed',
    status: 'stable',
    since: 'v0.1.0',
    description: 'Digest snapshots polled with owner and escalation-level filters.',
  },
  {
    name: 'review-handoff-webhook-plan',
    status: 'stable',
    since: 'v0.1.0',
    description: 'Signed dry-run plan of a handoff webhook; sends nothing.',
  },
  {
    name: 'review-handoff-webhook-execution',
    status: 'stable',
    since: 'v0.1.0',
    description:
      'Opt-in synchronous HMAC-SHA-256 signed handoff delivery with SSRF checks, a timeout and a captured response.',
  },
  {
    name: 'review-handoff-delivery-receipts',
    status: 'stable',
    since: 'v0.1.0',
    description: 'Append-only receipts of every handoff delivery attempt.',
  },
  {
    name: 'review-handoff-retry-candidates',
    status: 'stable',
    since: 'v0.1.0',
    description: 'Unresolved failed handoff deliveries.',
  },
  {
    name: 'review-handoff-retry-execution',
    status: 'stable',
    since: 'v0.1.0',
    description: 'Explicit retries that record a new receipt and resolve the candidate on success.',
  },
  {
    name: 'review-handoff-retry-backoff',
    status: 'stable',
    since: 'v0.1.0',
    description: 'Exponential retry pacing recommendations (recommendedAfter, delaySeconds, ready, reason).',
  },
  {
    name: 'review-handoff-retry-fatigue',
    status: 'stable',
    since: 'v0.1.0',
    description:
      'Retry fatigue per target endpoint: candidates, attempts, ready and waiting counts, status families, last status and error.',
  },
  {
    name: 'review-handoff-retry-fatigue-owner-groups',
    status: 'stable',
    since: 'v0.1.0',
    description:
      'Retry fatigue grouped by owner and escalation level, narrowed by owner, escalation level or a preset: review-overdue, source-trust-anomaly, unassigned-review-overdue.',
  },
  {
    name: 'review-worker',
    status: 'stable',
    since: 'v0.1.0',
    description:
      'Bounded plan-or-execute review cycles with the rules or a server-configured webhook evaluator and durable run summaries.',
  },
  {
    name: 'knowledge-gap-detection',
    status: 'stable',
    since: 'v0.1.0',
    description:
      'Deterministic gap heuristics (refuted, contradicted, low-confidence, stale, thin topics, isolated nodes) with a coverage score (REST /gaps, GraphQL knowledgeGaps).',
  },
  {
    name: 'knowledge-acquisition-planner',
    status: 'stable',
    since: 'v0.1.0',
    description:
      'Research, crawl, verification and refresh tasks planned from gaps with deterministic ids within a cost budget (REST, GraphQL acquisitionPlan).',
  },
  {
    name: 'acquisition-execution-connectors',
    status: 'stable',
    since: 'v0.1.0',
    description:
      'Preview or execute planned tasks through an HTTP connector with SSRF checks, a timeout, an idempotency key and a per-call token that is never stored.',
  },
  {
    name: 'acquisition-provider-connectors',
    status: 'stable',
    since: 'v0.1.0',
    description:
      'Provider connectors speaking the HTTP connector contract, given per request or configured on the server (SVC_KNOWLEDGE_ACQUISITION_CONNECTORS, tokens kept as secrets) and called by id.',
  },
  {
    name: 'acquisition-connector-retry-receipts',
    status: 'stable',
    since: 'v0.1.0',
    description:
      'Append-only receipts per connector attempt with retryable or permanent classification, retry candidates and pacing recommendations.',
  },
  {
    name: 'acquisition-review-before-admission',
    status: 'stable',
    since: 'v0.1.0',
    description:
      'Acquired evidence staged as durable candidates outside the graph, approved (admitted once with a stable write identity) or rejected.',
  },
  {
    name: 'llm-extraction-ingest',
    status: 'stable',
    since: 'v0.1.0',
    description:
      'POST /ingest extracts claims with a configured OpenAI-compatible chat endpoint and writes them durably without duplicates on re-ingest.',
  },
  {
    name: 'group-commit-batch-writes',
    status: 'stable',
    since: 'v0.1.0',
    description:
      'Concurrent writes share one transaction and one fsync; POST /write/batch (extension) writes up to 1,000 nodes in order with per-item results.',
  },
  {
    name: 'snapshot-backup-restore',
    status: 'stable',
    since: 'v0.1.0',
    family: 'backup',
    description:
      'Per-namespace and whole-store backups over the admin API, restored after checks; a namespace restore replaces that namespace only (docs/adr/0174).',
  },
  {
    name: 'backup-namespace',
    status: 'stable',
    since: 'v0.1.0',
    family: 'backup',
    description:
      "POST /admin/api/backups {scope: namespace}: a consistent online copy of one namespace's rows, taken in bounded steps from a read snapshot.",
  },
  {
    name: 'backup-store',
    status: 'stable',
    since: 'v0.1.0',
    family: 'backup',
    description:
      'POST /admin/api/backups {scope: store}: the whole knowledge.db through the SQLite online backup API in steps, synced before it is listed.',
  },
  {
    name: 'backup-catalog',
    status: 'stable',
    since: 'v0.1.0',
    family: 'backup',
    description:
      'Backups listed with SHA-256, size, schema migration and row counts; downloaded, uploaded (checked like a restore) and deleted.',
  },
  {
    name: 'restore-namespace',
    status: 'stable',
    since: 'v0.1.0',
    family: 'restore',
    description: 'POST /admin/api/backups/{id}/restore {scope: namespace}: replaces one namespace in one transaction.',
  },
  {
    name: 'restore-store',
    status: 'stable',
    since: 'v0.1.0',
    family: 'restore',
    description:
      'POST /admin/api/backups/{id}/restore {scope: store}: replaces every namespace of the store in one transaction.',
  },
  {
    name: 'restore-verification',
    status: 'stable',
    since: 'v0.1.0',
    family: 'restore',
    description:
      'A changed, corrupt, foreign or newer-version backup is refused with a 422 naming why, and nothing is changed.',
  },
  {
    name: 'lifecycle-retention',
    status: 'stable',
    since: 'v0.1.0',
    family: 'lifecycle',
    description:
      'Nodes of a memory type (working memory) expire an age after their last write unless referenced; off by default (SVC_KNOWLEDGE_RETENTION), previewable.',
  },
  {
    name: 'lifecycle-compaction',
    status: 'stable',
    since: 'v0.1.0',
    family: 'lifecycle',
    description:
      'Superseded versions closed before a horizon are removed; current and referenced versions never are; off by default (SVC_KNOWLEDGE_COMPACTION_HORIZON), previewable.',
  },
  {
    name: 'lifecycle-vacuum',
    status: 'stable',
    since: 'v0.1.0',
    family: 'lifecycle',
    description: 'VACUUM on a schedule (SVC_KNOWLEDGE_VACUUM_INTERVAL) or on request, with the size before and after.',
  },
  {
    name: 'doctor-sample-write',
    status: 'stable',
    since: 'v0.1.0',
    family: 'doctor',
    description:
      'A sample write, retrieve and retract in a scratch namespace that is removed afterwards (POST /admin/api/doctor/sample-write; svc doctor runs it).',
  },
  {
    name: 'ranking-eval-snapshots',
    status: 'stable',
    since: 'v0.1.0',
    description:
      'Ranking evaluation runs stored with their figures, listed over time and compared two at a time (/admin/api/ranking-eval/snapshots).',
  },
  {
    name: 'review-handoff-retry-fatigue-markdown',
    status: 'stable',
    since: 'v0.1.0',
    description:
      'The retry-fatigue report as Markdown: REST format=markdown or Accept: text/markdown, GraphQL reviewHandoffRetryFatigueMarkdown.',
  },
];

export const API_VERSION = 'v1';
export const DOCS_VERSION = 'v1';
export const COMPATIBILITY =
  'Minor releases before 1.0 are non-breaking for the v1 API; breaking changes wait for a new API version.';
