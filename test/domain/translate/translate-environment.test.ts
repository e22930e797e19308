// tier: quick
import test from 'ava';
import type { AppSpec, Process } from '../../../schemas/types.generated.js';
import type { TaskGroupSpec } from '../../../domain/scheduler/index.js';
import { validateInfraspec, type CanonicalAppSpec } from '../../../domain/spec/index.js';
import {
  infrastructureEnvironment,
  JobMetaKey,
  translateApp,
  type Translation,
  type TranslationInput,
} from '../../../domain/translate/index.js';

const release = {
  commit: 'c0ffee0000000000000000000000000000000000',
  workdir: '/srv/release/app',
  command: 'node server.mjs',
  env: {},
};

function canonical(spec: AppSpec): CanonicalAppSpec {
  const result = validateInfraspec(spec);
  if (!result.valid || result.spec === undefined)
    throw new Error(result.findings.map((finding) => finding.message).join('\n'));
  return result.spec;
}

function translate(spec: AppSpec, input: Partial<TranslationInput> = {}): Translation {
  return translateApp(canonical(spec), { release, ...input });
}

function groupOf(translation: Translation, name: string): TaskGroupSpec {
  for (const job of translation.jobs) for (const group of job.taskGroups) if (group.name === name) return group;
  throw new Error(`no task group ${name}`);
}

const settings: NonNullable<TranslationInput['infrastructure']> = {
  postgres: { host: 'db.internal', port: 5433, user: 'shop_app' },
  redis: { url: 'redis://cache.internal:6379' },
  kafka: { brokers: 'k1:9092,k2:9092' },
  nats: { url: 'nats://bus.internal:4222' },
  s3: { endpoint: 'http://s3.internal:9000' },
};

// --- precedence -----------------------------------------------------------------------------------------------

test('translateApp layers env as release, spec, process, infrastructure, then pipeline values', (t) => {
  const spec: AppSpec = {
    name: 'shop',
    env: { LAYER: 'spec', SPEC_ONLY: 's', PGDATABASE: 'from-spec' },
    processes: { web: { port: 1, env: { LAYER: 'process', PROCESS_ONLY: 'p' } } },
    infrastructure: { postgres: { database: 'shop' } },
  };
  const out = translate(spec, {
    release: { ...release, env: { LAYER: 'release', RELEASE_ONLY: 'r', SPEC_ONLY: 'release' } },
    infrastructure: settings,
    pipelineEnv: { PIPELINE_ONLY: 'x', PGHOST: 'pipeline-host' },
  });
  const env = groupOf(out, 'web').task.env;
  t.is(env.LAYER, 'process');
  t.is(env.RELEASE_ONLY, 'r');
  t.is(env.SPEC_ONLY, 's');
  t.is(env.PROCESS_ONLY, 'p');
  t.is(env.PGDATABASE, 'shop', 'infrastructure wins over spec env');
  t.is(env.PGHOST, 'pipeline-host', 'pipeline values win over infrastructure');
  t.is(env.PIPELINE_ONLY, 'x');
});

test('translateApp never adds PORT to the task env', (t) => {
  t.false('PORT' in groupOf(translate({ name: 'shop', processes: { web: { port: 8080 } } }), 'web').task.env);
});

// --- infrastructure ---------------------------------------------------------------------------------------------

test('infrastructureEnvironment gives postgres connection settings without a password', (t) => {
  const env = infrastructureEnvironment(
    canonical({ name: 'shop', processes: { web: { port: 1 } }, infrastructure: { postgres: { database: 'shop_db' } } }),
    settings,
  );
  t.deepEqual(env, {
    PGDATABASE: 'shop_db',
    PGHOST: 'db.internal',
    PGPORT: '5433',
    PGUSER: 'shop_app',
    DATABASE_URL: 'postgres://shop_app@db.internal:5433/shop_db',
  });
});

test('infrastructureEnvironment points PGPASSFILE at the password file when given', (t) => {
  const spec = canonical({
    name: 'shop',
    processes: { web: { port: 1 } },
    infrastructure: { postgres: { database: 'shop_db' } },
  });
  const env = infrastructureEnvironment(spec, { postgres: { ...settings.postgres!, passwordFile: '/run/svc/pgpass' } });
  t.is(env.PGPASSFILE, '/run/svc/pgpass');
  t.false(Object.values(env).some((value) => value.includes('password=')));
});

test('infrastructureEnvironment gives redis, kafka and nats settings with namespaces, topics and streams', (t) => {
  const spec = canonical({
    name: 'shop',
    processes: { web: { port: 1 } },
    infrastructure: {
      redis: { namespace: 'shop' },
      kafka: { topics: ['orders', 'dlq'] },
      nats: { streams: ['audit'] },
    },
  });
  t.deepEqual(infrastructureEnvironment(spec, settings), {
    REDIS_NAMESPACE: 'shop',
    REDIS_URL: 'redis://cache.internal:6379',
    KAFKA_TOPICS: 'orders,dlq',
    KAFKA_BROKERS: 'k1:9092,k2:9092',
    NATS_STREAMS: 'audit',
    NATS_URL: 'nats://bus.internal:4222',
  });
});

const bucketCases: ReadonlyArray<[string, Record<string, unknown>, Record<string, string>]> = [
  [
    'a bucket name becomes S3_BUCKET_<NAME> uppercase',
    { name: 'media-originals' },
    { S3_BUCKET_MEDIA_ORIGINALS: 'media-originals' },
  ],
  ['dots in a bucket name become underscores', { name: 'media.thumbs' }, { S3_BUCKET_MEDIA_THUMBS: 'media.thumbs' }],
  [
    'an env alias replaces the derived name',
    { name: 'media-invoices', env: 'INVOICES' },
    { S3_BUCKET_INVOICES: 'media-invoices' },
  ],
  [
    'a prefix adds S3_BUCKET_<ENV>_PREFIX',
    { name: 'uploads', prefix: 'u/' },
    { S3_BUCKET_UPLOADS: 'uploads', S3_BUCKET_UPLOADS_PREFIX: 'u/' },
  ],
];
for (const [what, bucket, expected] of bucketCases) {
  test(`infrastructureEnvironment buckets: ${what}`, (t) => {
    const spec = canonical({
      name: 'shop',
      processes: { web: { port: 1 } },
      infrastructure: { objectStorage: { buckets: [bucket as { name: string }] } },
    });
    t.deepEqual(infrastructureEnvironment(spec, { s3: { endpoint: 'http://s3' } }), {
      ...expected,
      S3_ENDPOINT: 'http://s3',
    });
  });
}

test('infrastructureEnvironment adds S3_REGION when the platform gives one', (t) => {
  const spec = canonical({
    name: 'shop',
    processes: { web: { port: 1 } },
    infrastructure: { objectStorage: { buckets: [] } },
  });
  t.deepEqual(infrastructureEnvironment(spec, { s3: { endpoint: 'http://s3', region: 'eu-1' } }), {
    S3_ENDPOINT: 'http://s3',
    S3_REGION: 'eu-1',
  });
});

test('infrastructureEnvironment gives an app behind the S3 proxy its key file, key id and path-style endpoint', (t) => {
  const spec = canonical({
    name: 'shop',
    processes: { web: { port: 1 } },
    infrastructure: { objectStorage: { buckets: [{ name: 'photos', access: 'readOnly' }] } },
  });
  const s3 = {
    endpoint: 'http://127.0.0.1:8890',
    region: 'us-east-1',
    credentialsFile: '/data/s3-credentials/shop.ini',
    accessKeyId: 'SVCAPP73686F70',
  };
  t.deepEqual(infrastructureEnvironment(spec, { s3 }), {
    S3_BUCKET_PHOTOS: 'photos',
    S3_ENDPOINT: 'http://127.0.0.1:8890',
    S3_REGION: 'us-east-1',
    S3_FORCE_PATH_STYLE: 'true',
    AWS_ENDPOINT_URL_S3: 'http://127.0.0.1:8890',
    AWS_SHARED_CREDENTIALS_FILE: '/data/s3-credentials/shop.ini',
    S3_ACCESS_KEY_ID: 'SVCAPP73686F70',
  });
});

test('infrastructureEnvironment warns when two buckets share an env alias', (t) => {
  const spec = canonical({
    name: 'shop',
    processes: { web: { port: 1 } },
    infrastructure: { objectStorage: { buckets: [{ name: 'a-b' }, { name: 'a.b' }] } },
  });
  const warnings: Array<{ path: string; message: string }> = [];
  t.is(infrastructureEnvironment(spec, { s3: { endpoint: 'http://s3' } }, warnings).S3_BUCKET_A_B, 'a.b');
  t.deepEqual(
    warnings.map((w) => w.path),
    ['infrastructure.objectStorage.buckets.1.env'],
  );
});

test('infrastructureEnvironment gives nothing for infrastructure the spec does not declare', (t) => {
  t.deepEqual(infrastructureEnvironment(canonical({ name: 'shop', processes: { web: { port: 1 } } }), settings), {});
});

test('infrastructureEnvironment warns and sets what the spec knows when the platform has no settings', (t) => {
  const spec = canonical({
    name: 'shop',
    processes: { web: { port: 1 } },
    infrastructure: { postgres: { database: 'shop' }, kafka: { topics: ['t'] } },
  });
  const warnings: Array<{ path: string; message: string }> = [];
  t.deepEqual(infrastructureEnvironment(spec, {}, warnings), { PGDATABASE: 'shop', KAFKA_TOPICS: 't' });
  t.deepEqual(
    warnings.map((w) => w.path),
    ['infrastructure.postgres', 'infrastructure.kafka'],
  );
});

// --- scheduler variables -------------------------------------------------------------------------------------------

const withVariables = (extra: Partial<Process> = {}): AppSpec => ({
  name: 'billing',
  processes: {
    api: {
      port: 8443,
      schedulerVariables: {
        uid: 1000,
        gid: 1000,
        files: [
          { key: 'DATABASE_PASSWORD', destination: 'db-password' },
          { key: 'STRIPE_API_KEY', destination: 'stripe.key' },
        ],
      },
      ...extra,
    },
    web: { port: 8080 },
  },
});
const values = { DATABASE_PASSWORD: 'pw-1', STRIPE_API_KEY: 'sk-1' };

test('translateApp renders each scheduler variable as secrets/<destination> with mode 0400', (t) => {
  const out = translate(withVariables(), { schedulerVariables: values });
  t.deepEqual(groupOf(out, 'api').task.files, [
    { destination: 'secrets/db-password', contents: 'pw-1', mode: 0o400 },
    { destination: 'secrets/stripe.key', contents: 'sk-1', mode: 0o400 },
  ]);
  t.false('files' in groupOf(out, 'web').task);
});

test('translateApp points <KEY>_FILE at the allocation-relative secrets path and never puts a value in env or command', (t) => {
  const out = translate(withVariables(), { schedulerVariables: values });
  const task = groupOf(out, 'api').task;
  t.is(task.env.DATABASE_PASSWORD_FILE, 'secrets/db-password');
  t.is(task.env.STRIPE_API_KEY_FILE, 'secrets/stripe.key');
  const visible = JSON.stringify([task.env, task.command, out.jobs.map((job) => job.meta)]);
  t.false(visible.includes('pw-1') || visible.includes('sk-1'));
});

test('translateApp withholds pipeline values from a process with scheduler variables only', (t) => {
  const out = translate(withVariables(), { schedulerVariables: values, pipelineEnv: { SESSION_SECRET: 's' } });
  t.false('SESSION_SECRET' in groupOf(out, 'api').task.env);
  t.is(groupOf(out, 'web').task.env.SESSION_SECRET, 's');
});

test('translateApp records the job-derived variable path scheduler/jobs/<job id> in job meta', (t) => {
  const out = translate(withVariables(), { schedulerVariables: values });
  t.is(out.jobs[0]!.meta?.[JobMetaKey.schedulerVariablesPath], 'scheduler/jobs/billing');
  const regional = translate({ ...withVariables(), regions: { eu: {} } }, { schedulerVariables: values });
  t.is(regional.jobs[0]!.meta?.[JobMetaKey.schedulerVariablesPath], 'scheduler/jobs/billing@eu');
  t.false(
    JobMetaKey.schedulerVariablesPath in translate({ name: 'plain', processes: { web: { port: 1 } } }).jobs[0]!.meta!,
  );
});

test('translateApp changes only the file contents when a variable value changes', (t) => {
  const before = groupOf(translate(withVariables(), { schedulerVariables: values }), 'api');
  const after = groupOf(
    translate(withVariables(), { schedulerVariables: { ...values, STRIPE_API_KEY: 'sk-2' } }),
    'api',
  );
  t.deepEqual({ ...after, task: { ...after.task, files: [] } }, { ...before, task: { ...before.task, files: [] } });
  t.is(after.task.files?.[1]?.contents, 'sk-2');
});

test('translateApp fails the task of a process whose scheduler variable is missing', (t) => {
  const out = translate(withVariables(), { schedulerVariables: { DATABASE_PASSWORD: 'pw-1' } });
  const api = groupOf(out, 'api');
  t.deepEqual(
    api.task.files?.map((file) => file.destination),
    ['secrets/db-password'],
  );
  t.is(
    api.task.command,
    `echo 'svc: scheduler variable STRIPE_API_KEY missing at scheduler/jobs/billing; the task cannot start' >&2; exit 78`,
  );
  t.is(api.restart?.attempts, 0);
  t.is(out.jobs[0]!.meta?.[JobMetaKey.missingSchedulerVariables], 'STRIPE_API_KEY');
  t.deepEqual(
    out.warnings.map((w) => w.path),
    ['processes.api.schedulerVariables.files.1.key'],
  );
  t.is(groupOf(out, 'web').task.command, 'node server.mjs', 'other processes of the job are untouched');
});

test('translateApp lists every missing scheduler variable key, sorted, in job meta', (t) => {
  const out = translate(withVariables());
  t.is(out.jobs[0]!.meta?.[JobMetaKey.missingSchedulerVariables], 'DATABASE_PASSWORD,STRIPE_API_KEY');
  t.regex(String(groupOf(out, 'api').task.command), /scheduler variables DATABASE_PASSWORD, STRIPE_API_KEY missing/);
});

test('translateApp quotes a region name in the missing-variable command', (t) => {
  const out = translate({ ...withVariables(), regions: { "o'hare": {} } });
  t.regex(
    String(groupOf(out, 'api').task.command),
    /^echo 'svc: .*scheduler\/jobs\/billing@o'\\''hare; the task cannot start' >&2; exit 78$/,
  );
});

test('translateApp replaces a differing <KEY>_FILE from process env and warns', (t) => {
  const out = translate(withVariables({ env: { STRIPE_API_KEY_FILE: '/elsewhere' } }), { schedulerVariables: values });
  t.is(groupOf(out, 'api').task.env.STRIPE_API_KEY_FILE, 'secrets/stripe.key');
  t.deepEqual(
    out.warnings.map((w) => w.path),
    ['processes.api.env.STRIPE_API_KEY_FILE'],
  );
});
