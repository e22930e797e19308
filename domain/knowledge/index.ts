export {
  NamespaceMode,
  NAMESPACE_MODES,
  MemType,
  MEM_TYPES,
  DEFAULT_WEIGHTS,
  RECENCY_ALPHA,
  CREDIBILITY_FLOOR,
  DEFAULT_SOURCE_CREDIBILITY,
  DEFAULT_CONFIDENCE,
  defaultCandidateK,
  type ScoreWeights,
} from './modes.js';
export {
  clamp01,
  recencyScore,
  corroboration,
  confidenceScore,
  scoreCandidate,
  mergeWeights,
  type ScoreComponents,
  type Score,
} from './retrieval/scoring.js';
export { RRF_K, fuseLists, type PathList, type FusedCandidate } from './retrieval/fusion.js';
export { normalize, dot, cosine, signCode, POPCOUNT16 } from './retrieval/vector-math.js';
export {
  tokenize,
  isMixedIdentifier,
  parseLexicalQuery,
  matchExpression,
  satisfiesLiterals,
  termCoverage,
  rankingStems,
  type LexicalQuery,
  type QueryTerm,
} from './retrieval/lexical-query.js';
export {
  idf,
  bm25,
  bm25UpperBound,
  proximity,
  termCounts,
  BM25_K1,
  BM25_B,
  PROXIMITY_WINDOW,
  type WeightedTerm,
} from './retrieval/lexical-scoring.js';
export { analyze, stem, isStopword, isStopStem } from './retrieval/text-analysis.js';
export {
  ExpansionRelation,
  EXPANSION_WEIGHT,
  expansionWeight,
  type Expansion,
  type Thesaurus,
} from './retrieval/thesaurus.js';
export { matchesFilter, type FilterableNode, type SearchFilter } from './retrieval/search-filter.js';
export { canonicalContent } from './fingerprint.js';
export {
  FeedbackAction,
  FEEDBACK_ACTIONS,
  FEEDBACK_STEPS,
  applyFeedback,
  changesCredibility,
  type FeedbackState,
  type FeedbackOutcome,
} from './feedback-rules.js';
export {
  ReviewType,
  REVIEW_TYPES,
  ReviewStatus,
  REVIEW_STATUSES,
  EscalationLevel,
  ESCALATION_LEVELS,
  ReviewAction,
  REVIEW_ACTIONS,
  UNASSIGNED,
  DEFAULT_REVIEW_THRESHOLDS,
  feedbackSignals,
  lowConfidenceSignals,
  contradictionSignals,
  sourceAnomalySignal,
  effectiveStatus,
  ageHours,
  escalationLevelOf,
  reviewItemState,
  matchesReviewFilters,
  matchesSignal,
  compareReviewItems,
  type ReviewThresholds,
  type ReviewSignal,
  type DecisionState,
  type ReviewItemState,
  type FlaggedNode,
  type LiveClaim,
  type TrustPoint,
  type ReviewFilters,
} from './review-rules.js';
export { escalationDigest, type EscalationDigest, type EscalationGroup } from './escalation-digest.js';
export {
  RETRY_PACING,
  RETRY_FATIGUE_PRESETS,
  retryCandidates,
  retryDelaySeconds,
  recommendRetry,
  statusFamily,
  retryFatigue,
  type DeliveryAttempt,
  type RetryCandidate,
  type RetryRecommendation,
  type CandidateScope,
  type RetryFatigue,
  type RetryFatiguePreset,
} from './handoff-retry.js';
export {
  ADMISSION_REJECTION_REASONS,
  AdmissionRejectionReason,
  NO_TELEMETRY,
  WEBHOOK_DELIVERY_RESULTS,
  WebhookDeliveryResult,
  webhookDeliveryResult,
  type KnowledgeTelemetry,
} from './knowledge-telemetry.js';
export {
  RETRIEVAL_PATHS,
  RetrievalPath,
  retrievalPathOf,
  type RetrievalQueryShape,
} from './retrieval/retrieval-path.js';
