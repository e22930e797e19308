/**
 * Shared helpers of the routing tests: fixture specs canonicalized, and specs built in code.
 */
import fs from 'node:fs';
import path from 'node:path';
import { validateInfraspec, type CanonicalAppSpec } from '../../domain/spec/index.js';
import { REPO_ROOT } from '../helpers/repo.js';

export const root = REPO_ROOT;

/** Every sample app under fixtures/apps. */
export const fixtureApps = fs
  .readdirSync(path.join(root, 'fixtures/apps'))
  .filter((name) => fs.existsSync(path.join(root, 'fixtures/apps', name, 'infraspec.yaml')))
  .sort();

/** The canonical spec of a fixture app. */
export function fixtureSpec(app: string): CanonicalAppSpec {
  const text = fs.readFileSync(path.join(root, 'fixtures/apps', app, 'infraspec.yaml'), 'utf8');
  const validation = validateInfraspec(text, { fileName: 'infraspec.yaml' });
  if (!validation.valid || !validation.spec)
    throw new Error(`${app}: ${validation.findings.map((f) => f.message).join('; ')}`);
  return validation.spec;
}

/** A canonical spec from YAML text (throws with the findings when invalid). */
export function specOf(yaml: string): CanonicalAppSpec {
  const validation = validateInfraspec(yaml, { fileName: 'infraspec.yaml' });
  if (!validation.valid || !validation.spec) throw new Error(validation.findings.map((f) => f.message).join('; '));
  return validation.spec;
}

/** A deployable web app with `hostnames` as endpoints on `port`. */
export function webApp(
  name: string,
  hostnames: readonly string[],
  options: { port?: number; min?: number; deploy?: boolean } = {},
): CanonicalAppSpec {
  return specOf(`name: ${name}
deploy: ${options.deploy ?? true}
processes:
  web:
    port: ${options.port ?? 8080}
    health:
      path: /healthz
    scaling:
      min: ${options.min ?? 1}
${hostnames.length > 0 ? `endpoints:\n${hostnames.map((h) => `  - url: ${h}`).join('\n')}\n` : ''}`);
}
