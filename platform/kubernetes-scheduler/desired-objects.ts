/**
 * The objects a job's record state asks for in the namespace, and their apply: what differs by
 * fingerprint is written (server-side apply), and the job's workloads no longer asked for are deleted.
 */
import type { JobSpec } from '../../domain/scheduler/index.js';
import {
  SvcAnnotation,
  SvcLabel,
  SvcRole,
  fingerprintOf,
  groupDeployment,
  jobLabels,
  selector,
  translateJob,
  type JobRecordState,
  type KubernetesTarget,
} from '../../domain/scheduler/kubernetes/index.js';
import type { KubeClient, Kind } from './kube-client.js';
import { canariesOf, versionsOf } from './job-record-view.js';

/** The kinds of object a job's record asks for. */
type WorkloadKind = Exclude<Kind, 'Pod' | 'Job'>;
/** One object a job's record asks for. */
export type Desired = {
  kind: WorkloadKind;
  object: { metadata?: { name?: string; annotations?: Record<string, string> } };
};

/** What an apply wrote and deleted (`Kind/name`). */
export interface Applied {
  readonly written: readonly string[];
  readonly deleted: readonly string[];
}

/** The objects a job's record state asks for; groups with canaries leave their stable Deployment alone. */
export function desiredObjects(job: JobSpec, state: JobRecordState, target: KubernetesTarget): Desired[] {
  const objects = translateJob(job, {
    namespace: target.namespace,
    region: target.region,
    templateVersions: versionsOf(state),
    paused: state.paused,
  });
  const canaries = canariesOf(state);
  const out: Desired[] = [];
  for (const deployment of objects.deployments) {
    const group = deployment.metadata?.annotations?.[SvcAnnotation.group] ?? '';
    const canary = canaries[group];
    const spec = job.taskGroups.find((g) => g.name === group)!;
    if (canary) {
      const replicas = Math.min(spec.canary ?? 0, spec.count);
      out.push({
        kind: 'Deployment',
        object: groupDeployment(
          job,
          spec,
          { namespace: target.namespace, region: target.region, templateVersions: { [group]: canary.version } },
          'canary',
          replicas,
        ),
      });
    } else {
      out.push({ kind: 'Deployment', object: deployment });
    }
  }
  out.push(...objects.services.map((object) => ({ kind: 'Service' as const, object })));
  out.push(...objects.secrets.map((object) => ({ kind: 'Secret' as const, object })));
  out.push(...objects.cronJobs.map((object) => ({ kind: 'CronJob' as const, object })));
  return out;
}

/** Applies what differs by fingerprint, deletes the job's workloads that are not desired; `keep` names objects left alone. */
export async function applyDesired(
  client: KubeClient,
  job: JobSpec,
  desired: readonly Desired[],
  keep: ReadonlySet<string>,
): Promise<Applied> {
  const written: string[] = [];
  const deleted: string[] = [];
  for (const { kind, object } of desired) {
    const name = object.metadata?.name ?? '';
    const existing = await client.read(kind, name);
    if (existing && fingerprintOf(existing) === fingerprintOf(object)) continue;
    await client.apply(kind, object);
    written.push(`${kind}/${name}`);
  }
  const wanted = new Set([...desired.map((d) => `${d.kind}/${d.object.metadata?.name}`), ...keep]);
  const labels = selector(jobLabels(job));
  for (const kind of ['Deployment', 'Service', 'CronJob', 'Secret'] as const) {
    const selectorText = kind === 'Secret' ? `${labels},${SvcLabel.role}=${SvcRole.files}` : labels;
    for (const object of await client.list(kind, selectorText)) {
      const name = object.metadata?.name ?? '';
      if (object.metadata?.annotations?.[SvcAnnotation.jobId] !== job.id || wanted.has(`${kind}/${name}`)) continue;
      if (await client.remove(kind, name)) deleted.push(`${kind}/${name}`);
    }
  }
  return { written, deleted };
}
