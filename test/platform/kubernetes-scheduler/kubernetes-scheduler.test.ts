// tier: quick
import test, { type ExecutionContext } from 'ava';
import { ConflictError, NotFoundError, UnavailableError, ValidationError } from '../../../domain/errors.js';
import type { AllocationChange, JobSpec } from '../../../domain/scheduler/index.js';
import { LocalRegistry } from '../../../platform/local-registry/index.js';
import { KubernetesScheduler, kubeConfigForRegion } from '../../../platform/kubernetes-scheduler/index.js';
import { tempDir } from '../../helpers/temp-dir.js';
import { FakeKubeApi } from './fake-kube-api.js';
import { fixtureJobs } from './fixture-jobs.js';

const NS = 'svc-apps';

async function setup(
  t: ExecutionContext,
  options: { watchPods?: boolean; contexts?: string[]; region?: string } = {},
): Promise<{ api: FakeKubeApi; scheduler: KubernetesScheduler; registry: LocalRegistry }> {
  const api = new FakeKubeApi(NS);
  await api.start();
  const file = api.writeKubeconfig(tempDir(t), options.contexts);
  const registry = new LocalRegistry();
  const scheduler = await KubernetesScheduler.open({
    kubeConfig: kubeConfigForRegion({ kubeconfigPath: file }, options.region ?? 'local'),
    namespace: NS,
    registry,
    watchPods: options.watchPods ?? false,
  });
  t.teardown(async () => {
    await scheduler.close();
    await api.close();
  });
  return { api, scheduler, registry };
}

function nextChange(
  scheduler: KubernetesScheduler,
  predicate: (change: AllocationChange) => boolean,
): Promise<AllocationChange> {
  return new Promise((resolve) => {
    const off = scheduler.watch((change) => {
      if (!predicate(change)) return;
      off();
      resolve(change);
    });
  });
}

function podOf(api: FakeKubeApi, deploymentName: string, name: string, status: unknown): any {
  const template = api.get('deployments', deploymentName).spec.template;
  return {
    metadata: { ...template.metadata, name, creationTimestamp: '2030-01-01T00:00:00Z' },
    spec: template.spec,
    status,
  };
}

const running = (ip: string, ready: boolean) => ({
  phase: 'Running',
  podIP: ip,
  conditions: [{ type: 'Ready', status: ready ? 'True' : 'False' }],
  containerStatuses: [{ name: 'web', restartCount: 0, state: { running: { startedAt: '2030-01-01T00:00:01Z' } } }],
});

test('submitJob applies the Deployment, Service and job record, then reports unchanged, then updated on a template change', async (t) => {
  const { api, scheduler } = await setup(t);
  const [job] = fixtureJobs('hello-web');
  const created = await scheduler.submitJob(job!);
  t.like(created, { outcome: 'created', jobVersion: 1 });
  t.deepEqual(api.writes(), [
    `PATCH /apis/apps/v1/namespaces/${NS}/deployments/hello-web-web`,
    `PATCH /api/v1/namespaces/${NS}/services/hello-web-web`,
    `PATCH /api/v1/namespaces/${NS}/secrets/svc-job-hello-web`,
  ]);
  for (const request of api.requests.filter((r) => r.method === 'PATCH')) {
    t.is(request.contentType, 'application/apply-patch+yaml');
    t.deepEqual([request.query.fieldManager, request.query.force], ['svc', 'true']);
  }
  const applied = api.requests.find((r) => r.path.endsWith('/deployments/hello-web-web') && r.method === 'PATCH')!.body;
  t.is(applied.spec.template.spec.containers[0].image, 'registry.example.test/apps/app:0123456');
  t.like(await scheduler.getJob('hello-web'), { version: 1, status: 'running', paused: false });

  api.requests.length = 0;
  t.like(await scheduler.submitJob(job!), { outcome: 'unchanged', jobVersion: 1 });
  t.deepEqual(api.writes(), [], 'an identical submission writes nothing');

  const changed: JobSpec = {
    ...job!,
    taskGroups: job!.taskGroups.map((g) => ({ ...g, task: { ...g.task, env: { ...g.task.env, GREETING: 'Hi' } } })),
  };
  const updated = await scheduler.submitJob(changed);
  t.like(updated, { outcome: 'updated', jobVersion: 2, rolled: ['web'] });
  t.deepEqual(api.writes(), [
    `PATCH /apis/apps/v1/namespaces/${NS}/deployments/hello-web-web`,
    `PATCH /api/v1/namespaces/${NS}/secrets/svc-job-hello-web`,
  ]);
  const template = api.get('deployments', 'hello-web-web').spec.template;
  t.is(template.metadata.annotations['svc.dev/job-version'], '2');
  t.true(
    template.spec.containers[0].env.some(
      (e: { name: string; value?: string }) => e.name === 'GREETING' && e.value === 'Hi',
    ),
  );
});

test('submitJob refuses a release without an image before any request', async (t) => {
  const { api, scheduler } = await setup(t);
  const [job] = fixtureJobs('hello-web');
  const native: JobSpec = {
    ...job!,
    taskGroups: job!.taskGroups.map((g) => ({ ...g, task: { ...g.task, image: undefined, workdir: '/srv/release' } })),
  };
  await t.throwsAsync(scheduler.submitJob(native), {
    instanceOf: ValidationError,
    message: /task web: the release has no container image; the kubernetes driver needs an image release/,
  });
  t.deepEqual(api.requests, []);
});

test('scale changes only the replicas; stopJob deletes the workloads and keeps a dead record; purge forgets it', async (t) => {
  const { api, scheduler } = await setup(t);
  const [job] = fixtureJobs('ledger-api');
  await scheduler.submitJob(job!);
  const before = api.get('deployments', 'ledger-api-web').spec.template;
  api.requests.length = 0;
  t.is(await scheduler.scale('ledger-api', 'web', 3), 'updated');
  t.is(api.get('deployments', 'ledger-api-web').spec.replicas, 3);
  t.deepEqual(api.get('deployments', 'ledger-api-web').spec.template, before, 'scaling does not roll pods');
  t.like(await scheduler.getJob('ledger-api'), { version: 2 });
  t.is(await scheduler.scale('ledger-api', 'web', 3), 'unchanged');
  await t.throwsAsync(scheduler.scale('ledger-api', 'nope', 1), {
    instanceOf: NotFoundError,
    message: 'job ledger-api has no task group "nope"',
  });
  await t.throwsAsync(scheduler.scale('ledger-api', 'web', -1), { instanceOf: ValidationError });

  api.requests.length = 0;
  t.is(await scheduler.stopJob('ledger-api'), 'deleted');
  t.true(api.writes().includes(`DELETE /apis/apps/v1/namespaces/${NS}/deployments/ledger-api-web`));
  t.true(api.writes().includes(`DELETE /api/v1/namespaces/${NS}/services/ledger-api-web`));
  t.is(api.get('deployments', 'ledger-api-web'), undefined);
  t.like(await scheduler.getJob('ledger-api'), { status: 'dead' });
  t.is(await scheduler.stopJob('ledger-api'), 'unchanged');
  t.is(await scheduler.stopJob('ledger-api', { purge: true }), 'deleted');
  t.is(await scheduler.getJob('ledger-api'), undefined);
  await t.throwsAsync(scheduler.stopJob('ledger-api'), { instanceOf: NotFoundError });
});

test('pods map to allocations and register readiness into the registry through the watch', async (t) => {
  const { api, scheduler, registry } = await setup(t, { watchPods: true });
  await api.waitForWatch();
  t.deepEqual(
    api.requests.find((r) => r.query.watch === 'true')?.query.labelSelector,
    'app.kubernetes.io/managed-by=svc',
  );
  const [job] = fixtureJobs('hello-web');
  await scheduler.submitJob(job!);

  const pendingSeen = nextChange(scheduler, (c) => c.allocation.id === 'hello-web-web-1');
  api.putPod(
    podOf(api, 'hello-web-web', 'hello-web-web-1', {
      phase: 'Pending',
      containerStatuses: [{ name: 'web', restartCount: 0, state: { waiting: { reason: 'ContainerCreating' } } }],
    }),
  );
  t.like((await pendingSeen).allocation, { status: 'pending', jobId: 'hello-web', taskGroup: 'web', jobVersion: 1 });

  const runningSeen = nextChange(scheduler, (c) => c.allocation.status === 'running');
  const registered = new Promise<void>((resolve) => {
    const off = registry.watch((c) => {
      if (c.instance?.checks[0]?.status === 'passing') {
        off();
        resolve();
      }
    });
  });
  api.putPod(podOf(api, 'hello-web-web', 'hello-web-web-1', running('10.1.0.7', true)));
  t.like(await runningSeen, { previousStatus: 'pending' });
  await registered;
  const [instance] = await registry.instances('hello-web-web');
  t.like(instance, {
    allocationId: 'hello-web-web-1',
    address: '10.1.0.7',
    port: 8080,
    app: 'hello-web',
    process: 'web',
  });

  const allocations = await scheduler.listAllocations({ app: 'hello-web' });
  t.deepEqual(
    allocations.map((a) => [a.id, a.status, a.ports[0]?.value]),
    [['hello-web-web-1', 'running', 8080]],
  );
  t.like(await scheduler.getAllocation('hello-web-web-1'), { status: 'running' });
  t.is(await scheduler.getAllocation('missing'), undefined);

  const oom = nextChange(scheduler, (c) => c.allocation.task.oomKilled);
  api.putPod(
    podOf(api, 'hello-web-web', 'hello-web-web-1', {
      ...running('10.1.0.7', false),
      containerStatuses: [
        {
          name: 'web',
          restartCount: 1,
          lastState: { terminated: { exitCode: 137, reason: 'OOMKilled', finishedAt: '2030-01-01T00:05:00Z' } },
          state: { running: { startedAt: '2030-01-01T00:05:01Z' } },
        },
      ],
    }),
  );
  t.like((await oom).allocation.task, { restarts: 1, oomKilled: true });

  const gone = nextChange(scheduler, (c) => c.allocation.desiredStatus === 'stop');
  api.deletePod('hello-web-web-1');
  t.like((await gone).allocation, { status: 'complete' });
  t.deepEqual(await registry.instances('hello-web-web'), []);
  t.deepEqual(await scheduler.listAllocations({ app: 'hello-web' }), []);
});

test('memoryUsage reads the metrics API and says clearly when there is none', async (t) => {
  const { api, scheduler } = await setup(t);
  const [job] = fixtureJobs('hello-web');
  await scheduler.submitJob(job!);
  api.putPod(podOf(api, 'hello-web-web', 'hello-web-web-1', running('10.1.0.7', true)));
  await t.throwsAsync(scheduler.memoryUsage('hello-web-web-1'), {
    instanceOf: UnavailableError,
    message: /memory usage of allocation hello-web-web-1 is unavailable: the metrics API/,
  });
  api.metrics.set('hello-web-web-1', '2048Ki');
  t.like(await scheduler.memoryUsage('hello-web-web-1'), {
    currentRssBytes: 2048 * 1024,
    peakRssBytes: 2048 * 1024,
    limitBytes: 64 * 1024 * 1024,
  });
  await t.throwsAsync(scheduler.memoryUsage('missing'), { instanceOf: NotFoundError });
});

test('listAllocations with usage reads CPU and memory of the pods from the metrics API (PodMetrics), one list call; without the metrics API there is no sample', async (t) => {
  const { api, scheduler } = await setup(t);
  const [job] = fixtureJobs('hello-web');
  await scheduler.submitJob(job!);
  api.putPod(podOf(api, 'hello-web-web', 'hello-web-web-1', running('10.1.0.7', true)));
  api.putPod(podOf(api, 'hello-web-web', 'hello-web-web-2', running('10.1.0.8', true)));
  const [before] = await scheduler.listAllocations({ app: 'hello-web', usage: true });
  t.is(before!.cpu, undefined, 'no metrics API: no CPU sample');
  t.is(before!.memory.sampledAt, undefined);

  api.metrics.set('hello-web-web-1', '32Mi');
  api.cpu.set('hello-web-web-1', '750m');
  api.metrics.set('hello-web-web-2', '16384Ki');
  api.cpu.set('hello-web-web-2', '125000000n');
  const calls = api.requests.length;
  const allocations = await scheduler.listAllocations({ app: 'hello-web', taskGroup: 'web', usage: true });
  const metricsCalls = api.requests.slice(calls).filter((r) => r.path.startsWith('/apis/metrics.k8s.io/'));
  t.deepEqual(
    metricsCalls.map((r) => [r.path, r.query.labelSelector?.includes('hello-web')]),
    [[`/apis/metrics.k8s.io/v1beta1/namespaces/${NS}/pods`, true]],
  );
  const byId = new Map(allocations.map((a) => [a.id, a]));
  t.is(byId.get('hello-web-web-1')!.cpu!.percent, 75);
  t.like(byId.get('hello-web-web-1')!.memory, { currentRssBytes: 32 * 1024 * 1024, limitBytes: 64 * 1024 * 1024 });
  t.truthy(byId.get('hello-web-web-1')!.memory.sampledAt);
  t.is(byId.get('hello-web-web-2')!.cpu!.percent, 12.5);
  t.is(byId.get('hello-web-web-2')!.memory.currentRssBytes, 16 * 1024 * 1024);
  // Without `usage` the list does not call the metrics API.
  const plain = api.requests.length;
  t.is((await scheduler.listAllocations({ app: 'hello-web' }))[0]!.cpu, undefined);
  t.false(api.requests.slice(plain).some((r) => r.path.startsWith('/apis/metrics.k8s.io/')));
});

test('dispatch creates a Job whose conditions give the execution status, with output from the pod log', async (t) => {
  const { api, scheduler } = await setup(t);
  const job = fixtureJobs('thumbnailer')[0]!;
  t.like(await scheduler.submitJob(job), { outcome: 'created' });
  t.deepEqual(
    api.writes(),
    [`PATCH /api/v1/namespaces/${NS}/secrets/svc-job-thumbnailer-thumbnail`],
    'a parameterized job writes only its record',
  );

  const cases = [
    {
      id: 'exec-ok',
      status: {
        conditions: [{ type: 'Complete', status: 'True' }],
        completionTime: '2030-01-01T00:00:04Z',
        startTime: '2030-01-01T00:00:00Z',
      },
      exit: 0,
      expect: 'succeeded',
    },
    {
      id: 'exec-bad',
      status: {
        conditions: [
          {
            type: 'Failed',
            status: 'True',
            reason: 'BackoffLimitExceeded',
            lastTransitionTime: '2030-01-01T00:00:02Z',
          },
        ],
        startTime: '2030-01-01T00:00:00Z',
      },
      exit: 1,
      expect: 'failed',
    },
    {
      id: 'exec-slow',
      status: {
        conditions: [
          { type: 'Failed', status: 'True', reason: 'DeadlineExceeded', lastTransitionTime: '2030-01-01T00:00:30Z' },
        ],
        startTime: '2030-01-01T00:00:00Z',
      },
      exit: 137,
      expect: 'timed_out',
    },
  ];
  for (const c of cases) {
    api.requests.length = 0;
    const started = await scheduler.dispatch(job.id, {
      payload: '{"image":"a.png"}',
      env: { SVC_REQUEST_BODY: 'b' },
      executionId: c.id,
    });
    t.like(started, { id: c.id, jobId: job.id, status: 'running' });
    const post = api.requests.find((r) => r.method === 'POST')!;
    t.is(post.path, `/apis/batch/v1/namespaces/${NS}/jobs`);
    const env = post.body.spec.template.spec.containers[0].env as { name: string; value?: string }[];
    t.deepEqual(
      env.filter((e) => e.name === 'SVC_DISPATCH_PAYLOAD' || e.name === 'SVC_REQUEST_BODY'),
      [
        { name: 'SVC_DISPATCH_PAYLOAD', value: '{"image":"a.png"}' },
        { name: 'SVC_REQUEST_BODY', value: 'b' },
      ],
    );
    t.is(post.body.spec.activeDeadlineSeconds, 30);
    const name = post.body.metadata.name as string;
    api.setJobStatus(name, c.status);
    api.putPod({
      metadata: {
        ...post.body.spec.template.metadata,
        name: `${name}-pod`,
        labels: { ...post.body.spec.template.metadata.labels, 'job-name': name },
      },
      spec: post.body.spec.template.spec,
      status: {
        phase: c.exit === 0 ? 'Succeeded' : 'Failed',
        containerStatuses: [{ name: 'thumbnail', restartCount: 0, state: { terminated: { exitCode: c.exit } } }],
      },
    });
    api.logs.set(`${name}-pod`, `output of ${c.id}\n`);
    t.like(await scheduler.getExecution(c.id), {
      id: c.id,
      status: c.expect,
      exitCode: c.exit,
      allocationId: `${name}-pod`,
      output: `output of ${c.id}\n`,
    });
  }
  t.deepEqual((await scheduler.listExecutions(job.id)).map((e) => e.status).sort(), [
    'failed',
    'succeeded',
    'timed_out',
  ]);
  t.is(await scheduler.getExecution('exec-unknown'), undefined);
  await t.throwsAsync(scheduler.dispatch(job.id, { executionId: 'exec-ok' }), { instanceOf: ConflictError });
  const service = fixtureJobs('hello-web')[0]!;
  await scheduler.submitJob(service);
  await t.throwsAsync(scheduler.dispatch(service.id), {
    instanceOf: ValidationError,
    message: 'job hello-web: only parameterized batch jobs can be dispatched',
  });
});

test('periodic jobs are CronJobs: pause and resume set suspend, force creates a Job from the CronJob template', async (t) => {
  const { api, scheduler } = await setup(t);
  const periodic = fixtureJobs('report-worker').find((j) => j.type === 'periodic')!;
  await scheduler.submitJob(periodic);
  const name = 'report-worker-nightly-nightly';
  t.false(api.get('cronjobs', name).spec.suspend);
  t.truthy((await scheduler.getJob(periodic.id))?.nextLaunchAt);

  t.is(await scheduler.pausePeriodic(periodic.id), 'updated');
  t.true(api.get('cronjobs', name).spec.suspend);
  t.like(await scheduler.getJob(periodic.id), { paused: true, nextLaunchAt: undefined });
  t.is(await scheduler.pausePeriodic(periodic.id), 'unchanged');
  t.like(await scheduler.submitJob(periodic), { outcome: 'unchanged' });
  t.true(api.get('cronjobs', name).spec.suspend, 'a resubmission keeps the pause');

  api.requests.length = 0;
  const forced = await scheduler.forcePeriodic(periodic.id);
  t.like(forced, { jobId: periodic.id, taskGroup: 'nightly', status: 'running' });
  const post = api.requests.find((r) => r.method === 'POST')!;
  t.is(post.body.metadata.annotations['cronjob.kubernetes.io/instantiate'], 'manual');
  t.deepEqual(post.body.metadata.ownerReferences, [
    { apiVersion: 'batch/v1', kind: 'CronJob', name, uid: `uid-cronjobs-${name}`, controller: true },
  ]);
  t.deepEqual(
    post.body.spec.template.spec.containers,
    api.get('cronjobs', name).spec.jobTemplate.spec.template.spec.containers,
  );
  t.like(await scheduler.getExecution(forced.id), { status: 'running' });

  t.is(await scheduler.resumePeriodic(periodic.id), 'updated');
  t.false(api.get('cronjobs', name).spec.suspend);
  await scheduler.submitJob(fixtureJobs('report-worker').find((j) => j.type === 'service')!);
  await t.throwsAsync(scheduler.pausePeriodic('report-worker'), {
    instanceOf: ValidationError,
    message: 'job report-worker is not periodic',
  });
});

test('canaries run in a -canary Deployment until promotion replaces the stable template', async (t) => {
  const { api, scheduler } = await setup(t);
  const [base] = fixtureJobs('ledger-api');
  const job: JobSpec = { ...base!, taskGroups: base!.taskGroups.map((g) => ({ ...g, count: 3, canary: 1 })) };
  await scheduler.submitJob(job);
  const stable = api.get('deployments', 'ledger-api-web').spec.template;
  const next: JobSpec = {
    ...job,
    taskGroups: job.taskGroups.map((g) => ({
      ...g,
      task: { ...g.task, image: 'registry.example.test/apps/app:next' },
    })),
  };
  t.like(await scheduler.submitJob(next), { outcome: 'updated', awaitingPromotion: ['web'], rolled: ['web'] });
  t.deepEqual(api.get('deployments', 'ledger-api-web').spec.template, stable, 'the stable Deployment is untouched');
  const canary = api.get('deployments', 'ledger-api-web-canary');
  t.is(canary.spec.replicas, 1);
  t.is(canary.spec.template.spec.containers[0].image, 'registry.example.test/apps/app:next');
  t.is(canary.spec.template.metadata.labels['svc.dev/role'], 'canary');
  t.like(await scheduler.submitJob(next), { outcome: 'unchanged', awaitingPromotion: ['web'] });

  t.is(await scheduler.promoteCanaries(job.id), 'updated');
  t.is(
    api.get('deployments', 'ledger-api-web').spec.template.spec.containers[0].image,
    'registry.example.test/apps/app:next',
  );
  t.is(api.get('deployments', 'ledger-api-web-canary'), undefined);
  t.like(await scheduler.getJob(job.id), { awaitingPromotion: [] });
  t.is(await scheduler.promoteCanaries(job.id), 'unchanged');
});

test('kubeConfigForRegion uses the context named like the region, else the current context', (t) => {
  const api = new FakeKubeApi(NS);
  api.url = 'http://127.0.0.1:1';
  const file = api.writeKubeconfig(tempDir(t), ['main', 'eu-west']);
  t.is(kubeConfigForRegion({ kubeconfigPath: file }, 'eu-west').getCurrentContext(), 'eu-west');
  t.is(kubeConfigForRegion({ kubeconfigPath: file }, 'local').getCurrentContext(), 'main');
  t.throws(() => kubeConfigForRegion({ kubeconfigPath: `${file}.missing` }, 'local'), {
    instanceOf: ValidationError,
    message: /cannot load kubeconfig/,
  });
});
