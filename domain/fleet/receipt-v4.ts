/**
 * Version 4 external admission receipts: their exact shape and the checks that bind one to the
 * admission it claims to prove (v3 was removed; a receipt of another version is refused).
 *
 * A receipt proves a deployment made outside the platform: the parsed provenance and SBOM bundles
 * (as canonical SHA-256 digests), the scheduler v2 migration and runtime job proofs (JobID, EvalID,
 * JobModifyIndex, each with a canonical-JSON digest), two distinct ingress nodes, the public
 * `/version` and private readiness probes, and the chronology prepare, migration, runtime, exercise.
 * It names the nonce only by its SHA-256: raw nonce material never appears in it.
 */
import { canonicalDigest } from '../canonical-json.js';
import { ValidationError } from '../errors.js';
import { exactObject, isPinnedImage, isSha256, type LogicalIdentity } from './admission-identity.js';

/** One scheduler job proof. */
export interface JobProof {
  readonly JobID: string;
  readonly EvalID: string;
  readonly JobModifyIndex: number;
  readonly hclSha256: string;
  /** canonical-JSON SHA-256 of `{ JobID, EvalID, JobModifyIndex }`. */
  readonly proofSha256: string;
}

/** A v4 receipt. */
export interface ReceiptV4 {
  readonly schemaVersion: 'v4';
  readonly admissionId: string;
  readonly generation: number;
  readonly nonceSha256: string;
  readonly fleet: {
    readonly rootAttemptId: string;
    readonly attemptId: string;
    readonly namespace: string;
    readonly planId: string;
    readonly planSha256: string;
  };
  readonly candidate: { readonly app: string; readonly environment: string };
  readonly source: { readonly repository: string; readonly sourceSha: string };
  readonly artifact: { readonly image: string; readonly provenanceSha256: string; readonly sbomSha256: string };
  readonly scheduler: { readonly apiVersion: 'v2'; readonly migration: JobProof; readonly runtime: JobProof };
  readonly ingressNodeIds: readonly [string, string];
  readonly publicHttpsVersion: {
    readonly url: string;
    readonly status: number;
    readonly sourceSha: string;
    readonly checkedAt: string;
  };
  readonly privateReadiness: { readonly status: 'ready'; readonly checkedAt: string };
  readonly chronology: {
    readonly prepare: string;
    readonly migration: string;
    readonly runtime: string;
    readonly exercise: string;
  };
}

/** The one app and the two scheduler jobs (with their HCL digests) the bridge is configured to admit. */
export interface AdmissionBindings {
  readonly app: string;
  readonly namespace: string;
  readonly migrationJobId: string;
  readonly migrationHclSha256: string;
  readonly runtimeJobId: string;
  readonly runtimeHclSha256: string;
}

/** What the platform expects of the receipt: the admission and the bridge's configuration. */
export interface ReceiptExpectations extends Pick<
  AdmissionBindings,
  'migrationJobId' | 'migrationHclSha256' | 'runtimeJobId' | 'runtimeHclSha256'
> {
  readonly admissionId: string;
  readonly generation: number;
  readonly nonceSha256: string;
  readonly identity: LogicalIdentity;
}

/** The proof digests the evidence service binds at claim and commit. */
export interface ProofDigests {
  readonly provenance: string;
  readonly sbom: string;
  readonly migration: string;
  readonly runtime: string;
}

const TIME = /^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}(\.\d{1,9})?Z$/;

function invalid(field: string, rule: string): never {
  throw new ValidationError(`receipt.${field}: ${rule}`, {
    code: 'invalid_receipt',
    details: { field: `receipt.${field}` },
  });
}
function str(value: unknown, field: string): string {
  if (typeof value !== 'string' || value.length === 0 || value.length > 512)
    invalid(field, 'must be a non-empty string');
  return value;
}
function digest(value: unknown, field: string): string {
  if (!isSha256(value)) invalid(field, 'must be a lower-case SHA-256 hex digest');
  return value;
}
function time(value: unknown, field: string): string {
  if (typeof value !== 'string' || !TIME.test(value) || Number.isNaN(Date.parse(value)))
    invalid(field, 'must be an ISO 8601 UTC timestamp');
  return value;
}

/** canonical-JSON digest of a job proof's identity. */
export function jobProofDigest(proof: Pick<JobProof, 'JobID' | 'EvalID' | 'JobModifyIndex'>): string {
  return canonicalDigest({ JobID: proof.JobID, EvalID: proof.EvalID, JobModifyIndex: proof.JobModifyIndex });
}

function jobProof(value: unknown, field: string): JobProof {
  const o = exactObject(value, `receipt.${field}`, ['JobID', 'EvalID', 'JobModifyIndex', 'hclSha256', 'proofSha256']);
  if (typeof o.JobModifyIndex !== 'number' || !Number.isSafeInteger(o.JobModifyIndex) || o.JobModifyIndex < 0)
    invalid(`${field}.JobModifyIndex`, 'must be a whole number');
  const proof = {
    JobID: str(o.JobID, `${field}.JobID`),
    EvalID: str(o.EvalID, `${field}.EvalID`),
    JobModifyIndex: o.JobModifyIndex,
    hclSha256: digest(o.hclSha256, `${field}.hclSha256`),
    proofSha256: digest(o.proofSha256, `${field}.proofSha256`),
  };
  if (proof.proofSha256 !== jobProofDigest(proof))
    invalid(`${field}.proofSha256`, 'is not the canonical-JSON SHA-256 of { JobID, EvalID, JobModifyIndex }');
  return proof;
}

/** Parses the exact v4 shape (anything else, v3 included, is refused). */
export function parseReceiptV4(value: unknown): ReceiptV4 {
  const top = exactObject(value, 'receipt', [
    'schemaVersion',
    'admissionId',
    'generation',
    'nonceSha256',
    'fleet',
    'candidate',
    'source',
    'artifact',
    'scheduler',
    'ingressNodeIds',
    'publicHttpsVersion',
    'privateReadiness',
    'chronology',
  ]);
  if (top.schemaVersion !== 'v4')
    throw new ValidationError(
      `receipt.schemaVersion: only v4 receipts are accepted (v3 was removed), not ${JSON.stringify(top.schemaVersion)}`,
      { code: 'unsupported_receipt_version', details: { field: 'receipt.schemaVersion' } },
    );
  if (typeof top.generation !== 'number' || !Number.isSafeInteger(top.generation) || top.generation < 1)
    invalid('generation', 'must be a whole number from 1');
  const fleet = exactObject(top.fleet, 'receipt.fleet', [
    'rootAttemptId',
    'attemptId',
    'namespace',
    'planId',
    'planSha256',
  ]);
  const candidate = exactObject(top.candidate, 'receipt.candidate', ['app', 'environment']);
  const source = exactObject(top.source, 'receipt.source', ['repository', 'sourceSha']);
  const artifact = exactObject(top.artifact, 'receipt.artifact', ['image', 'provenanceSha256', 'sbomSha256']);
  const scheduler = exactObject(top.scheduler, 'receipt.scheduler', ['apiVersion', 'migration', 'runtime']);
  if (scheduler.apiVersion !== 'v2') invalid('scheduler.apiVersion', 'must be v2');
  if (!Array.isArray(top.ingressNodeIds) || top.ingressNodeIds.length !== 2)
    invalid('ingressNodeIds', 'must list exactly two ingress nodes');
  const nodes = (top.ingressNodeIds as unknown[]).map((node, i) => str(node, `ingressNodeIds[${i}]`));
  if (nodes[0] === nodes[1]) invalid('ingressNodeIds', 'must name two distinct ingress nodes');
  const version = exactObject(top.publicHttpsVersion, 'receipt.publicHttpsVersion', [
    'url',
    'status',
    'sourceSha',
    'checkedAt',
  ]);
  const readiness = exactObject(top.privateReadiness, 'receipt.privateReadiness', ['status', 'checkedAt']);
  const chronology = exactObject(top.chronology, 'receipt.chronology', ['prepare', 'migration', 'runtime', 'exercise']);
  const image = artifact.image;
  if (!isPinnedImage(image)) invalid('artifact.image', 'must be a digest-pinned image');
  if (typeof version.url !== 'string' || !/^https:\/\/[^\s/]+(\/[^\s]*)?\/version$/.test(version.url))
    invalid('publicHttpsVersion.url', 'must be an https URL ending in /version');
  if (version.status !== 200) invalid('publicHttpsVersion.status', 'must be 200');
  if (readiness.status !== 'ready') invalid('privateReadiness.status', 'must be ready');
  return {
    schemaVersion: 'v4',
    admissionId: str(top.admissionId, 'admissionId'),
    generation: top.generation,
    nonceSha256: digest(top.nonceSha256, 'nonceSha256'),
    fleet: {
      rootAttemptId: str(fleet.rootAttemptId, 'fleet.rootAttemptId'),
      attemptId: str(fleet.attemptId, 'fleet.attemptId'),
      namespace: str(fleet.namespace, 'fleet.namespace'),
      planId: str(fleet.planId, 'fleet.planId'),
      planSha256: digest(fleet.planSha256, 'fleet.planSha256'),
    },
    candidate: {
      app: str(candidate.app, 'candidate.app'),
      environment: str(candidate.environment, 'candidate.environment'),
    },
    source: {
      repository: str(source.repository, 'source.repository'),
      sourceSha: str(source.sourceSha, 'source.sourceSha'),
    },
    artifact: {
      image,
      provenanceSha256: digest(artifact.provenanceSha256, 'artifact.provenanceSha256'),
      sbomSha256: digest(artifact.sbomSha256, 'artifact.sbomSha256'),
    },
    scheduler: {
      apiVersion: 'v2',
      migration: jobProof(scheduler.migration, 'scheduler.migration'),
      runtime: jobProof(scheduler.runtime, 'scheduler.runtime'),
    },
    ingressNodeIds: [nodes[0]!, nodes[1]!],
    publicHttpsVersion: {
      url: version.url,
      status: 200,
      sourceSha: str(version.sourceSha, 'publicHttpsVersion.sourceSha'),
      checkedAt: time(version.checkedAt, 'publicHttpsVersion.checkedAt'),
    },
    privateReadiness: { status: 'ready', checkedAt: time(readiness.checkedAt, 'privateReadiness.checkedAt') },
    chronology: {
      prepare: time(chronology.prepare, 'chronology.prepare'),
      migration: time(chronology.migration, 'chronology.migration'),
      runtime: time(chronology.runtime, 'chronology.runtime'),
      exercise: time(chronology.exercise, 'chronology.exercise'),
    },
  };
}

/**
 * Every binding of a parsed receipt to what the platform expects; returns the broken rules (empty
 * when the receipt proves this admission).
 */
export function receiptMismatches(receipt: ReceiptV4, expected: ReceiptExpectations): string[] {
  const out: string[] = [];
  const id = expected.identity;
  const check = (ok: boolean, rule: string) => {
    if (!ok) out.push(rule);
  };
  check(receipt.admissionId === expected.admissionId, 'receipt.admissionId is not this admission');
  check(
    receipt.generation === expected.generation,
    `receipt.generation is not the current nonce generation ${expected.generation}`,
  );
  check(receipt.nonceSha256 === expected.nonceSha256, 'receipt.nonceSha256 is not the hash of the current nonce');
  check(
    receipt.fleet.rootAttemptId === id.rootAttemptId,
    'receipt.fleet.rootAttemptId differs from the logical identity',
  );
  check(
    receipt.fleet.namespace === id.plan.namespace &&
      receipt.fleet.planId === id.plan.planId &&
      receipt.fleet.planSha256 === id.plan.planSha256,
    'receipt.fleet plan differs from the logical identity',
  );
  check(
    receipt.candidate.app === id.candidate.app && receipt.candidate.environment === id.candidate.environment,
    'receipt.candidate differs from the logical identity',
  );
  check(
    receipt.source.repository === id.source.repository && receipt.source.sourceSha === id.source.sha,
    'receipt.source differs from the logical identity',
  );
  check(receipt.artifact.image === id.artifact.image, 'receipt.artifact.image differs from the logical identity');
  check(
    receipt.publicHttpsVersion.sourceSha === id.source.sha,
    'receipt.publicHttpsVersion.sourceSha is not the admitted source',
  );
  check(
    receipt.scheduler.migration.JobID === expected.migrationJobId,
    'receipt.scheduler.migration.JobID is not the configured migration job',
  );
  check(
    receipt.scheduler.migration.hclSha256 === expected.migrationHclSha256,
    'receipt.scheduler.migration.hclSha256 is not the configured migration job digest',
  );
  check(
    receipt.scheduler.runtime.JobID === expected.runtimeJobId,
    'receipt.scheduler.runtime.JobID is not the configured runtime job',
  );
  check(
    receipt.scheduler.runtime.hclSha256 === expected.runtimeHclSha256,
    'receipt.scheduler.runtime.hclSha256 is not the configured runtime job digest',
  );
  const c = receipt.chronology;
  const order = [c.prepare, c.migration, c.runtime, c.exercise].map((t) => Date.parse(t));
  check(
    order.every((t, i) => i === 0 || t > order[i - 1]!),
    'receipt.chronology must run prepare, migration, runtime, exercise in that order',
  );
  const probes = [receipt.publicHttpsVersion.checkedAt, receipt.privateReadiness.checkedAt].map((t) => Date.parse(t));
  check(
    probes.every((t) => t >= order[2]!),
    'receipt probes must be checked after the runtime job ran',
  );
  return out;
}

/** The proof digests of a receipt. */
export function proofDigests(receipt: ReceiptV4): ProofDigests {
  return {
    provenance: receipt.artifact.provenanceSha256,
    sbom: receipt.artifact.sbomSha256,
    migration: receipt.scheduler.migration.proofSha256,
    runtime: receipt.scheduler.runtime.proofSha256,
  };
}

/** The receipt digest: canonical-JSON SHA-256 of the whole receipt. */
export function receiptDigest(receipt: ReceiptV4): string {
  return canonicalDigest(receipt);
}
