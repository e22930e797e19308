/**
 * Job record: the Secret in which the kubernetes driver keeps a submitted job (its normalized spec,
 * version, stop state, pause and canary bookkeeping), so that any control plane reading the
 * namespace sees the same jobs. A Secret, not a ConfigMap, because specs carry resolved environment.
 */
import type { V1Secret } from '@kubernetes/client-node';
import { canonicalJson } from '../../canonical-json.js';
import { ValidationError } from '../../errors.js';
import { jobFingerprint } from '../fingerprint.js';
import type { JobSpec } from '../job.js';
import { SvcAnnotation, SvcLabel, SvcRole } from './labels.js';
import { dnsLabel, shortHash } from './names.js';
import { jobLabels } from './translate-job.js';
import { withFingerprint } from './object-fingerprint.js';

/** A pod template version: the group's version hash and the job version that introduced it. */
export interface TemplateVersion {
  readonly hash: string;
  readonly version: number;
}

/** The driver's bookkeeping of one job. */
export interface JobRecordState {
  readonly version: number;
  readonly status: 'running' | 'dead';
  readonly submittedAt: string;
  readonly paused: boolean;
  readonly awaitingPromotion: readonly string[];
  /** Per task group: the template its stable pods run. */
  readonly templates: Readonly<Record<string, TemplateVersion>>;
  /** Groups running canaries of a new template beside their stable Deployment, until promotion. */
  readonly canaries?: Readonly<Record<string, TemplateVersion>>;
  /** Short hash of the spec (see `jobFingerprint`). */
  readonly specHash: string;
}

/** A job record read back. */
export interface JobRecord {
  readonly spec: JobSpec;
  readonly state: JobRecordState;
}

/** Name of a job's record Secret. */
export function jobRecordName(jobId: string): string {
  return dnsLabel(`svc-job-${jobId}`);
}

/** Short hash of a job spec, compared to decide `unchanged`. */
export function specHash(job: JobSpec): string {
  return shortHash(jobFingerprint(job), 32);
}

/** The record Secret of `job`. */
export function jobRecordSecret(job: JobSpec, state: JobRecordState, namespace: string): V1Secret {
  return withFingerprint({
    apiVersion: 'v1',
    kind: 'Secret',
    metadata: {
      name: jobRecordName(job.id),
      namespace,
      labels: { ...jobLabels(job), [SvcLabel.role]: SvcRole.record },
      annotations: {
        [SvcAnnotation.jobId]: job.id,
        [SvcAnnotation.app]: job.app,
        [SvcAnnotation.jobVersion]: String(state.version),
      },
    },
    type: 'Opaque',
    data: {
      'job.json': Buffer.from(canonicalJson(job)).toString('base64'),
      'state.json': Buffer.from(canonicalJson(state)).toString('base64'),
    },
  });
}

/** Reads a record Secret; throws `ValidationError` when it is not one. */
export function readJobRecord(secret: V1Secret): JobRecord {
  const job = secret.data?.['job.json'];
  const state = secret.data?.['state.json'];
  if (job === undefined || state === undefined)
    throw new ValidationError(
      `secret ${secret.metadata?.name}: not a svc job record (job.json and state.json missing)`,
    );
  return {
    spec: JSON.parse(Buffer.from(job, 'base64').toString('utf8')) as JobSpec,
    state: JSON.parse(Buffer.from(state, 'base64').toString('utf8')) as JobRecordState,
  };
}
