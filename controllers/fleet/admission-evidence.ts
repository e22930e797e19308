/**
 * The admission bridge's exchanges with the evidence service that survive interruptions: a replacement
 * registration after a claim that was not recorded, the status read that makes an admission
 * cleanup_ready, and the evidence commit rebuilt from stored state.
 */
import { ConflictError, UnavailableError } from '../../domain/errors.js';
import type { EvidenceRegistration, EvidenceService } from '../../domain/fleet/evidence-port.js';
import type { LoggerPort } from '../../domain/logger.js';
import type { Db } from '../../store/database.js';
import { acknowledgeCommit, markCleanupReady, type AdmissionRecord } from '../../store/control/external-admissions.js';

/** What the evidence exchanges use of the bridge. */
export interface EvidenceExchange {
  readonly db: Db;
  readonly evidence: EvidenceService;
  readonly logger: LoggerPort;
  readonly now: () => Date;
}

/**
 * Registers a replacement generation. A claim interrupted before it was recorded here moved the
 * evidence revision on; when the service's status shows the same, uncommitted generation, the
 * registration is retried once against the revision it reports.
 */
export async function registerReplacement(
  x: EvidenceExchange,
  registration: EvidenceRegistration,
  current: number,
): Promise<{ revision: number }> {
  try {
    return await x.evidence.register(registration);
  } catch (error) {
    if (!(error instanceof ConflictError)) throw error;
    const status = await x.evidence.status(registration.admissionId, current);
    if (
      status.generation !== current ||
      status.state === 'committed' ||
      status.revision === registration.expectedRevision
    )
      throw error;
    x.logger.warn(
      { admissionId: registration.admissionId, stored: registration.expectedRevision, evidence: status.revision },
      'evidence revision moved by an interrupted claim; registering against it',
    );
    return x.evidence.register({ ...registration, expectedRevision: status.revision });
  }
}

/** Reads the evidence status of a committed admission; an absence proof makes it cleanup_ready. */
export async function refreshAdmission(
  x: EvidenceExchange,
  record: AdmissionRecord,
  tolerateUnavailable = false,
): Promise<AdmissionRecord> {
  if (record.commitPending) return record;
  try {
    const status = await x.evidence.status(record.id, record.generation);
    if (status.absenceProofSha256 === undefined) return record;
    if (!/^[0-9a-f]{64}$/.test(status.absenceProofSha256))
      throw new UnavailableError('the evidence service answered an absence proof that is not a SHA-256 digest', {
        code: 'evidence_service_unavailable',
      });
    return markCleanupReady(x.db, record.id, status.absenceProofSha256, record.checkpoints, x.now());
  } catch (error) {
    if (tolerateUnavailable && error instanceof UnavailableError) {
      x.logger.warn(
        { admissionId: record.id, err: error.message },
        'evidence status unavailable; answering the stored context',
      );
      return record;
    }
    throw error;
  }
}

/**
 * Sends the evidence commit, rebuilt from stored state. A revision conflict whose status shows the
 * same snapshot committed means an earlier commit landed and only its answer was lost.
 */
export async function sendCommit(
  x: EvidenceExchange,
  record: AdmissionRecord,
  reconciling = false,
): Promise<AdmissionRecord> {
  const intent = {
    admissionId: record.id,
    generation: record.generation,
    expectedRevision: record.evidenceRevision,
    snapshotDigest: record.snapshotDigest!,
    receiptSha256: record.receiptDigest!,
    proofDigests: record.proofDigests!,
    operationId: record.operationId!,
    operationDigest: record.operationDigest!,
    cleanupIntentDigest: record.cleanupIntentDigest!,
  };
  try {
    const { revision } = await x.evidence.commit(intent);
    return acknowledgeCommit(x.db, record.id, revision, x.now());
  } catch (error) {
    if (error instanceof ConflictError) {
      const status = await x.evidence.status(record.id, record.generation);
      if (status.state === 'committed' && status.snapshotDigest === record.snapshotDigest)
        return acknowledgeCommit(x.db, record.id, status.revision, x.now());
      throw error;
    }
    if (reconciling || !(error instanceof UnavailableError)) throw error;
    // The operation is committed locally; the caller sees commitPending and reconciles later.
    x.logger.warn(
      { admissionId: record.id, err: error.message },
      'evidence commit not acknowledged; the admission stays commit-pending until reconciled',
    );
    return record;
  }
}
