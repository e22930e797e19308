/**
 * The deploy pipeline: the operation handlers of app.deploy, app.preflight and app.rollback. Each
 * runs the planned steps in the spec's order, records every step (start, end, status, message,
 * output), queues an automatic rollback when a deploy fails its health gate, and emits the deploy
 * lifecycle events.
 */
import { deliverEncryptedSecrets } from '../secrets/encrypted-secrets.js';
import { admitProduction } from './production-admission.js';
import path from 'node:path';
import fs from 'node:fs';
import { readDeployPayload } from '../../domain/operations/index.js';
import {
  MUTABLE_STEPS,
  planSteps,
  stepPlanInput,
  type PipelineKind,
  type PipelineStep,
} from '../../domain/pipeline/index.js';
import { getApp } from '../../store/control/apps.js';
import {
  deploymentSpec,
  endStep,
  getDeployment,
  listRegions,
  releasesToKeep,
  skipStep,
  startStep,
  updateDeployment,
} from '../../store/control/deployments.js';
import type { OperationContext, OperationHandler } from '../operations/operation-handlers.js';
import { appRegions } from './deploy-queue.js';
import type { RunState } from './run-state.js';
import { abandoned, deploymentOf, fail, recovered, succeed } from './deploy-outcomes.js';
import { appHealthyCondition, healthy, submit, type StepOutcome } from './rollout-steps.js';
import type { PipelineDependencies } from './pipeline-context.js';
import { StepFailure } from '../errors.js';
import {
  appSource,
  assertBuildAllowed,
  buildStep,
  cleanupStep,
  cloneStep,
  inspectSource,
  testStep,
  verifyBuildImage,
} from './source-steps.js';

/** Creates the three pipeline handlers. */
export function createPipelineHandlers(deps: PipelineDependencies): {
  deploy: OperationHandler;
  preflight: OperationHandler;
  rollback: OperationHandler;
} {
  const handler = (kind: PipelineKind): OperationHandler => ({
    run: (context) => runPipeline(deps, context, kind),
    recovered: (operation, decision) => recovered(deps, operation, decision),
    abandoned: (operation, reason) => abandoned(deps, operation, reason),
  });
  return { deploy: handler('deploy'), preflight: handler('preflight'), rollback: handler('rollback') };
}

async function runPipeline(
  deps: PipelineDependencies,
  context: OperationContext,
  kind: PipelineKind,
): Promise<Record<string, unknown>> {
  const { operation } = context;
  const db = deps.db;
  let deployment = deploymentOf(deps, operation);
  const app = getApp(db, deployment.app);
  // A deploy builds the committed spec; a rollback starts from it and returns to its target's spec below.
  const committed = app?.committedSpec ?? null;
  updateDeployment(db, deployment.id, { status: 'running', started: true, regionStatus: 'running' });
  if (!app || !committed || app.deletedAt !== null) {
    const message =
      !app || app.deletedAt !== null
        ? `app ${deployment.app} is not discovered`
        : `app ${deployment.app} has no valid spec`;
    updateDeployment(db, deployment.id, { status: 'failed', message, finished: true, regionStatus: 'failed' });
    throw new StepFailure(message);
  }
  deployment = getDeployment(db, deployment.id)!;
  let state: RunState = {
    kind,
    app: deployment.app,
    spec: committed,
    source: appSource(committed, app.file, deps.appsDir),
    workDir: path.join(deps.dataDir, 'work', deployment.id),
    deployment,
  };
  if (kind === 'rollback') {
    const targetId = readDeployPayload(operation.payload).targetDeploymentId;
    const target = targetId === undefined ? undefined : getDeployment(db, targetId);
    if (!target?.release)
      throw await fail(deps, state, null, new StepFailure('the rollback names no successful deployment to return to'));
    state.commit = target.release.commit;
    // A rollback of some regions keeps the running release (and spec) elsewhere and overrides the selected ones.
    const selected = listRegions(db, deployment.id).map((r) => r.region);
    const all = appRegions(committed);
    const current = app.release;
    if (current && selected.length < all.length) {
      const regions = { ...(current.regions ?? {}) };
      for (const region of selected) regions[region] = { commit: target.release.commit, dir: target.release.dir };
      const { spec: runningOverride, specOver } = current;
      state = { ...state, spec: app.spec ?? committed };
      state.release = {
        commit: current.commit,
        dir: current.dir,
        deploymentId: deployment.id,
        direct: true,
        regions,
        ...(runningOverride !== undefined && specOver !== undefined ? { spec: runningOverride, specOver } : {}),
      };
    } else {
      // The whole release returns: its code and the spec it was deployed with (ADR 0048).
      const restored = deploymentSpec(db, target.id);
      if (restored && app.generation !== null) {
        state = { ...state, spec: restored };
        state.release = {
          commit: target.release.commit,
          dir: target.release.dir,
          deploymentId: deployment.id,
          direct: true,
          spec: restored,
          specOver: app.generation,
        };
      } else {
        state.release = {
          commit: target.release.commit,
          dir: target.release.dir,
          deploymentId: deployment.id,
          direct: true,
        };
      }
    }
  }
  const spec = state.spec;
  const capabilities = {
    snapshots: deps.snapshot !== undefined,
    migrations: deps.migrate !== undefined,
    routing: deps.route !== undefined,
  };
  const planned = planSteps(kind, stepPlanInput(spec, capabilities));
  for (const step of planned) {
    if (!step.run) {
      skipStep(db, deployment.id, step.step, step.reason);
      continue;
    }
    context.stage(step.step, MUTABLE_STEPS.has(step.step));
    const seq = startStep(db, deployment.id, step.step);
    try {
      const outcome = await runStep(deps, context, state, step.step);
      endStep(db, deployment.id, seq, {
        status: 'succeeded',
        message: outcome.message,
        ...(outcome.output !== undefined ? { output: outcome.output } : {}),
      });
    } catch (error) {
      if (context.signal.aborted) {
        endStep(db, deployment.id, seq, {
          status: 'failed',
          message: `interrupted: ${String((context.signal.reason as Error | undefined)?.message ?? 'aborted')}`,
        });
        throw error;
      }
      const output = error instanceof StepFailure ? error.output : undefined;
      endStep(db, deployment.id, seq, {
        status: 'failed',
        message: (error as Error).message,
        ...(output !== undefined ? { output } : {}),
      });
      throw await fail(deps, state, step.step, error);
    }
  }
  return succeed(deps, state);
}

async function runStep(
  deps: PipelineDependencies,
  context: OperationContext,
  state: RunState,
  step: PipelineStep,
): Promise<StepOutcome> {
  const db = deps.db;
  switch (step) {
    case 'validate': {
      const app = getApp(db, state.app);
      const findings = (app?.findings ?? []) as {
        severity?: string;
        message?: string;
        rule?: string;
        line?: number | null;
        column?: number | null;
      }[];
      const errors = findings.filter((f) => f.severity === 'error');
      if (errors.length > 0)
        throw new StepFailure(`the spec has ${errors.length} error(s): ${errors.map((f) => f.message).join('; ')}`);
      // Warnings (fields the driver cannot honour, inert fields) are said aloud, never dropped (ADR 0196).
      const warnings = findings.filter((f) => f.severity === 'warning');
      const generation = `generation ${app?.generation?.slice(0, 12) ?? 'unknown'}`;
      if (warnings.length === 0) return { message: `spec valid (${generation})` };
      return {
        message: `spec valid (${generation}) with ${warnings.length} warning(s): ${warnings.map((f) => f.message).join('; ')}`,
        // As `svc validate` prints them: file:line:col warning rule message.
        output: warnings
          .map((f) => `${app?.file ?? ''}:${f.line ?? 0}:${f.column ?? 0} warning ${f.rule ?? ''} ${f.message ?? ''}`)
          .join('\n'),
      };
    }
    case 'clone': {
      const mirror = path.join(deps.dataDir, 'repos', `${state.app}.git`);
      const result = await cloneStep(state.source, mirror, state.deployment.ref ?? 'HEAD', state.workDir);
      state.commit = result.commit;
      updateDeployment(db, state.deployment.id, { commit: result.commit });
      if (deps.profile !== 'production') return { message: result.message };
      const admitted = await admitProduction({
        spec: state.spec,
        mirrorDir: mirror,
        commit: result.commit,
        workDir: state.workDir,
        secretsDir: path.join(deps.dataDir, 'secrets', state.app),
        ...(deps.allowedSignersFile !== undefined ? { allowedSignersFile: deps.allowedSignersFile } : {}),
        scheduler: () => deps.targets.get(),
        hostDriver: deps.targets.onHost,
      });
      return { message: `${result.message}; ${admitted}` };
    }
    case 'inspect': {
      const findings = inspectSource(state.spec, state.workDir, path.join(deps.dataDir, 'secrets', state.app));
      const text = findings.map((f) => `${f.severity} ${f.rule}: ${f.message}`).join('\n');
      const errors = findings.filter((f) => f.severity === 'error');
      if (errors.length > 0)
        throw new StepFailure(`${errors.length} inspection error(s): ${errors.map((f) => f.message).join('; ')}`, text);
      return {
        message: findings.length === 0 ? 'no findings' : `${findings.length} warning(s)`,
        ...(text ? { output: text } : {}),
      };
    }
    case 'build': {
      assertBuildAllowed(state.spec, deps.profile);
      // The production profile runs an image only when it is signed and bound to the resolved commit.
      const verified =
        deps.profile === 'production' && state.spec.build.image !== undefined && deps.verifyImage
          ? await verifyBuildImage(deps.verifyImage, state.spec.build.image, requireCommit(state))
          : '';
      const result = await buildStep(
        deps.builder,
        state.app,
        state.spec,
        state.source,
        requireCommit(state),
        state.workDir,
      );
      state.release = {
        commit: result.release.manifest.commit,
        dir: result.release.dir,
        deploymentId: state.deployment.id,
      };
      if (state.kind !== 'preflight')
        updateDeployment(db, state.deployment.id, {
          release: { commit: state.release.commit, dir: state.release.dir },
        });
      return { message: `${result.message}${verified}` };
    }
    case 'test': {
      const command = state.spec.build.test ?? '';
      const result = await testStep(
        command,
        state.workDir,
        { SVC_APP: state.app, SVC_COMMIT: requireCommit(state) },
        deps.testTimeoutMs ?? 600_000,
        context.signal,
      );
      return { message: result.message, output: result.output };
    }
    case 'snapshot': {
      if (!deps.snapshot) throw new StepFailure('snapshot is planned but the snapshots capability is not wired');
      return deps.snapshot(state.app, state.commit ?? null);
    }
    case 'migrate': {
      const folder = (state.spec as { migrations?: unknown }).migrations;
      if (!deps.migrate || typeof folder !== 'string')
        throw new StepFailure('migrate is planned but the migrations capability is not wired');
      return deps.migrate(state.app, path.join(state.workDir, folder), state.commit ?? null);
    }
    case 'submit': {
      // Committed age-encrypted secrets reach the app's secrets folder before its tasks start.
      const secrets = await deliverEncryptedSecrets({
        dataDir: deps.dataDir,
        app: state.app,
        spec: state.spec,
        workDir: state.workDir,
        commit: state.commit ?? null,
      });
      const outcome = await submit(deps, state);
      return secrets ? { ...outcome, message: `${outcome.message}; ${secrets}` } : outcome;
    }
    case 'healthy':
      return healthy(deps, context, state);
    case 'forge': {
      if (!deps.route) throw new StepFailure('forge is planned but no routing controller is wired');
      // The routing controller routes apps whose Healthy condition the app controller has written.
      await appHealthyCondition(deps, state.app, 10_000);
      const result = await deps.route(state.app);
      const hosts = result.rules.map((r) => r.hostname);
      return {
        message:
          hosts.length > 0
            ? `tunnel ingress routes ${hosts.join(', ')} (${result.file})`
            : `no hostname of the app is routed yet (${result.file})`,
      };
    }
    case 'cleanup': {
      const keep = new Set(releasesToKeep(db, state.app, 3));
      const current = getApp(db, state.app)?.release;
      if (current) keep.add(current.commit);
      if (state.commit) keep.add(state.commit);
      if (state.kind === 'preflight') {
        // A preflight changes nothing: it removes only its own temporary files.
        fs.rmSync(state.workDir, { recursive: true, force: true });
        return { message: 'removed temporary files' };
      }
      const cleaned = cleanupStep(state.workDir, path.join(deps.dataDir, 'releases', state.app), keep);
      if (cleaned.images.length === 0 || !deps.pruneImages) return { message: cleaned.message };
      const pruned = await deps.pruneImages(cleaned.images);
      return { message: `${cleaned.message}; removed ${pruned} image(s) of removed releases` };
    }
  }
}

function requireCommit(state: RunState): string {
  if (!state.commit) throw new StepFailure('no commit resolved before this step');
  return state.commit;
}
