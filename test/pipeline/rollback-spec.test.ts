// tier: full
/**
 * A rollback restores the whole release: the code and the spec it was deployed with (processes,
 * env, resources), not only the code (ADR 0048).
 */
import fs from 'node:fs';
import test from 'ava';
import type { ControlPlane } from '../../wiring/control-plane.js';
import type { JobSpec, TaskGroupSpec } from '../../domain/scheduler/index.js';
import { getApp } from '../../store/control/apps.js';
import { waitForChange } from '../helpers/wait-for.js';
import {
  commitApp,
  deployAndWait,
  initAppsRepo,
  pipelineConfig,
  served,
  startPlane,
  waitForApp,
} from './pipeline-fixture.js';

const V2_EXTRA = [
  '    env:',
  '      GREETING: two',
  '  worker:',
  '    command: sleep 600',
  '    resources:',
  '      memory: 64',
].join('\n');

/** The running service job of `app`, with its groups as the scheduler holds them. */
async function serviceJob(plane: ControlPlane, app: string): Promise<JobSpec> {
  const scheduler = await plane.reconcilers.targets.get('local');
  const job = (await scheduler.listJobs({ app })).find((j) => j.spec.id === app && j.status === 'running');
  if (!job) throw new Error(`no running job ${app}`);
  return job.spec;
}

/** What a rollback must bring back exactly: each group's name, count, task and registry services (canary aside: rollbacks roll directly). */
function shape(job: JobSpec): unknown {
  return job.taskGroups.map((g: TaskGroupSpec) => ({
    name: g.name,
    count: g.count,
    task: g.task,
    services: g.services.map((s) => s.name),
    ports: g.ports,
  }));
}

/** `GREETING` in the environment of each running allocation of `app`'s `process`. */
async function runningGreetings(plane: ControlPlane, app: string, process: string): Promise<string[]> {
  const scheduler = await plane.reconcilers.targets.get('local');
  const allocations = await scheduler.listAllocations({ app, taskGroup: process });
  return (
    allocations
      // A replaced allocation drains after its replacement passes (start before stop): not counted.
      .filter((a) => a.status === 'running' && a.desiredStatus === 'run' && a.task.pid !== undefined)
      .map(
        (a) =>
          fs
            .readFileSync(`/proc/${a.task.pid!}/environ`, 'utf8')
            .split('\0')
            .find((e) => e.startsWith('GREETING=')) ?? 'GREETING unset',
      )
  );
}

test('a rollback after a spec change restores v1 processes and env exactly: the extra process is gone', async (t) => {
  const config = pipelineConfig(t);
  initAppsRepo(config);
  commitApp(config.appsDir, 'spec-rb', { version: 'v1', extra: ['    env:', '      GREETING: one'].join('\n') });
  const plane = await startPlane(t, config);
  await waitForApp(plane, 'spec-rb');
  t.is((await deployAndWait(plane, 'spec-rb')).operation.status, 'succeeded');
  const v1 = await serviceJob(plane, 'spec-rb');
  t.deepEqual(
    v1.taskGroups.map((g) => g.name),
    ['web'],
  );
  t.is(v1.taskGroups[0]!.task.env.GREETING, 'one');

  const v2Commit = commitApp(config.appsDir, 'spec-rb', { version: 'v2', extra: V2_EXTRA });
  const v2Deploy = await deployAndWait(plane, 'spec-rb');
  t.is(v2Deploy.operation.status, 'succeeded', v2Deploy.operation.lastError ?? '');
  const v2 = await serviceJob(plane, 'spec-rb');
  t.deepEqual(
    v2.taskGroups.map((g) => g.name),
    ['web', 'worker'],
  );
  t.is(v2.taskGroups[0]!.task.env.GREETING, 'two');
  t.deepEqual(await runningGreetings(plane, 'spec-rb', 'web'), ['GREETING=two']);
  t.is(
    (await (await plane.reconcilers.targets.get('local')).listAllocations({ app: 'spec-rb', taskGroup: 'worker' }))
      .length,
    1,
  );

  const rollback = await deployAndWait(plane, 'spec-rb', {}, 'rollback');
  t.is(rollback.operation.status, 'succeeded', rollback.operation.lastError ?? '');
  const back = await serviceJob(plane, 'spec-rb');
  t.deepEqual(shape(back), shape(v1));
  // The replaced allocation stops after the operation succeeds: wait, on allocation and health changes
  // (a process listens a moment after its allocation reads running), until only v1 answers.
  const scheduler = await plane.reconcilers.targets.get('local');
  const answering = await waitForChange(
    [(listener) => scheduler.watch(() => listener()), (listener) => plane.reconcilers.registry.watch(() => listener())],
    async () => {
      const answers = await served(plane, 'spec-rb');
      return answers.length === 1 && answers[0] === 'v1' ? answers : undefined;
    },
    { what: 'only the v1 release answering after the rollback' },
  ).catch((error: unknown) => [String(error)]);
  t.deepEqual(answering, ['v1']);
  t.deepEqual(await runningGreetings(plane, 'spec-rb', 'web'), ['GREETING=one']);
  t.deepEqual(
    await (await plane.reconcilers.targets.get('local')).listAllocations({ app: 'spec-rb', taskGroup: 'worker' }),
    [],
  );
  // The apps folder still holds v2's spec; the restored spec runs over it until that spec changes.
  const row = getApp(plane.db, 'spec-rb')!;
  t.deepEqual(Object.keys(row.committedSpec!.processes).sort(), ['web', 'worker']);
  t.deepEqual(Object.keys(row.spec!.processes), ['web']);
  t.not(row.release!.commit, v2Commit);
  // A reconcile pass (resync) keeps it so.
  plane.reconcilers.appController.enqueue('spec-rb');
  await plane.reconcilers.whenIdle();
  t.deepEqual(shape(await serviceJob(plane, 'spec-rb')), shape(v1));

  // A new commit of the spec is newer intent than the rollback: it applies to the running release.
  commitApp(config.appsDir, 'spec-rb', { version: 'v2', extra: ['    env:', '      GREETING: three'].join('\n') });
  for (;;) {
    const job = await serviceJob(plane, 'spec-rb');
    if (job.taskGroups[0]!.task.env.GREETING === 'three') break;
    await new Promise<void>((resolve) => {
      const unsubscribe = plane.reconcilers.appController.onReconciled(
        (key) => key === 'spec-rb' && (unsubscribe(), resolve()),
      );
    });
  }
  const after = await serviceJob(plane, 'spec-rb');
  t.deepEqual(
    after.taskGroups.map((g) => g.name),
    ['web'],
  );
  t.is(after.meta?.['svc.commit'], v1.meta?.['svc.commit']);
});
