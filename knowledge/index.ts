/**
 * The knowledge store services, built once over an open `knowledge.db`.
 */
import type { Db } from '../store/database.js';
import { KnowledgeState, type KnowledgeStateOptions } from './core/knowledge-state.js';
import { WriteService } from './write/write-service.js';
import { RetrieveService } from './retrieve/retrieve-service.js';
import { NodeService } from './write/node-service.js';
import { SourceService } from './write/source-service.js';
import { RecoveryService } from './write/recovery-service.js';
import { ExplainRankService } from './introspection/explain-rank.js';
import { SearchService } from './retrieve/search-service.js';
import { FeedbackService } from './feedback/feedback-service.js';
import { ReviewService } from './review/review-service.js';
import { EscalationService } from './review/escalation-service.js';
import { HandoffService, type HandoffOptions } from './review/handoff-service.js';
import { ReviewWorker, type ReviewWorkerOptions } from './review/review-worker.js';
import { NarrativeService } from './retrieve/narrative-service.js';
import { GapService } from './acquisition/gap-service.js';
import { AcquisitionService } from './acquisition/acquisition-service.js';
import { ConfiguredConnectors, type ConfiguredConnector } from './acquisition/configured-connectors.js';
import { IngestService } from './ingest/ingest-service.js';
import type { Extractor } from '../domain/knowledge/model-ports.js';
import type { WebhookClient } from '../domain/knowledge/webhook-port.js';
import { UnavailableError } from '../domain/errors.js';

export { KnowledgeState, type KnowledgeStateOptions, type Namespace } from './core/knowledge-state.js';
export type { Embedder, Reranker, Extractor, ExtractedClaim } from '../domain/knowledge/model-ports.js';
export {
  WriteService,
  NIL_UUID,
  type WriteRequest,
  type WriteResult,
  type WriteOutcome,
} from './write/write-service.js';
export { RetrieveService, type RetrieveRequest, type RankedNode } from './retrieve/retrieve-service.js';
export { NodeService, type RetractRequest, type EdgeRequest } from './write/node-service.js';
export { SourceService, type SourceLabelRequest } from './write/source-service.js';
export { RecoveryService } from './write/recovery-service.js';
export { ExplainRankService, explainRankRest, type ExplainRankResult } from './introspection/explain-rank.js';
export { SearchService, type SearchNode } from './retrieve/search-service.js';
export { VectorIndex } from './retrieve/vector-index.js';
export { FeedbackService, eventView, type FeedbackRequest, type FeedbackResult } from './feedback/feedback-service.js';
export {
  ReviewService,
  decisionView,
  thresholdsView,
  type ReviewDecisionRequest,
  type ReviewItemView,
} from './review/review-service.js';
export { EscalationService, digestView, snapshotView, type DigestScope } from './review/escalation-service.js';
export {
  HandoffService,
  handoffPayload,
  receiptView,
  HANDOFF_EVENT,
  HANDOFF_TIMEOUT,
  type HandoffOptions,
  type HandoffRequest,
} from './review/handoff-service.js';
export {
  ReviewWorker,
  runView,
  WORKER_OWNER,
  WORKER_MAX_LIMIT,
  DEFAULT_ALLOWED_ACTIONS,
  type ReviewWorkerOptions,
  type WorkerCycleRequest,
} from './review/review-worker.js';
export { NarrativeService, narrativeRest, type Narrative } from './retrieve/narrative-service.js';
export { GapService, gapView, type GapRequestOptions } from './acquisition/gap-service.js';
export {
  AcquisitionService,
  AUTO_ADMISSION_ACTOR,
  type AcquisitionOptions,
} from './acquisition/acquisition-service.js';
export { planView, taskView, acquisitionReceiptView, candidateView } from './acquisition/acquisition-views.js';
export { ConfiguredConnectors, type ConfiguredConnector } from './acquisition/configured-connectors.js';
export {
  DEFAULT_EVIDENCE_SOURCE,
  type ConnectorTarget,
  type ExecuteRequest,
} from './acquisition/acquisition-request.js';
export { ACQUISITION_EVENT, CONNECTOR_TIMEOUT, type Evidence } from './acquisition/acquisition-connector.js';
export { IngestService, INGEST_MAX_CLAIMS, EXTRACTOR_SETTING, type IngestRequest } from './ingest/ingest-service.js';
export { RuleExtractor, RULE_EXTRACTOR_MODEL } from './ingest/ingest-extractor.js';
export {
  SIGNATURE_HEADER,
  EVENT_HEADER,
  DELIVERY_HEADER,
  ATTEMPT_HEADER,
  signBody,
  sha256Hex,
  type WebhookClient,
} from '../domain/knowledge/webhook-port.js';

/** Every knowledge service, sharing one core. */
export interface KnowledgeServices {
  readonly core: KnowledgeState;
  readonly writes: WriteService;
  readonly retrieval: RetrieveService;
  readonly nodes: NodeService;
  readonly sources: SourceService;
  readonly recovery: RecoveryService;
  readonly explainRank: ExplainRankService;
  readonly search: SearchService;
  readonly feedback: FeedbackService;
  readonly review: ReviewService;
  readonly escalations: EscalationService;
  readonly handoffs: HandoffService;
  readonly worker: ReviewWorker;
  readonly narratives: NarrativeService;
  readonly gaps: GapService;
  readonly acquisition: AcquisitionService;
  readonly ingest: IngestService;
}

/** Refuses every outbound call: the webhook client of services built without one (in-process tools). */
export const NO_WEBHOOKS: WebhookClient = {
  checkTarget: () =>
    Promise.reject(
      new UnavailableError('outbound webhooks are not configured in this process', { code: 'outbound_not_configured' }),
    ),
  postJson: () =>
    Promise.reject(
      new UnavailableError('outbound webhooks are not configured in this process', { code: 'outbound_not_configured' }),
    ),
};

/** Options of the review side: the outbound webhook client, the server-configured evaluator and the extractor. */
export interface ReviewOptions extends Partial<HandoffOptions> {
  readonly worker?: Omit<ReviewWorkerOptions, 'webhooks'>;
  /** LLM extractor of `POST /ingest`; without it the rule-based extractor is used. */
  readonly extractor?: Extractor | undefined;
  /** Acquisition connectors configured on the server, called by id. */
  readonly acquisitionConnectors?: readonly ConfiguredConnector[] | undefined;
}

/** Builds the services over `db` (its migrations must already be applied). */
export function createKnowledgeServices(
  db: Db,
  options: KnowledgeStateOptions = {},
  review: ReviewOptions = {},
): KnowledgeServices {
  const core = new KnowledgeState(db, options);
  const writes = new WriteService(core);
  const retrieval = new RetrieveService(core);
  const nodes = new NodeService(core, writes);
  const feedback = new FeedbackService(core, writes);
  const reviews = new ReviewService(core);
  const escalations = new EscalationService(core, reviews);
  const gaps = new GapService(core);
  const webhooks = review.webhooks ?? NO_WEBHOOKS;
  return {
    core,
    writes,
    retrieval,
    nodes,
    sources: new SourceService(core),
    recovery: new RecoveryService(core, writes, nodes, feedback),
    explainRank: new ExplainRankService(core),
    search: new SearchService(core, retrieval),
    feedback,
    review: reviews,
    escalations,
    handoffs: new HandoffService(core, escalations, { webhooks }),
    worker: new ReviewWorker(core, reviews, feedback, { ...review.worker, webhooks }),
    narratives: new NarrativeService(core),
    gaps,
    acquisition: new AcquisitionService(core, gaps, writes, {
      webhooks,
      connectors: new ConfiguredConnectors(review.acquisitionConnectors),
    }),
    ingest: new IngestService(core, writes, review.extractor),
  };
}
