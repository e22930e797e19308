export { KNOWLEDGE_MIGRATIONS } from './migrations.js';
export {
  OPEN_TIME,
  type NamespaceRow,
  type VersionRow,
  type NewVersion,
  type SourceRow,
  type SourceTrustRow,
  type EdgeRow,
  type IntentRow,
} from './rows.js';
export {
  VectorTables,
  MAX_DIMENSIONS,
  type VectorMeta,
  type VectorRecord,
  type VectorFilter,
} from './vector-tables.js';
export { NodeStore, type TextFilter } from './node-store.js';
export { SourceStore } from './source-store.js';
export { EdgeStore } from './edge-store.js';
export { IntentStore } from './intent-store.js';
export { FeedbackStore, type FeedbackEventRow, type NodeFeedbackRow } from './feedback-store.js';
export { ReviewStore, type ReviewDecisionRow, type LiveVersionBrief, type VersionText } from './review-store.js';
export { HandoffStore, type DigestRow, type ReceiptRow, type WorkerRunRow } from './handoff-store.js';
export {
  AcquisitionStore,
  type GapVersionRow,
  type AcquisitionReceiptRow,
  type AcquisitionCandidateRow,
} from './acquisition-store.js';
