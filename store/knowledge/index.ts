export { KNOWLEDGE_MIGRATIONS } from './migrations.js';
export { OPEN_TIME, type NamespaceRow, type VersionRow, type NewVersion, type SourceRow, type SourceTrustRow, type EdgeRow, type IntentRow } from './rows.js';
export { VectorTables, MAX_DIMENSIONS, type VectorMeta, type VectorRecord, type VectorFilter } from './vector-tables.js';
export { NodeStore, type TextFilter } from './node-store.js';
export { SourceStore } from './source-store.js';
export { EdgeStore } from './edge-store.js';
export { IntentStore } from './intent-store.js';
