// tier: quick
/**
 * The rule of ADR 0196, as a test: every leaf field of the infraspec schema, set to a valid value
 * other than its default, changes something against the same spec without it: the translated jobs
 * (and the Kubernetes objects they become), the deploy plan, the app's read model, or the findings
 * of validation on the local or the Kubernetes driver. A field that changes nothing fails.
 */
import test from 'ava';
import { appSettings } from '../../../domain/apps/index.js';
import { scalingViews } from '../../../controllers/scaling/scaling-view.js';
import { planSteps, stepPlanInput } from '../../../domain/pipeline/index.js';
import { recommendTuning } from '../../../domain/observability/index.js';
import { desiredIngress } from '../../../domain/routing/index.js';
import { translateJob } from '../../../domain/scheduler/kubernetes/index.js';
import { SchedulerDriver, validateInfraspec, type CanonicalAppSpec } from '../../../domain/spec/index.js';
import { translateApp, type TranslationInput } from '../../../domain/translate/index.js';
import { canonicalJson } from '../../../domain/canonical-json.js';
import { leafName, sampleValues, schemaLeaves, withLeaf, WITHOUT, type Leaf } from './schema-walk.js';

/**
 * Fields that describe and do nothing, each with its reason. Keep this list short: a field that
 * does nothing is either made to work, or warned about by validation.
 */
const DESCRIPTIVE: Readonly<Record<string, string>> = {
  'function.trigger': 'has one valid value, its default (http): there is nothing else to set it to',
};

/** Specs a field is tried in, first to last, until one takes the field validly. */
const APP_BASES: readonly Record<string, unknown>[] = [
  { name: 'demo', processes: { web: { port: 8080 } } },
  { name: 'demo', processes: { web: { command: 'node worker.mjs' } } },
  { name: 'demo', processes: { web: { schedule: '*/5 * * * *' } } },
  { name: 'demo', processes: { web: { function: {} } } },
  { name: 'demo', regions: { eu: {}, us: {} }, primaryRegion: 'eu', processes: { web: { port: 8080 } } },
  { name: 'demo', regions: { eu: {}, us: {} }, processes: { web: { schedule: '*/5 * * * *' } } },
  { name: 'demo', processes: { web: { port: 8080, metrics: { enabled: true } } } },
  { name: 'demo', deploy: true, processes: { web: { port: 8080 } } },
  { name: 'demo', processes: { web: { port: 8080, health: { path: '/healthz' } } } },
  {
    name: 'demo',
    processes: { web: { port: 8080, scaling: { min: 3 }, tuning: { profiles: { small: { memory: 512 } } } } },
  },
  {
    name: 'demo',
    repo: { url: 'https://git.example.test/demo.git' },
    infrastructure: { postgres: { database: 'demo' } },
    processes: { web: { port: 8080 } },
  },
];
const LEGACY_BASES: readonly Record<string, unknown>[] = [{ app: 'demo', role: 'function' }];

const input: TranslationInput = {
  release: {
    commit: 'c0ffee0000000000000000000000000000000000',
    workdir: '/srv/release/demo',
    command: 'node server.mjs',
    env: {},
    image: 'registry.example.test/demo@sha256:' + 'a'.repeat(64),
  },
  infrastructure: {
    postgres: { host: '127.0.0.1', port: 5432, user: 'svc' },
    redis: { url: 'redis://127.0.0.1:6379' },
    kafka: { brokers: '127.0.0.1:9092' },
    nats: { url: 'nats://127.0.0.1:4222' },
    s3: { endpoint: 'http://127.0.0.1:9000' },
  },
  schedulerVariables: { DB_PASSWORD: 'x', API_TOKEN: 'y' },
};

/** What a spec changes, one string per observer; undefined where the spec is invalid on that driver. */
function observe(doc: Record<string, unknown>): Record<string, string> | undefined {
  const out: Record<string, string> = {};
  let spec: CanonicalAppSpec | undefined;
  for (const driver of Object.values(SchedulerDriver)) {
    const result = validateInfraspec(doc, { driver });
    if (!result.valid) return undefined;
    spec = result.spec;
    out[`findings (${driver} driver)`] = canonicalJson(
      result.findings.map((f) => [f.path, f.rule, f.severity, f.message]),
    );
  }
  const translation = translateApp(spec!, input);
  out['translated jobs'] = canonicalJson(translation);
  out['kubernetes objects'] = canonicalJson(
    translation.jobs.map((job) => {
      try {
        return translateJob(job, { namespace: 'svc-apps', region: 'local', templateVersions: {} });
      } catch (error) {
        return { refused: (error as Error).message };
      }
    }),
  );
  const capabilities = { snapshots: true, migrations: true, routing: true };
  out['deploy plan'] = canonicalJson({
    steps: planSteps('deploy', stepPlanInput(spec!, capabilities)),
    routes: desiredIngress([{ spec: spec!, routable: true }], new Set(), { gatewayUrl: 'http://127.0.0.1:8800' }),
  });
  out['read model'] = canonicalJson({
    settings: appSettings(spec!, input.release.commit),
    // The scaling view of each process (bounds and the autoscaler's metric), as the app view shows it.
    scaling: scalingViews(spec!, undefined),
    // The tuning view of each process, for a process at risk of OOM kills.
    tuning: Object.keys(spec!.processes).map((process) =>
      recommendTuning(
        {
          app: spec!.name,
          process,
          region: 'local',
          allocations: 1,
          peakMemoryMb: 120,
          memoryLimitMb: 128,
          usagePercent: 90,
          status: 'at_risk',
        },
        spec!.processes[process],
      ),
    ),
  });
  return out;
}

interface Outcome {
  readonly leaf: string;
  /** Observers that changed, in the first base where the field validates; empty: changes nothing. */
  readonly changed: readonly string[];
  /** No base took the field validly (the walk's samples need a context). */
  readonly untestable?: string;
}

function outcome(leaf: Leaf, kept: (observer: string) => boolean = () => true): Outcome {
  const name = leafName(leaf.path);
  const values = sampleValues(leaf);
  if (values === undefined) return { leaf: name, changed: [], untestable: 'no value other than the default' };
  const bases = leaf.form === 'AppSpec' ? APP_BASES : LEGACY_BASES;
  let firstChanged: string[] | undefined;
  const problems: string[] = [];
  for (const base of bases) {
    const withField = withLeaf(base, leaf, values[1]);
    const after = observe(withField);
    if (after === undefined) {
      const findings = validateInfraspec(withField).findings.filter((f) => f.severity === 'error');
      problems.push(findings.map((f) => f.message).join('; ') || 'invalid on the kubernetes driver');
      continue;
    }
    // The same spec without the field (its parents, created for it, stay); a required field cannot be
    // left out: it is compared with another valid value of it.
    const without = withLeaf(base, leaf, leaf.required || leaf.schema.const !== undefined ? values[0] : WITHOUT);
    const before = leaf.schema.const !== undefined ? undefined : observe(without);
    const changed = Object.keys(after).filter(
      (key) => kept(key) && (before === undefined || before[key] !== after[key]),
    );
    if (changed.length > 0) return { leaf: name, changed };
    firstChanged ??= changed;
  }
  if (firstChanged !== undefined) return { leaf: name, changed: [] };
  return { leaf: name, changed: [], untestable: problems.join(' | ') };
}

const outcomes = schemaLeaves().map((leaf) => outcome(leaf));

test('the schema walk finds the leaf fields of both forms of an infraspec', (t) => {
  const names = outcomes.map((o) => o.leaf);
  t.true(names.length > 80, `only ${names.length} leaves`);
  for (const expected of [
    'processes.*.health.interval',
    'regions.*.trafficWeight',
    'endpoints[].region',
    'placement.nodePool',
    'repo.repoWeb',
    'function.timeout',
  ])
    t.true(names.includes(expected), expected);
});

test('every field of the infraspec changes the jobs, the plan, the read model or the findings', (t) => {
  const ignored = outcomes.filter((o) => o.changed.length === 0 && !(o.leaf in DESCRIPTIVE));
  t.deepEqual(
    ignored.map((o) => `${o.leaf}${o.untestable !== undefined ? ` (untestable: ${o.untestable})` : ''}`),
    [],
    'these fields validate and then change nothing: make them take effect, or warn about them in validation',
  );
});

test('the exceptions are few, named and still exist in the schema', (t) => {
  const names = new Set(outcomes.map((o) => o.leaf));
  t.true(Object.keys(DESCRIPTIVE).length <= 3);
  for (const [field, reason] of Object.entries(DESCRIPTIVE)) {
    t.true(names.has(field), `${field} is not a field of the schema any more`);
    t.true(reason.length > 20, `${field} needs a reason`);
  }
});

test('a field no observer reads is reported as changing nothing', (t) => {
  // The walk's own check: with only the findings observed, resources.cpu (which validation accepts
  // silently and the jobs carry) is a field that changes nothing, as a new field nobody reads would be.
  const cpu = schemaLeaves().find((leaf) => leafName(leaf.path) === 'processes.*.resources.cpu')!;
  t.true(outcome(cpu).changed.includes('translated jobs'));
  t.deepEqual(outcome(cpu, (observer) => observer.startsWith('findings')).changed, []);
});
