/**
 * The durable context of an external admission as the API shows it: the source of truth a caller
 * reads instead of inferring anything from a lost response. Digests and ids only; never a nonce,
 * token or credential.
 */
import type { AdmissionRecord } from '../../store/control/external-admissions.js';

/** The context document. */
export interface AdmissionContext {
  readonly admissionId: string;
  readonly app: string;
  readonly state: AdmissionRecord['state'];
  readonly logicalIdentity: AdmissionRecord['identity'];
  readonly logicalDigest: string;
  readonly nonceGeneration: number;
  readonly evidenceRevision: number;
  readonly commitPending: boolean;
  readonly receiptSha256: string | null;
  readonly snapshotDigest: string | null;
  readonly operation: { readonly id: string; readonly digest: string | null; readonly location: string } | null;
  readonly deploymentId: string | null;
  readonly cleanup: {
    readonly state: 'not_ready' | 'ready' | 'complete';
    readonly intentDigest: string | null;
    readonly absenceProofDigest: string | null;
    /** The one external_cleanup checkpoint, pending until cleanup writes it. */
    readonly checkpoint: {
      readonly kind: 'external_cleanup';
      readonly attemptId: string;
      readonly evidenceDigest: string;
      readonly written: boolean;
    } | null;
  };
  readonly retryLineage: readonly string[];
  readonly checkpointRefs: AdmissionRecord['checkpoints'];
  readonly createdAt: string;
  readonly updatedAt: string;
}

/** The context of a stored admission. */
export function admissionContext(record: AdmissionRecord): AdmissionContext {
  const last = record.retryLineage.at(-1) ?? record.identity.rootAttemptId;
  const cleanupState =
    record.state === 'complete' ? 'complete' : record.state === 'cleanup_ready' ? 'ready' : 'not_ready';
  return {
    admissionId: record.id,
    app: record.app,
    state: record.state,
    logicalIdentity: record.identity,
    logicalDigest: record.requestDigest,
    nonceGeneration: record.generation,
    evidenceRevision: record.evidenceRevision,
    commitPending: record.commitPending,
    receiptSha256: record.receiptDigest,
    snapshotDigest: record.snapshotDigest,
    operation:
      record.operationId === null
        ? null
        : {
            id: record.operationId,
            digest: record.operationDigest,
            location: `/api/v1/operations/${record.operationId}`,
          },
    deploymentId: record.deploymentId,
    cleanup: {
      state: cleanupState,
      intentDigest: record.cleanupIntentDigest,
      absenceProofDigest: record.absenceProofDigest,
      checkpoint:
        record.absenceProofDigest === null
          ? null
          : {
              kind: 'external_cleanup',
              attemptId: last,
              evidenceDigest: record.absenceProofDigest,
              written: record.state === 'complete',
            },
    },
    retryLineage: record.retryLineage,
    checkpointRefs: record.checkpoints,
    createdAt: record.createdAt,
    updatedAt: record.updatedAt,
  };
}
