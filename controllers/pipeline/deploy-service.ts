/**
 * The deploy service behind the API, the webhooks and deploy groups: validates a request, queues
 * a deployment (saga and operation), and reads deployments, steps and sagas back.
 */
import type { CanonicalAppSpec } from '../../domain/spec/index.js';
import { ConflictError, NotFoundError, UnprocessableError, ValidationError } from '../../domain/errors.js';
import type { Operation } from '../../domain/operations/index.js';
import { getApp } from '../../store/control/apps.js';
import { listDeployGroups } from '../../store/control/deploy-groups.js';
import {
  getDeployment,
  getDeploymentBySaga,
  lastSuccessfulRelease,
  listDeployments,
  listRegions,
  listSteps,
  type Deployment,
  type DeploymentKind,
  type DeploymentStatus,
} from '../../store/control/deployments.js';
import { getOperation, listAttempts } from '../../store/control/operations/operations.js';
import { emitDeployEvent } from './deploy-events.js';
import { appRegions, queueDeployment } from './deploy-queue.js';
import type { PipelineDependencies } from './pipeline-context.js';

/** What a queued deploy, preflight or rollback answers (202). */
export interface QueuedDeployment {
  readonly sagaId: string;
  readonly deploymentId: string;
  readonly operation: Operation;
  readonly links: { readonly operation: string; readonly saga: string; readonly steps: string };
}

const REF = /^[A-Za-z0-9._/@^~-]{1,200}$/;

/** The deploy service. */
export class DeployService {
  constructor(private readonly deps: PipelineDependencies) {}

  #spec(app: string, forDeploy: boolean): CanonicalAppSpec {
    const row = getApp(this.deps.db, app);
    if (!row || row.deletedAt !== null)
      throw new NotFoundError(`app "${app}" is not discovered`, { code: 'app_not_found' });
    const spec = row.spec;
    if (!spec)
      throw new UnprocessableError(`app "${app}" has no valid spec: fix ${row.file} first`, {
        code: 'app_spec_invalid',
      });
    if (forDeploy && !spec.deploy)
      throw new UnprocessableError(`app "${app}" has deploy: false in its spec`, { code: 'deploy_disabled' });
    return spec;
  }

  #answer(queued: { operation: Operation; deployment: Deployment }): QueuedDeployment {
    this.deps.wake();
    const { deployment, operation } = queued;
    return {
      sagaId: deployment.sagaId,
      deploymentId: deployment.id,
      operation,
      links: {
        operation: `/api/v1/operations/${operation.id}`,
        saga: `/api/saga/${deployment.sagaId}`,
        steps: `/api/v1/deployments/${deployment.id}/steps`,
      },
    };
  }

  #ref(ref: string | undefined): string {
    const value = ref ?? 'HEAD';
    if (!REF.test(value) || value.startsWith('-'))
      throw new ValidationError(`ref: "${value}" is not a git ref`, { code: 'invalid_ref' });
    return value;
  }

  /**
   * Refuses a deploy while the committed spec has errors: the app row keeps the last valid spec, and
   * a deploy would run the new code under it. A rollback is not refused: it restores a whole release.
   */
  #refuseSpecErrors(app: string): void {
    const row = getApp(this.deps.db, app);
    const errors = (row?.findings ?? []).filter((f) => f.severity === 'error');
    if (!row || errors.length === 0) return;
    const located = errors.map((f) => `${row.file}:${f.line ?? 0}:${f.column ?? 0} error ${f.rule} ${f.message}`);
    throw new UnprocessableError(
      `app "${app}" is not deployed: ${row.file} has ${errors.length} error(s): ${errors.map((f) => f.message).join('; ')}`,
      { code: 'app_spec_invalid', details: { findings: located } },
    );
  }

  /** Queues a deploy of `app` at `ref` (HEAD by default). */
  deploy(app: string, options: { ref?: string; trigger?: string; dependsOn?: string | null } = {}): QueuedDeployment {
    const spec = this.#spec(app, true);
    this.#refuseSpecErrors(app);
    return this.#answer(
      queueDeployment(this.deps.db, {
        app,
        kind: 'deploy',
        ref: this.#ref(options.ref),
        trigger: options.trigger ?? 'api',
        regions: appRegions(spec),
        dependsOn: options.dependsOn ?? null,
      }),
    );
  }

  /** Queues a read-only preflight of `app` at `ref`. */
  preflight(app: string, options: { ref?: string } = {}): QueuedDeployment {
    const spec = this.#spec(app, false);
    return this.#answer(
      queueDeployment(this.deps.db, {
        app,
        kind: 'preflight',
        ref: this.#ref(options.ref),
        trigger: 'api',
        regions: appRegions(spec),
      }),
    );
  }

  /**
   * Queues a rollback to the most recent successful deployment whose release differs from the one
   * running (the running one when the last deploy failed and stayed), in the selected regions.
   */
  rollback(app: string, options: { regions?: readonly string[]; trigger?: string } = {}): QueuedDeployment {
    const spec = this.#spec(app, true);
    const all = appRegions(spec);
    const regions = options.regions ?? all;
    const unknown = regions.filter((r) => !all.includes(r));
    if (regions.length === 0 || unknown.length > 0) {
      throw new ValidationError(
        `regions: ${unknown.length > 0 ? `${unknown.join(', ')} not among the app's regions (${all.join(', ')})` : 'must name at least one region'}`,
        { code: 'invalid_regions', details: { regions: all } },
      );
    }
    const current = getApp(this.deps.db, app)?.release;
    const target =
      listDeployments(this.deps.db, { app, status: 'succeeded', limit: 200 }).find(
        (d) => (d.kind === 'deploy' || d.kind === 'rollback') && d.release && d.release.commit !== current?.commit,
      ) ?? (current ? undefined : lastSuccessfulRelease(this.deps.db, app));
    if (!target)
      throw new ConflictError(`app "${app}" has no earlier successful deployment to roll back to`, {
        code: 'no_rollback_target',
      });
    return this.#answer(
      queueDeployment(this.deps.db, {
        app,
        kind: 'rollback',
        ref: target.commit,
        trigger: options.trigger ?? 'api',
        regions,
        target,
      }),
    );
  }

  /** Promotes the canaries of every job of `app` that awaits promotion now; emits canary.promoted. */
  async promoteCanaries(app: string): Promise<{ promoted: string[] }> {
    this.#spec(app, true);
    const promoted: string[] = [];
    for (const { scheduler } of await this.deps.targets.all()) {
      for (const job of await scheduler.listJobs({ app })) {
        if (job.status !== 'running' || job.awaitingPromotion.length === 0) continue;
        await scheduler.promoteCanaries(job.spec.id);
        promoted.push(job.spec.id);
      }
    }
    if (promoted.length === 0)
      throw new ConflictError(`app "${app}" has no canaries awaiting promotion`, { code: 'no_canaries_awaiting' });
    const running = listDeployments(this.deps.db, { app, kind: 'deploy', status: 'running', limit: 1 })[0];
    const subject = running ?? {
      id: 'none',
      sagaId: 'none',
      app,
      commit: getApp(this.deps.db, app)?.release?.commit ?? null,
    };
    await emitDeployEvent(this.deps.events, this.deps.logger, 'canary.promoted', subject, {
      title: `${app}: canaries promoted by an operator`,
      body: `promoted ${promoted.join(', ')}`,
      extra: { jobs: promoted },
    });
    return { promoted };
  }

  /**
   * Deploys every app of a deploy group, each with its own saga and operation; an app after one
   * with waitReady starts only once that app's deploy succeeded (healthy).
   */
  deployGroup(name: string, options: { ref?: string } = {}): { group: string; deployments: QueuedDeployment[] } {
    const group = listDeployGroups(this.deps.db).find((g) => g.name === name);
    if (!group) throw new NotFoundError(`deploy group "${name}" is not discovered`, { code: 'deploy_group_not_found' });
    const body = group.group as { apps?: { app: string; waitReady?: boolean }[] } | null;
    if (!body?.apps)
      throw new UnprocessableError(`deploy group "${name}" is not valid: fix ${group.file} first`, {
        code: 'deploy_group_invalid',
        details: { findings: group.findings },
      });
    for (const entry of body.apps) {
      this.#spec(entry.app, true);
      this.#refuseSpecErrors(entry.app);
    }
    const ref = this.#ref(options.ref);
    const queued = this.deps.db.transaction(() => {
      const out: { operation: Operation; deployment: Deployment }[] = [];
      let gate: string | null = null;
      for (const entry of body.apps!) {
        const spec = this.#spec(entry.app, true);
        const one = queueDeployment(this.deps.db, {
          app: entry.app,
          kind: 'deploy',
          ref,
          trigger: `deploy-group:${name}`,
          regions: appRegions(spec),
          dependsOn: gate,
        });
        out.push(one);
        if (entry.waitReady) gate = one.operation.id;
      }
      return out;
    })();
    return { group: name, deployments: queued.map((q) => this.#answer(q)) };
  }

  /** Deployments, newest first. */
  list(filter: {
    app?: string;
    kind?: DeploymentKind;
    status?: DeploymentStatus;
    limit?: number;
    offset?: number;
  }): Deployment[] {
    return listDeployments(this.deps.db, filter);
  }

  /** The steps of a deployment. */
  steps(id: string): {
    deployment: Deployment;
    steps: ReturnType<typeof listSteps>;
    regions: ReturnType<typeof listRegions>;
  } {
    const deployment = getDeployment(this.deps.db, id);
    if (!deployment) throw new NotFoundError(`deployment "${id}" does not exist`, { code: 'deployment_not_found' });
    return { deployment, steps: listSteps(this.deps.db, id), regions: listRegions(this.deps.db, id) };
  }

  /** The detailed timeline of a saga: deployment, operation with attempts, steps and regions. */
  saga(sagaId: string): Record<string, unknown> {
    const deployment = getDeploymentBySaga(this.deps.db, sagaId);
    if (!deployment) throw new NotFoundError(`saga "${sagaId}" does not exist`, { code: 'saga_not_found' });
    const operation = deployment.operationId ? getOperation(this.deps.db, deployment.operationId) : undefined;
    const steps = listSteps(this.deps.db, deployment.id);
    const timeline = [
      { at: deployment.createdAt, what: 'queued', detail: deployment.trigger },
      ...(operation
        ? listAttempts(this.deps.db, operation.id).flatMap((a) => [
            { at: a.startedAt, what: `attempt ${a.attempt} claimed`, detail: a.owner },
            ...(a.endedAt
              ? [{ at: a.endedAt, what: `attempt ${a.attempt} ${a.outcome ?? 'ended'}`, detail: null }]
              : []),
          ])
        : []),
      ...steps.flatMap((s) => [
        { at: s.startedAt, what: `${s.step} started`, detail: null },
        ...(s.endedAt ? [{ at: s.endedAt, what: `${s.step} ${s.status}`, detail: s.message }] : []),
      ]),
      ...(deployment.finishedAt
        ? [{ at: deployment.finishedAt, what: deployment.status, detail: deployment.message }]
        : []),
    ].sort((a, b) => a.at.localeCompare(b.at));
    return {
      sagaId,
      deployment,
      operation: operation ?? null,
      steps,
      regions: listRegions(this.deps.db, deployment.id),
      timeline,
    };
  }
}
