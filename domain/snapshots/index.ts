export {
  SnapshotKind,
  compactTimestamp,
  formatSnapshotName,
  isCompactTimestamp,
  parseCompactTimestamp,
  parseSnapshotName,
  planRetention,
  requireSnapshotName,
  resolveSnapshotReference,
} from './snapshot-name.js';
export type { RetentionEntry, SnapshotName } from './snapshot-name.js';
