/**
 * The jobs of the fixture apps, translated for an image release (the kubernetes driver's input).
 */
import path from 'node:path';
import { normalizeJob, type JobSpec } from '../../../domain/scheduler/index.js';
import { validateInfraspec } from '../../../domain/spec/index.js';
import { translateApp, type TranslationInput } from '../../../domain/translate/index.js';
import { readFixture, root } from '../../domain/spec/spec-fixtures.js';

const input: TranslationInput = {
  release: {
    commit: '0123456789abcdef0123456789abcdef01234567',
    image: 'registry.example.test/apps/app:0123456',
    env: { NODE_ENV: 'development' },
  },
  pipelineEnv: { SESSION_SECRET: 'pipeline-session-secret' },
};

/** The normalized jobs of a fixture app in `fixtures/apps/`. */
export function fixtureJobs(app: string): JobSpec[] {
  const fixture = readFixture(path.join(root, 'fixtures/apps', app, 'infraspec.yaml'));
  const validation = validateInfraspec(fixture.text, { fileName: 'infraspec.yaml', fleetDocument: fixture.fleetText });
  if (!validation.spec) throw new Error(`fixture ${app} is not valid`);
  return translateApp(validation.spec, input).jobs.map(normalizeJob);
}
