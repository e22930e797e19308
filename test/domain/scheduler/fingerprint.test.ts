// tier: quick
import test from 'ava';
import {
  canonicalJson,
  filesFingerprint,
  jobFingerprint,
  milliseconds,
  normalizeJob,
  rollFingerprint,
  type JobSpec,
  type TaskGroupSpec,
} from '../../../domain/scheduler/index.js';

const group: TaskGroupSpec = {
  name: 'web',
  count: 1,
  task: {
    name: 'web',
    command: 'node a.js',
    env: { A: '1' },
    resources: { cpuMhz: 100, memoryMb: 128 },
    files: [{ destination: 'secrets/x', contents: 'a' }],
  },
  ports: [{ label: 'http' }],
  services: [],
  drain: { signal: 'SIGTERM', timeout: milliseconds(1000) },
};
const job: JobSpec = { id: 'demo-web', app: 'demo', type: 'service', taskGroups: [group] };

test('canonicalJson is independent of key order and drops undefined fields', (t) => {
  t.is(canonicalJson({ b: 1, a: { d: [2, { z: 1, y: undefined }], c: 3 } }), '{"a":{"c":3,"d":[2,{"z":1}]},"b":1}');
});

test('rollFingerprint ignores count, canary count and files but sees env and placement', (t) => {
  const base = rollFingerprint(job, group);
  t.is(rollFingerprint(job, { ...group, count: 5, canary: 2 }), base);
  t.is(rollFingerprint(job, { ...group, task: { ...group.task, files: [] } }), base);
  t.not(rollFingerprint(job, { ...group, task: { ...group.task, env: { A: '2' } } }), base);
  t.not(rollFingerprint({ ...job, nodePool: 'gpu' }, group), base);
});

test('filesFingerprint and jobFingerprint change with file contents', (t) => {
  const changed = { ...group, task: { ...group.task, files: [{ destination: 'secrets/x', contents: 'b' }] } };
  t.not(filesFingerprint(changed), filesFingerprint(group));
  t.not(jobFingerprint({ ...job, taskGroups: [changed] }), jobFingerprint(job));
  t.is(jobFingerprint({ ...job }), jobFingerprint(job));
});

test('normalizeJob reduces richer duration values to milliseconds so they fingerprint like plain ones', (t) => {
  const rich = { text: '1s', nanoseconds: 1_000_000_000n, milliseconds: 1000 };
  const richJob: JobSpec = { ...job, taskGroups: [{ ...group, drain: { signal: 'SIGTERM', timeout: rich } }] };
  const normalized = normalizeJob(richJob);
  t.deepEqual(normalized.taskGroups[0]!.drain.timeout, { milliseconds: 1000 });
  t.is(jobFingerprint(normalized), jobFingerprint(job));
  t.notThrows(() => JSON.stringify(normalized));
});
