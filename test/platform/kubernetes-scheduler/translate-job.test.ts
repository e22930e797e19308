// tier: quick
import fs from 'node:fs';
import path from 'node:path';
import test from 'ava';
import { ValidationError } from '../../../domain/errors.js';
import type { JobSpec } from '../../../domain/scheduler/index.js';
import {
  containerPorts,
  cronJobName,
  dns1035Label,
  dnsLabel,
  groupObjectName,
  jobRecordSecret,
  jobToExecution,
  labelValue,
  podToAllocation,
  portName,
  readJobRecord,
  runJob,
  taskSecurityContext,
  translateJob,
} from '../../../domain/scheduler/kubernetes/index.js';
import { sampleApps } from '../../domain/spec/spec-fixtures.js';
import { fixtureJobs } from './fixture-jobs.js';
import { sourceDir } from '../../helpers/repo.js';

const options = { namespace: 'svc-apps', region: 'local', templateVersions: {} };
const update = process.env.UPDATE_GOLDEN === '1';
const goldenDir = path.join(sourceDir(import.meta.dirname), 'golden');

for (const app of sampleApps) {
  test(`translateJob output for fixture app ${app} matches golden/${app}.json`, (t) => {
    const objects = fixtureJobs(app).map((job) => ({ job: job.id, ...translateJob(job, options) }));
    const actual = `${JSON.stringify(objects, null, 2)}\n`;
    const golden = path.join(goldenDir, `${app}.json`);
    if (update) fs.writeFileSync(golden, actual);
    t.is(actual, fs.readFileSync(golden, 'utf8'));
  });
}

test('translateJob maps a service group onto a Deployment and a Service with resources, probes and drain', (t) => {
  const [job] = fixtureJobs('hello-web');
  const { deployments, services, cronJobs, jobTemplates } = translateJob(job!, options);
  t.is(deployments.length, 1);
  t.is(cronJobs.length + jobTemplates.length, 0);
  const deployment = deployments[0]!;
  t.is(deployment.metadata?.name, 'hello-web-web');
  t.is(deployment.spec?.replicas, 1);
  const container = deployment.spec!.template.spec!.containers[0]!;
  t.is(container.image, 'registry.example.test/apps/app:0123456');
  // 1000 MHz is one core: 100 MHz is 100 millicores; memory is requested and limited.
  t.deepEqual(container.resources, { requests: { cpu: '100m', memory: '64Mi' }, limits: { memory: '64Mi' } });
  t.deepEqual(container.readinessProbe, {
    httpGet: { path: '/healthz', port: 'http' },
    periodSeconds: 5,
    timeoutSeconds: 2,
    failureThreshold: 1,
  });
  t.is(container.livenessProbe?.failureThreshold, 3);
  t.is(deployment.spec!.template.spec!.terminationGracePeriodSeconds, 10);
  t.deepEqual(container.ports, [{ name: 'http', containerPort: 8080, protocol: 'TCP' }]);
  t.is(deployment.spec!.template.metadata!.labels!['svc.dev/app'], 'hello-web');
  t.regex(deployment.spec!.template.metadata!.labels!['svc.dev/version']!, /^[0-9a-f]{16}$/);
  t.is(services[0]?.metadata?.name, 'hello-web-web');
  t.deepEqual(services[0]?.spec?.ports, [{ name: 'http', port: 8080, targetPort: 'http', protocol: 'TCP' }]);
});

test('translateJob maps a periodic job onto a CronJob with time zone, forbidden overlap and suspend', (t) => {
  const periodic = fixtureJobs('report-worker').find((j) => j.type === 'periodic')!;
  const cron = translateJob(periodic, { ...options, paused: true }).cronJobs[0]!;
  t.is(cron.spec?.schedule, '0 2 * * *');
  t.is(cron.spec?.timeZone, 'Etc/UTC');
  t.is(cron.spec?.concurrencyPolicy, 'Forbid');
  t.true(cron.spec?.suspend);
  t.is(cron.spec?.jobTemplate.spec?.template.spec?.restartPolicy, 'Never');
  t.true(cron.metadata!.name!.length <= 52);
  const zoned = translateJob({ ...periodic, periodic: { ...periodic.periodic!, timeZone: 'Europe/Paris' } }, options)
    .cronJobs[0]!;
  t.is(zoned.spec?.timeZone, 'Europe/Paris');
});

test('runJob instantiates a parameterized template with the payload, env and timeout of one dispatch', (t) => {
  const job = fixtureJobs('thumbnailer')[0]!;
  const template = translateJob(job, options).jobTemplates[0]!;
  t.is(template.spec?.activeDeadlineSeconds, 30);
  const run = runJob(template, template.metadata!.name!, 'svc-apps', {
    executionId: 'exec-1',
    env: { SVC_DISPATCH_PAYLOAD: '{"x":1}' },
    timeoutMs: 5000,
    role: 'dispatch',
  });
  t.regex(run.metadata!.name!, /^thumbnailer-thumbnail-thumbnail-[0-9a-f]{8}$/);
  t.is(run.spec?.activeDeadlineSeconds, 5);
  t.is(run.spec?.backoffLimit, 0);
  t.is(run.metadata?.annotations?.['svc.dev/execution-id'], 'exec-1');
  t.deepEqual(
    run.spec!.template.spec!.containers[0]!.env!.find((e) => e.name === 'SVC_DISPATCH_PAYLOAD'),
    { name: 'SVC_DISPATCH_PAYLOAD', value: '{"x":1}' },
  );
  t.is(
    template.spec!.template.spec!.containers[0]!.env!.find((e) => e.name === 'SVC_DISPATCH_PAYLOAD'),
    undefined,
    'the template is not changed',
  );
});

test('names are DNS-1123 labels of at most 63 characters, hash-suffixed when changed or truncated', (t) => {
  t.is(dnsLabel('hello-web'), 'hello-web');
  t.regex(dnsLabel('Hello_Web@eu-west'), /^hello-web-eu-west-[0-9a-f]{8}$/);
  t.not(dnsLabel('a@b'), dnsLabel('a-b'));
  const long = 'a'.repeat(80);
  const name = dnsLabel(long);
  t.is(name.length, 63);
  t.regex(name, /^a{54}-[0-9a-f]{8}$/);
  t.not(dnsLabel(`${long}x`), name);
  t.true(groupObjectName('x'.repeat(70), 'web').length <= 56);
  t.true(cronJobName('x'.repeat(70), 'nightly').length <= 52);
  t.regex(dns1035Label('1password-web'), /^[a-z]/);
  t.is(labelValue('hello-web@eu'), labelValue('hello-web@eu'));
  t.regex(labelValue('hello-web@eu'), /^hello-web-eu-[0-9a-f]{8}$/);
  t.is(portName('http'), 'http');
  t.true(portName('administration-port').length <= 15);
  t.regex(portName('9090'), /^p-[0-9a-f]{4}$/);
});

test('containerPorts keeps static ports and numbers the others from 8080 around them', (t) => {
  const [job] = fixtureJobs('hello-web');
  const group = { ...job!.taskGroups[0]!, ports: [{ label: 'a' }, { label: 'b', static: 8081 }, { label: 'c' }] };
  t.deepEqual(containerPorts(group), [
    { label: 'a', value: 8080 },
    { label: 'b', value: 8081 },
    { label: 'c', value: 8082 },
  ]);
});

test('taskSecurityContext never lets a task run as root: a numeric USER becomes runAsUser, none or root runs as 65532, a name is left to the image', (t) => {
  const restricted = {
    allowPrivilegeEscalation: false,
    capabilities: { drop: ['ALL'] },
    seccompProfile: { type: 'RuntimeDefault' },
  };
  t.deepEqual(taskSecurityContext('1000:2000'), {
    ...restricted,
    runAsNonRoot: true,
    runAsUser: 1000,
    runAsGroup: 2000,
  });
  t.deepEqual(taskSecurityContext('1000'), { ...restricted, runAsNonRoot: true, runAsUser: 1000, runAsGroup: 1000 });
  t.deepEqual(
    taskSecurityContext('1000:0'),
    { ...restricted, runAsNonRoot: true, runAsUser: 1000, runAsGroup: 1000 },
    'never the root group',
  );
  for (const user of [undefined, '', 'root', '0', '0:0'])
    t.deepEqual(
      taskSecurityContext(user),
      { ...restricted, runAsNonRoot: true, runAsUser: 65532, runAsGroup: 65532 },
      String(user),
    );
  t.deepEqual(taskSecurityContext('node'), restricted);
  const [job] = fixtureJobs('hello-web');
  const withUser = { ...job!, taskGroups: job!.taskGroups.map((g) => ({ ...g, task: { ...g.task, user: '4242' } })) };
  t.is(
    translateJob(withUser, options).deployments[0]!.spec!.template.spec!.containers[0]!.securityContext?.runAsUser,
    4242,
  );
});

test('translateJob refuses a task without an image, naming the task and the need for an image release', (t) => {
  const [job] = fixtureJobs('hello-web');
  const native: JobSpec = {
    ...job!,
    taskGroups: job!.taskGroups.map((g) => ({ ...g, task: { ...g.task, image: undefined, workdir: '/srv/release' } })),
  };
  t.throws(() => translateJob(native, options), {
    instanceOf: ValidationError,
    message:
      /taskGroups\.web\.task web: the release has no container image; the kubernetes driver needs an image release/,
  });
});

test('translateJob refuses host volumes and seconds in cron expressions', (t) => {
  const [job] = fixtureJobs('hello-web');
  const withVolume: JobSpec = {
    ...job!,
    taskGroups: job!.taskGroups.map((g) => ({
      ...g,
      task: { ...g.task, volumes: [{ volume: 'data', destination: '/data', readOnly: false }] },
    })),
  };
  t.throws(() => translateJob(withVolume, options), {
    instanceOf: ValidationError,
    message: /host volumes are not supported by the kubernetes driver/,
  });
  const periodic = fixtureJobs('report-worker').find((j) => j.type === 'periodic')!;
  t.throws(() => translateJob({ ...periodic, periodic: { cron: '*/10 * * * * *' } }, options), {
    instanceOf: ValidationError,
    message: /must have 5 fields/,
  });
});

test('job records round-trip the spec and state through a Secret', (t) => {
  const [job] = fixtureJobs('hello-web');
  const state = {
    version: 3,
    status: 'running' as const,
    submittedAt: '2030-01-01T00:00:00.000Z',
    paused: false,
    awaitingPromotion: [],
    templates: { web: { hash: 'abc', version: 2 } },
    specHash: 'x',
  };
  const secret = jobRecordSecret(job!, state, 'svc-apps');
  t.is(secret.metadata?.name, 'svc-job-hello-web');
  t.deepEqual(readJobRecord(secret), { spec: job!, state });
});

const basePod = {
  metadata: {
    name: 'hello-web-web-abc',
    creationTimestamp: '2030-01-01T00:00:00Z',
    labels: { 'svc.dev/role': 'stable' },
    annotations: {
      'svc.dev/job-id': 'hello-web',
      'svc.dev/app-name': 'hello-web',
      'svc.dev/group-name': 'web',
      'svc.dev/job-version': '2',
      'svc.dev/memory-mb': '64',
      'svc.dev/task': 'web',
      'svc.dev/ports': '[{"label":"http","value":8080}]',
    },
  },
  spec: { containers: [{ name: 'web' }] },
};
const placement = { region: 'local', datacenter: 'fake' };

const podCases = [
  {
    title: 'a running container is a running allocation',
    status: {
      phase: 'Running',
      podIP: '10.1.0.5',
      containerStatuses: [{ name: 'web', restartCount: 0, state: { running: { startedAt: '2030-01-01T00:00:05Z' } } }],
    },
    expect: { status: 'running', state: 'running', oomKilled: false, restarts: 0 },
  },
  {
    title: 'a pod waiting for its image is pending',
    status: {
      phase: 'Pending',
      containerStatuses: [{ name: 'web', restartCount: 0, state: { waiting: { reason: 'ContainerCreating' } } }],
    },
    expect: { status: 'pending', state: 'pending', oomKilled: false, restarts: 0 },
  },
  {
    title: 'a failed pod is a failed allocation',
    status: {
      phase: 'Failed',
      containerStatuses: [
        { name: 'web', restartCount: 0, state: { terminated: { exitCode: 3, finishedAt: '2030-01-01T00:01:00Z' } } },
      ],
    },
    expect: { status: 'failed', state: 'dead', oomKilled: false, restarts: 0 },
  },
  {
    title: 'a container restarted after an OOM kill reports the OOM kill',
    status: {
      phase: 'Running',
      podIP: '10.1.0.5',
      containerStatuses: [
        {
          name: 'web',
          restartCount: 2,
          lastState: { terminated: { exitCode: 137, reason: 'OOMKilled', finishedAt: '2030-01-01T00:02:00Z' } },
          state: { running: { startedAt: '2030-01-01T00:02:01Z' } },
        },
      ],
    },
    expect: { status: 'running', state: 'running', oomKilled: true, restarts: 2 },
  },
  {
    title: 'a container in crash-loop backoff after an OOM kill is pending and OOM killed',
    status: {
      phase: 'Running',
      containerStatuses: [
        {
          name: 'web',
          restartCount: 1,
          lastState: { terminated: { exitCode: 137, reason: 'OOMKilled', finishedAt: '2030-01-01T00:02:00Z' } },
          state: { waiting: { reason: 'CrashLoopBackOff' } },
        },
      ],
    },
    expect: { status: 'pending', state: 'pending', oomKilled: true, restarts: 1 },
  },
  {
    title: 'a node that stopped reporting makes the allocation lost',
    status: { phase: 'Unknown' },
    expect: { status: 'lost', state: 'pending', oomKilled: false, restarts: 0 },
  },
];
for (const c of podCases) {
  test(`podToAllocation: ${c.title}`, (t) => {
    const allocation = podToAllocation({ ...basePod, status: c.status } as any, placement);
    t.like(allocation, {
      id: 'hello-web-web-abc',
      jobId: 'hello-web',
      app: 'hello-web',
      taskGroup: 'web',
      jobVersion: 2,
      kind: 'group',
      status: c.expect.status,
      desiredStatus: 'run',
    });
    t.like(allocation.task, { state: c.expect.state, oomKilled: c.expect.oomKilled, restarts: c.expect.restarts });
    t.is(allocation.memory.limitBytes, 64 * 1024 * 1024);
    if (c.expect.oomKilled) {
      t.is(
        allocation.task.events.find((e) => e.type === 'OOM Killed')?.message,
        'OOM Killed: memory exceeded the limit of 64 MB',
      );
      t.is(allocation.task.lastRestartAt, '2030-01-01T00:02:00.000Z');
    }
  });
}

const jobCases = [
  {
    title: 'a Job without conditions is running',
    status: { startTime: '2030-01-01T00:00:00Z', active: 1 },
    expect: 'running',
  },
  {
    title: 'a Complete Job succeeded',
    status: {
      startTime: '2030-01-01T00:00:00Z',
      completionTime: '2030-01-01T00:00:04Z',
      conditions: [{ type: 'Complete', status: 'True' }],
    },
    expect: 'succeeded',
  },
  {
    title: 'a Failed Job failed',
    status: {
      startTime: '2030-01-01T00:00:00Z',
      conditions: [
        { type: 'Failed', status: 'True', reason: 'BackoffLimitExceeded', lastTransitionTime: '2030-01-01T00:00:02Z' },
      ],
    },
    expect: 'failed',
  },
  {
    title: 'a Job past its deadline timed out',
    status: {
      startTime: '2030-01-01T00:00:00Z',
      conditions: [
        { type: 'Failed', status: 'True', reason: 'DeadlineExceeded', lastTransitionTime: '2030-01-01T00:00:30Z' },
      ],
    },
    expect: 'timed_out',
  },
];
for (const c of jobCases) {
  test(`jobToExecution: ${c.title}`, (t) => {
    const execution = jobToExecution(
      {
        metadata: {
          name: 'run-1',
          annotations: {
            'svc.dev/execution-id': 'exec-1',
            'svc.dev/job-id': 'thumbnailer-thumbnail',
            'svc.dev/group-name': 'thumbnail',
          },
        },
        status: c.status,
      } as any,
      undefined,
      '',
    );
    t.like(execution, { id: 'exec-1', jobId: 'thumbnailer-thumbnail', taskGroup: 'thumbnail', status: c.expect });
    t.is(execution.finishedAt === undefined, c.expect === 'running');
  });
}

test('translateJob turns the job node pool (placement.nodePool) into the pods node selector', (t) => {
  const [job] = fixtureJobs('hello-web');
  const pooled = translateJob({ ...job!, nodePool: 'batch' }, options);
  t.deepEqual(pooled.deployments[0]!.spec!.template.spec!.nodeSelector, { 'svc.dev/node-pool': 'batch' });
  // Without a node pool, pods may run on any node.
  t.is(translateJob(job!, options).deployments[0]!.spec!.template.spec!.nodeSelector, undefined);
});
