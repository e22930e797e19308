/**
 * The Job of one run (a dispatch, or a forced periodic child), instantiated from the Job template
 * translateJob made for a parameterized or periodic group.
 */
import type { V1Job, V1JobSpec, V1ObjectMeta } from '@kubernetes/client-node';
import { SvcAnnotation, SvcLabel } from './labels.js';
import { dnsLabel, shortHash } from './names.js';
import { seconds } from './translate-job.js';

/** What one run adds to a Job template. */
export interface RunArguments {
  readonly executionId: string;
  /** Extra environment of this run (payload as `SVC_DISPATCH_PAYLOAD`, request env). */
  readonly env: Readonly<Record<string, string>>;
  readonly timeoutMs?: number;
  readonly role: 'dispatch' | 'periodic';
}

/** Name of the Job of one run: the template's name (at most 54 characters) and a hash of the execution id. */
export function runJobName(templateName: string, executionId: string): string {
  return `${dnsLabel(templateName, 54)}-${shortHash(executionId)}`;
}

/** A Job of one run (a dispatch, or a forced periodic child) from a Job template. */
export function runJob(
  template: { readonly metadata?: V1ObjectMeta; readonly spec?: V1JobSpec },
  templateName: string,
  namespace: string,
  run: RunArguments,
): V1Job {
  const spec = structuredClone(template.spec!);
  const podSpec = spec.template.spec!;
  const main = podSpec.containers[0]!;
  const names = new Set(Object.keys(run.env));
  main.env = [
    ...(main.env ?? []).filter((e) => !names.has(e.name)),
    ...Object.keys(run.env)
      .sort()
      .map((name) => ({ name, value: run.env[name]! })),
  ];
  const execution = { [SvcLabel.execution]: shortHash(run.executionId) };
  spec.template.metadata = {
    ...spec.template.metadata,
    labels: { ...spec.template.metadata?.labels, ...execution, [SvcLabel.role]: run.role },
    annotations: { ...spec.template.metadata?.annotations, [SvcAnnotation.executionId]: run.executionId },
  };
  if (run.timeoutMs !== undefined) spec.activeDeadlineSeconds = seconds(run.timeoutMs);
  return {
    apiVersion: 'batch/v1',
    kind: 'Job',
    metadata: {
      name: runJobName(templateName, run.executionId),
      namespace,
      labels: { ...template.metadata?.labels, ...execution, [SvcLabel.role]: run.role },
      annotations: {
        ...template.metadata?.annotations,
        [SvcAnnotation.executionId]: run.executionId,
        ...(run.role === 'periodic' ? { 'cronjob.kubernetes.io/instantiate': 'manual' } : {}),
      },
    },
    spec,
  };
}
