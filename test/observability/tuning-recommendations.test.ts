// tier: quick
import test from 'ava';
import {
  memoryTargetMb,
  quantile,
  recommendTuning,
  SignalHistory,
  type SizingObservation,
  type TuningAction,
} from '../../domain/observability/index.js';
import { validateInfraspec, type CanonicalProcess } from '../../domain/spec/index.js';

function processOf(tuning: string, memory = 256, extra = ''): CanonicalProcess {
  const result = validateInfraspec(`name: app
processes:
  web:
    port: 8080
    resources: { cpu: 200, memory: ${memory} }
    scaling: { min: 2 }
${extra}${tuning === '' ? '' : `    tuning:\n${tuning.replace(/^/gm, '      ')}\n`}`);
  if (!result.spec) throw new Error(result.findings.map((f) => f.message).join('; '));
  return result.spec.processes.web!;
}

function observed(status: SizingObservation['status'], peakMemoryMb: number, memoryLimitMb = 256): SizingObservation {
  return {
    app: 'app',
    process: 'web',
    region: 'local',
    allocations: 2,
    peakMemoryMb,
    memoryLimitMb,
    usagePercent: Math.round((peakMemoryMb / memoryLimitMb) * 1000) / 10,
    status,
  };
}

test('memoryTargetMb follows the suggestions: peak under 70% when raised, about 60% when lowered, at least 16 MB', (t) => {
  t.is(memoryTargetMb(observed('at_risk', 230)), 329);
  t.is(memoryTargetMb(observed('overprovisioned', 30)), 50);
  t.is(memoryTargetMb(observed('overprovisioned', 3)), 16);
  t.is(memoryTargetMb(observed('right_sized', 150)), 256);
});

const cases: {
  title: string;
  observation: SizingObservation;
  tuning: string;
  memory: number;
  cpu: number;
  scale: number;
  profile: string | null;
  action: TuningAction;
  notes: RegExp[];
}[] = [
  {
    title: 'an at-risk process without policy is raised to keep its peak under 70%',
    observation: observed('at_risk', 230),
    tuning: '',
    memory: 329,
    cpu: 200,
    scale: 2,
    profile: null,
    action: 'raise_memory',
    notes: [/cpu and scale have no live signal/],
  },
  {
    title: 'an overprovisioned process without policy is lowered',
    observation: observed('overprovisioned', 30),
    tuning: '',
    memory: 50,
    cpu: 200,
    scale: 2,
    profile: null,
    action: 'lower_memory',
    notes: [],
  },
  {
    title: 'a right-sized process is kept',
    observation: observed('right_sized', 150),
    tuning: 'mode: advisory',
    memory: 256,
    cpu: 200,
    scale: 2,
    profile: null,
    action: 'keep',
    notes: [],
  },
  {
    title: 'limits.max.memory caps a raise and says the process stays at risk',
    observation: observed('at_risk', 230),
    tuning: 'limits: { max: { memory: 300 } }',
    memory: 300,
    cpu: 200,
    scale: 2,
    profile: null,
    action: 'raise_memory',
    notes: [/limits\.max\.memory \(300 MB\) caps the 329 MB .* stays at risk/],
  },
  {
    title: 'limits.min.memory keeps a lowered limit up',
    observation: observed('overprovisioned', 30),
    tuning: 'limits: { min: { memory: 128 } }',
    memory: 128,
    cpu: 200,
    scale: 2,
    profile: null,
    action: 'lower_memory',
    notes: [/limits\.min\.memory \(128 MB\) keeps the limit above the 50 MB/],
  },
  {
    title: 'the smallest profile that holds the target is recommended with its cpu and scale',
    observation: observed('at_risk', 230),
    tuning:
      'profiles:\n  small: { cpu: 100, memory: 128, scale: 1 }\n  medium: { cpu: 300, memory: 512, scale: 2 }\n  large: { cpu: 600, memory: 1024, scale: 3 }',
    memory: 512,
    cpu: 300,
    scale: 2,
    profile: 'medium',
    action: 'raise_memory',
    notes: [],
  },
  {
    title: 'the largest profile is the closest when none holds the target, and says so',
    observation: observed('at_risk', 230),
    tuning: 'profiles:\n  small: { cpu: 100, memory: 128 }\n  medium: { memory: 300 }',
    memory: 300,
    cpu: 200,
    scale: 2,
    profile: 'medium',
    action: 'raise_memory',
    notes: [/no profile holds 329 MB; the largest, medium \(300 MB\)/],
  },
  {
    title: "limits bound a profile's cpu and scale too",
    observation: observed('overprovisioned', 30),
    tuning: 'profiles:\n  tiny: { cpu: 50, memory: 64, scale: 1 }\nlimits: { min: { cpu: 100, scale: 2 } }',
    memory: 64,
    cpu: 100,
    scale: 2,
    profile: 'tiny',
    action: 'lower_memory',
    notes: [/cpu bounded by limits to 100 MHz/, /scale bounded by limits to 2/],
  },
  {
    title: 'mode auto is reported only',
    observation: observed('right_sized', 150),
    tuning: 'mode: auto',
    memory: 256,
    cpu: 200,
    scale: 2,
    profile: null,
    action: 'keep',
    notes: [/auto is reserved .* reported only/],
  },
];

for (const c of cases) {
  test(`tuning: ${c.title}`, (t) => {
    const r = recommendTuning(c.observation, processOf(c.tuning));
    t.deepEqual(r.recommended, { memory: c.memory, cpu: c.cpu, scale: c.scale, profile: c.profile });
    t.deepEqual(r.current, { memory: 256, cpu: 200, scale: 2 });
    t.is(r.action, c.action);
    t.is(r.mode, 'advisory');
    t.false(r.applied);
    for (const note of c.notes)
      t.true(
        r.notes.some((n) => note.test(n)),
        `${note} in ${JSON.stringify(r.notes)}`,
      );
  });
}

test('tuning reports which policy signals it could read, with the aggregate of their samples', (t) => {
  const process = processOf(
    'signals:\n  - { name: rss, source: nomad, metric: memory_rss, aggregate: max, window: 1h }\n  - { name: cpu, source: nomad, metric: cpu_percent }\n  - { name: p95, source: prometheus, metric: memory_max, aggregate: p95 }\n  - { name: queue, source: app, metric: queue_depth }\n  - { name: odd, source: nomad, metric: queue_depth }',
  );
  // Before any sample: the scheduler's memory falls back to the observed peak; the others wait.
  const r = recommendTuning(observed('right_sized', 150), process);
  t.deepEqual(
    r.signals.map((s) => [s.name, s.used, s.value]),
    [
      ['rss', true, 150],
      ['cpu', false, null],
      ['p95', false, null],
      ['queue', false, null],
      ['odd', false, null],
    ],
  );
  t.is(r.signals[1]!.note, 'no cpu_percent sample yet');
  t.is(r.signals[4]!.note, 'the scheduler reports no live queue_depth');
  // With samples: each signal reports its aggregate; a source that did not answer says why.
  const read = recommendTuning(
    observed('right_sized', 150),
    process,
    new Map([
      ['cpu', { value: 42.26, samples: 12 }],
      ['p95', { value: 180, samples: 12 }],
      ['queue', { missing: 'no allocation reports it (no queue_depth in the exposition)' }],
    ]),
  );
  t.deepEqual(
    read.signals.map((s) => [s.name, s.used, s.value, s.samples]),
    [
      ['rss', true, 150, 0],
      ['cpu', true, 42.3, 12],
      ['p95', true, 180, 12],
      ['queue', false, null, 0],
      ['odd', false, null, 0],
    ],
  );
  t.regex(read.signals[2]!.note, /^p95 of memory_max over the kept history \(12 samples/);
  t.is(read.signals[3]!.note, 'no allocation reports it (no queue_depth in the exposition)');
  t.deepEqual(
    recommendTuning(observed('right_sized', 150), processOf('')).signals.map((s) => s.name),
    ['memory_peak'],
  );
});

test('signal history aggregates current, max and the nearest-rank p95 over a window', (t) => {
  const history = new SignalHistory();
  for (let i = 1; i <= 100; i++) history.record('a/web/cpu_percent', i * 1000, i);
  t.deepEqual(history.read('a/web/cpu_percent', 'current', undefined, 100_000), { value: 100, samples: 100 });
  t.deepEqual(history.read('a/web/cpu_percent', 'p95', undefined, 100_000), { value: 95, samples: 100 });
  // The last 10 s hold the samples 90..100.
  t.deepEqual(history.read('a/web/cpu_percent', 'max', 10_000, 100_000), { value: 100, samples: 11 });
  t.deepEqual(history.read('a/web/cpu_percent', 'p95', 10_000, 100_000), { value: 100, samples: 11 });
  t.is(history.read('a/web/cpu_percent', 'max', 10_000, 200_000), undefined);
  t.is(quantile([3, 1, 2], 0.5), 2);
});

test('tuning without a spec for the process still recommends from the observation', (t) => {
  const r = recommendTuning(observed('at_risk', 230), undefined);
  t.is(r.recommended.memory, 329);
  t.false(r.policy.declared);
  t.deepEqual(r.current, { memory: 256, cpu: 0, scale: 2 });
});
