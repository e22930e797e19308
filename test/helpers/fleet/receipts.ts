/**
 * Builds what the CI side sends: the logical identity of the sample app and a v4 receipt proving
 * it (the fields an external verifier would produce), bound to an admission's id, generation and
 * nonce hash.
 */
import { createHash } from 'node:crypto';
import type { LogicalIdentity } from '../../../domain/fleet/admission-identity.js';
import { jobProofDigest, type ReceiptV4 } from '../../../domain/fleet/receipt-v4.js';
import { SAMPLE } from './restricted-fixture.js';

export const sha256 = (text: string) => createHash('sha256').update(text).digest('hex');

/** The sample app's logical identity. */
export function sampleIdentity(overrides: Partial<LogicalIdentity> = {}): LogicalIdentity {
  return {
    candidate: { app: SAMPLE.app, environment: 'staging' },
    source: { repository: SAMPLE.repository, sha: SAMPLE.sha },
    artifact: { image: SAMPLE.image },
    plan: { namespace: SAMPLE.namespace, planId: 'plan-1', planSha256: sha256('plan-1') },
    rootAttemptId: 'attempt-root-1',
    ...overrides,
  };
}

/** A v4 receipt for `identity`, bound to the admission, its generation and the nonce (only its hash goes in). */
export function sampleReceipt(
  identity: LogicalIdentity,
  admission: { admissionId: string; generation: number; nonce: string },
): ReceiptV4 {
  const migration = { JobID: SAMPLE.migrationJobId, EvalID: 'eval-m-1', JobModifyIndex: 41 };
  const runtime = { JobID: SAMPLE.runtimeJobId, EvalID: 'eval-r-1', JobModifyIndex: 42 };
  const t = (minutes: number) => new Date(Date.UTC(2026, 10, 25, 6, minutes)).toISOString();
  return {
    schemaVersion: 'v4',
    admissionId: admission.admissionId,
    generation: admission.generation,
    nonceSha256: sha256(admission.nonce),
    fleet: {
      rootAttemptId: identity.rootAttemptId,
      attemptId: `${identity.rootAttemptId}-a${admission.generation}`,
      namespace: identity.plan.namespace,
      planId: identity.plan.planId,
      planSha256: identity.plan.planSha256,
    },
    candidate: identity.candidate,
    source: { repository: identity.source.repository, sourceSha: identity.source.sha },
    artifact: {
      image: identity.artifact.image,
      provenanceSha256: sha256('provenance bundle'),
      sbomSha256: sha256('sbom bundle'),
    },
    scheduler: {
      apiVersion: 'v2',
      migration: { ...migration, hclSha256: SAMPLE.migrationHcl, proofSha256: jobProofDigest(migration) },
      runtime: { ...runtime, hclSha256: SAMPLE.runtimeHcl, proofSha256: jobProofDigest(runtime) },
    },
    ingressNodeIds: ['ingress-a', 'ingress-b'],
    publicHttpsVersion: {
      url: 'https://sample.example.test/version',
      status: 200,
      sourceSha: identity.source.sha,
      checkedAt: t(3),
    },
    privateReadiness: { status: 'ready', checkedAt: t(3) },
    chronology: { prepare: t(0), migration: t(1), runtime: t(2), exercise: t(4) },
  };
}
