// tier: quick
import fs from 'node:fs';
import path from 'node:path';
import test from 'ava';
import { validateInfraspec } from '../../../domain/spec/index.js';
import { validateJobForLocalDriver } from '../../../platform/local-scheduler/validate-job.js';
import { translateApp, type TranslationInput } from '../../../domain/translate/index.js';
import { fixturesIn, readFixture, root, sampleApps } from '../spec/spec-fixtures.js';

/** The fixed input of every golden translation: all infrastructure supplied, one scheduler variable left missing. */
const input: TranslationInput = {
  release: {
    commit: '0123456789abcdef0123456789abcdef01234567',
    workdir: '/var/lib/svc/releases/app/0123456789abcdef0123456789abcdef01234567/app',
    command: ['node', 'server.mjs'],
    env: { NODE_ENV: 'development', RELEASE_ONLY: 'from-dockerfile' },
  },
  infrastructure: {
    postgres: { host: '10.0.0.5', port: 5432, user: 'svc_app', passwordFile: '/etc/svc/pgpass' },
    redis: { url: 'redis://10.0.0.6:6379/0' },
    kafka: { brokers: '10.0.0.7:9092,10.0.0.8:9092' },
    nats: { url: 'nats://10.0.0.9:4222' },
    s3: { endpoint: 'http://10.0.0.10:9000', region: 'us-east-1' },
  },
  pipelineEnv: { SESSION_SECRET: 'pipeline-session-secret', NODE_ENV: 'production' },
  schedulerVariables: { DATABASE_PASSWORD: 'db-password-value', SEARCH_API_KEY: 'search-api-key-value' },
};

const update = process.env.UPDATE_GOLDEN === '1';
const goldenDir = path.join(root, 'test/domain/translate/golden');

const cases = [
  ...sampleApps.map((app) => ({ name: app, file: path.join(root, 'fixtures/apps', app, 'infraspec.yaml') })),
  ...fixturesIn('fixtures/specs/valid').map((fixture) => ({
    name: path.basename(fixture.file, '.yaml'),
    file: fixture.file,
  })),
];

for (const { name, file } of cases) {
  test(`translateApp output for ${path.relative(root, file)} matches golden/${name}.json`, (t) => {
    const fixture = readFixture(file);
    const validation = validateInfraspec(fixture.text, {
      fileName: path.basename(file),
      fleetDocument: fixture.fleetText,
    });
    t.true(validation.valid, validation.findings.map((finding) => finding.message).join('\n'));
    const translation = translateApp(validation.spec!, input);
    const actual = `${JSON.stringify(translation, null, 2)}\n`;
    const golden = path.join(goldenDir, `${name}.json`);
    if (update) fs.writeFileSync(golden, actual);
    t.true(fs.existsSync(golden), `golden/${name}.json exists (run with UPDATE_GOLDEN=1 to create it)`);
    t.is(actual, fs.readFileSync(golden, 'utf8'));
  });
}

test('the golden folder holds exactly one file per translated fixture', (t) => {
  const files = fs
    .readdirSync(goldenDir)
    .filter((file) => file.endsWith('.json'))
    .sort();
  t.deepEqual(files, cases.map(({ name }) => `${name}.json`).sort());
});

test('translateApp output is the same on every run', (t) => {
  const spec = validateInfraspec(readFixture(path.join(root, 'fixtures/specs/valid/large-200-lines.yaml')).text).spec!;
  t.deepEqual(translateApp(spec, input), translateApp(structuredClone(spec), input));
});

test('translateApp jobs of the local target pass the local driver job validation for every fixture', (t) => {
  for (const { name, file } of cases) {
    const fixture = readFixture(file);
    const spec = validateInfraspec(fixture.text, { fleetDocument: fixture.fleetText }).spec!;
    for (const job of translateApp(spec, input).jobs.filter((candidate) => candidate.region === 'local')) {
      const volumes = Object.fromEntries(
        spec.volumes.map((volume) => [volume.name, { path: `/srv/volumes/${volume.name}` }]),
      );
      t.notThrows(() => validateJobForLocalDriver(job, volumes), `${name}: ${job.id}`);
    }
  }
});
