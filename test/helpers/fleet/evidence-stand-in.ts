/**
 * A local evidence service that enforces the v4 callback contract: registration (PUT), claim,
 * commit (POST) and status (GET), each keyed by admission id and generation, each a compare-and-set
 * on the revision. It stores what it is sent, builds the immutable claim snapshot (with the digest
 * computed the way the spec says), and lets a test add the absence proof or hold the next commit.
 */
import { createHash } from 'node:crypto';
import { snapshotDigest } from '../../../domain/fleet/admission-identity.js';
import { startHttpsStandIn, type HttpsStandIn, type ReceivedRequest, type StandInAnswer } from './https-stand-in.js';
import type { TestCertificates } from './test-certificates.js';

/** What the stand-in knows of one admission. */
export interface EvidenceRecord {
  revision: number;
  generation: number;
  state: 'registered' | 'claimed' | 'committed';
  nonceSha256: string;
  lineage: string[];
  registrations: Record<string, unknown>[];
  snapshot?: Record<string, unknown>;
  commit?: Record<string, unknown>;
  absenceProofSha256?: string;
}

export interface EvidenceStandIn extends HttpsStandIn {
  readonly records: Map<string, EvidenceRecord>;
  readonly verifierToken: string;
  readonly registrationToken: string;
  /** Adds the absence-proof digest of an admission (the evidence service saw the external deployment gone). */
  addAbsenceProof(admissionId: string, digest: string): void;
  /** The next commit request is left unanswered (and unrecorded unless `record`); resolves when it arrives. */
  holdNextCommit(options?: { readonly record?: boolean }): Promise<void>;
  /** The next claim of `admissionId` is recorded but answered 503, as if the answer was lost. */
  loseNextClaimAnswer(admissionId: string): void;
}

const allocations = [
  { region: 'eu-west', nodeId: 'node-a', jobId: 'sample-runtime', status: 'running' },
  { region: 'eu-west', nodeId: 'node-b', jobId: 'sample-runtime', status: 'running' },
];

export async function startEvidenceStandIn(certs: TestCertificates): Promise<EvidenceStandIn> {
  const records = new Map<string, EvidenceRecord>();
  const verifierToken = `verifier-${createHash('sha256').update(String(Math.random())).digest('hex').slice(0, 24)}`;
  const registrationToken = `registration-${createHash('sha256').update(String(Math.random())).digest('hex').slice(0, 24)}`;
  let hold: { resolve: () => void; record: boolean } | undefined;
  const loseClaim = new Set<string>();
  const conflict = (record: EvidenceRecord | undefined): StandInAnswer => ({
    status: 409,
    body: { error: 'revision_conflict', revision: record?.revision ?? 0 },
  });
  const handle = (request: ReceivedRequest): StandInAnswer => {
    const match = /^\/v4\/admissions\/([^/]+)\/generations\/(\d+)(?:\/(claim|commit|status))?$/.exec(request.path);
    if (!match) return { status: 404, body: { error: 'not_found' } };
    const id = decodeURIComponent(match[1]!);
    const generation = Number(match[2]);
    const action = match[3] ?? 'register';
    const token = action === 'register' ? registrationToken : verifierToken;
    if (request.headers.authorization !== `Bearer ${token}`) return { status: 401, body: { error: 'unauthorized' } };
    const record = records.get(id);
    if (action === 'status') {
      if (request.method !== 'GET' || !record) return { status: 404, body: { error: 'not_found' } };
      return {
        status: 200,
        body: {
          schemaVersion: 'v4',
          admissionId: id,
          generation: record.generation,
          revision: record.revision,
          state: record.state,
          ...(record.snapshot ? { snapshotDigest: record.snapshot.digest } : {}),
          ...(record.absenceProofSha256 ? { absenceProofSha256: record.absenceProofSha256 } : {}),
        },
      };
    }
    const body = JSON.parse(request.body) as Record<string, any>;
    if (body.schemaVersion !== 'v4' || body.admissionId !== id || body.generation !== generation)
      return { status: 400, body: { error: 'bad_request' } };
    if ('nonce' in body) return { status: 400, body: { error: 'raw nonce material is never accepted' } };
    if (action === 'register') {
      if (request.method !== 'PUT') return { status: 405 };
      if (record === undefined) {
        if (body.expectedRevision !== 0 || generation !== 1) return conflict(record);
        records.set(id, {
          revision: 1,
          generation,
          state: 'registered',
          nonceSha256: body.nonceSha256,
          lineage: [body.attempt.rootAttemptId],
          registrations: [body],
        });
        return { status: 201, body: { schemaVersion: 'v4', admissionId: id, generation, revision: 1 } };
      }
      if (
        body.expectedRevision !== record.revision ||
        generation !== record.generation + 1 ||
        record.state === 'committed'
      )
        return conflict(record);
      record.revision += 1;
      record.generation = generation;
      record.state = 'registered';
      record.nonceSha256 = body.nonceSha256;
      record.snapshot = undefined;
      record.registrations.push(body);
      const attempt = `${body.attempt.rootAttemptId}:${body.ci.runAttempt}:g${generation}`;
      if (!record.lineage.includes(attempt)) record.lineage.push(attempt);
      return { status: 201, body: { schemaVersion: 'v4', admissionId: id, generation, revision: record.revision } };
    }
    if (
      request.method !== 'POST' ||
      record === undefined ||
      generation !== record.generation ||
      body.expectedRevision !== record.revision
    )
      return conflict(record);
    if (action === 'claim') {
      if (record.state !== 'registered') return conflict(record);
      const now = new Date().toISOString();
      const fields = {
        id,
        ref: `evidence/${id}/${generation}`,
        liveCheckedAt: now,
        nonceWrittenAt: now,
        nonceReadAt: now,
        verification: { receiptSha256: body.receiptSha256, proofDigests: body.proofDigests },
        retryLineage: [...record.lineage],
        checkpointRefs: [
          { kind: 'external_admission', attemptId: record.lineage.at(-1), evidenceDigest: body.receiptSha256 },
        ],
        allocations,
      };
      record.snapshot = { ...fields, digest: snapshotDigest(fields) };
      record.state = 'claimed';
      record.revision += 1;
      if (loseClaim.delete(id)) {
        return { status: 503, body: { error: 'unavailable' } };
      }
      return {
        status: 200,
        body: {
          schemaVersion: 'v4',
          admissionId: id,
          generation,
          revision: record.revision,
          snapshot: record.snapshot,
        },
      };
    }
    // commit
    const held = hold;
    hold = undefined;
    if (held !== undefined && !held.record) {
      held.resolve();
      return { hold: true };
    }
    if (
      record.state !== 'claimed' ||
      body.snapshotDigest !== record.snapshot?.digest ||
      body.receiptSha256 !== (record.snapshot?.verification as any)?.receiptSha256
    )
      return conflict(record);
    record.commit = body;
    record.state = 'committed';
    record.revision += 1;
    if (held !== undefined) {
      held.resolve();
      return { hold: true };
    }
    return { status: 200, body: { schemaVersion: 'v4', admissionId: id, generation, revision: record.revision } };
  };
  const server = await startHttpsStandIn(certs, handle);
  return {
    ...server,
    records,
    verifierToken,
    registrationToken,
    addAbsenceProof(admissionId, digest) {
      records.get(admissionId)!.absenceProofSha256 = digest;
    },
    holdNextCommit(options = {}) {
      return new Promise<void>((resolve) => {
        hold = { resolve, record: options.record === true };
      });
    },
    loseNextClaimAnswer(admissionId) {
      loseClaim.add(admissionId);
    },
  };
}
