/**
 * The evidence service the external-admission bridge reports to (the port; the HTTPS client is in
 * platform/outbound). Every call is keyed by admission id and generation and is a compare-and-set
 * on the service's revision, with schema version v4.
 */
import { ValidationError } from '../errors.js';
import { exactObject, isSha256, snapshotDigest } from './admission-identity.js';
import type { LogicalIdentity } from './admission-identity.js';
import type { ProofDigests } from './receipt-v4.js';

/** The schema version of every callback. */
export const EVIDENCE_SCHEMA_VERSION = 'v4';

/** The continuous-integration run the nonce was issued to. */
export interface CiContext {
  readonly repository: string;
  readonly runId: string;
  readonly runAttempt: string;
  readonly workflowRef: string;
  readonly ref: string;
  readonly sha: string;
}

/** Registration (PUT): the nonce hash, never the nonce. */
export interface EvidenceRegistration {
  readonly admissionId: string;
  readonly generation: number;
  readonly expectedRevision: number;
  readonly logicalIdentity: LogicalIdentity;
  readonly logicalDigest: string;
  readonly attempt: { readonly rootAttemptId: string };
  readonly ci: CiContext;
  readonly nonceSha256: string;
  readonly issuanceWindow: { readonly notBefore: string; readonly notAfter: string };
}

/** Claim (POST): binds the receipt and proof digests; answers one immutable snapshot. */
export interface EvidenceClaim {
  readonly admissionId: string;
  readonly generation: number;
  readonly expectedRevision: number;
  readonly receiptSha256: string;
  readonly proofDigests: ProofDigests;
}

/** Commit (POST): binds snapshot, digests, the operation and the cleanup intent. */
export interface EvidenceCommit {
  readonly admissionId: string;
  readonly generation: number;
  readonly expectedRevision: number;
  readonly snapshotDigest: string;
  readonly receiptSha256: string;
  readonly proofDigests: ProofDigests;
  readonly operationId: string;
  readonly operationDigest: string;
  readonly cleanupIntentDigest: string;
}

/** One checkpoint reference of a snapshot or context. */
export interface CheckpointRef {
  readonly kind: 'external_admission' | 'external_cleanup';
  readonly attemptId: string;
  readonly evidenceDigest: string;
}

/** One allocation the evidence service saw running: the region truth of the deployment. */
export interface EvidenceAllocation {
  readonly region: string;
  readonly nodeId: string;
  readonly jobId: string;
  readonly status: string;
}

/** The immutable snapshot a claim returns. */
export interface EvidenceSnapshot {
  readonly id: string;
  readonly ref: string;
  readonly liveCheckedAt: string;
  readonly nonceWrittenAt: string;
  readonly nonceReadAt: string;
  readonly verification: { readonly receiptSha256: string; readonly proofDigests: ProofDigests };
  readonly retryLineage: readonly string[];
  readonly checkpointRefs: readonly CheckpointRef[];
  readonly allocations: readonly EvidenceAllocation[];
  readonly digest: string;
}

/** What the status call answers. */
export interface EvidenceStatus {
  readonly admissionId: string;
  readonly generation: number;
  readonly revision: number;
  readonly state: 'registered' | 'claimed' | 'committed';
  readonly snapshotDigest?: string;
  readonly absenceProofSha256?: string;
}

/** The evidence service. Rejects with a ConflictError on a revision mismatch, UnavailableError when unreachable. */
export interface EvidenceService {
  register(registration: EvidenceRegistration): Promise<{ readonly revision: number }>;
  claim(claim: EvidenceClaim): Promise<{ readonly revision: number; readonly snapshot: EvidenceSnapshot }>;
  commit(commit: EvidenceCommit): Promise<{ readonly revision: number }>;
  status(admissionId: string, generation: number): Promise<EvidenceStatus>;
}

function bad(rule: string): never {
  throw new ValidationError(`evidence snapshot: ${rule}`, { code: 'invalid_evidence_snapshot' });
}

/**
 * Checks a claim-time snapshot: its digest, that it verifies this receipt, and that it has exactly
 * one checkpoint (external_admission) tied to the last element of an ordered, unique retry lineage.
 */
export function checkClaimSnapshot(
  value: unknown,
  expected: { readonly admissionId: string; readonly receiptSha256: string; readonly proofDigests: ProofDigests },
): EvidenceSnapshot {
  const o = exactObject(value, 'snapshot', [
    'id',
    'ref',
    'liveCheckedAt',
    'nonceWrittenAt',
    'nonceReadAt',
    'verification',
    'retryLineage',
    'checkpointRefs',
    'allocations',
    'digest',
  ]);
  const snapshot = o as unknown as EvidenceSnapshot;
  if (snapshot.id !== expected.admissionId) bad('id is not this admission');
  if (!isSha256(snapshot.digest) || snapshot.digest !== snapshotDigest(o))
    bad('digest is not the SHA-256 of its fields');
  if (snapshot.verification?.receiptSha256 !== expected.receiptSha256) bad('verification is not of this receipt');
  const proofs = snapshot.verification.proofDigests as Partial<ProofDigests> | undefined;
  for (const key of ['provenance', 'sbom', 'migration', 'runtime'] as const)
    if (proofs?.[key] !== expected.proofDigests[key]) bad(`verification.proofDigests.${key} differs`);
  const lineage = snapshot.retryLineage;
  if (
    !Array.isArray(lineage) ||
    lineage.length === 0 ||
    new Set(lineage).size !== lineage.length ||
    !lineage.every((x) => typeof x === 'string')
  )
    bad('retryLineage must be a non-empty list of unique attempt ids');
  const refs = snapshot.checkpointRefs;
  if (
    !Array.isArray(refs) ||
    refs.length !== 1 ||
    refs[0]?.kind !== 'external_admission' ||
    refs[0].attemptId !== lineage.at(-1)
  )
    bad('must have exactly one external_admission checkpoint tied to the last retry lineage attempt');
  if (!Array.isArray(snapshot.allocations) || snapshot.allocations.length === 0)
    bad('allocations must name where the deployment runs');
  for (const allocation of snapshot.allocations) {
    if (
      typeof allocation?.region !== 'string' ||
      typeof allocation.nodeId !== 'string' ||
      typeof allocation.jobId !== 'string' ||
      typeof allocation.status !== 'string'
    )
      bad('each allocation needs region, nodeId, jobId and status');
  }
  return snapshot;
}
