// tier: full
import fs from 'node:fs';
import path from 'node:path';
import test, { type ExecutionContext } from 'ava';
import { ConfigError } from '../../../domain/errors.js';
import { loadConfig } from '../../../platform/config.js';
import { BRIDGE_VARIABLES } from '../../../platform/fleet/bridge-config.js';
import { loadRestrictedMode } from '../../../platform/fleet/restricted-config.js';
import { SAMPLE, startRestrictedFixture, type RestrictedFixture } from '../../helpers/fleet/restricted-fixture.js';
import { tempDir } from '../../helpers/temp-dir.js';

let fixture: RestrictedFixture;
test.before(async () => {
  fixture = await startRestrictedFixture({ postgres: false });
});
test.after.always(async () => {
  await fixture?.stop();
});

function load(env: Record<string, string | undefined>) {
  const clean = Object.fromEntries(Object.entries(env).filter(([, v]) => v !== undefined)) as Record<string, string>;
  return loadRestrictedMode(clean, loadConfig(clean));
}

function failure(t: ExecutionContext, env: Record<string, string | undefined>): string {
  return t.throws(() => load(env), { instanceOf: ConfigError }).message;
}

test('loadRestrictedMode reads a complete configuration with the bridge, the one fleet document and the pinned catalog app', (t) => {
  const restricted = load(fixture.env)!;
  t.is(restricted.fleet.metadata.name, 'staging-fleet');
  t.is(restricted.oidc.audience, 'svc:staging:external-admission');
  t.deepEqual(restricted.bridge?.catalog, { app: SAMPLE.app, image: SAMPLE.image, repository: SAMPLE.repository });
  t.is(restricted.bridge?.verifierToken, fixture.evidence.verifierToken);
  t.deepEqual(restricted.bridge?.repositoryIds, [SAMPLE.repositoryId, SAMPLE.fleetRepositoryId]);
});

test('loadRestrictedMode is undefined outside restricted mode, and restricted mode without any bridge setting has no bridge', (t) => {
  t.is(loadRestrictedMode({}, loadConfig({})), undefined);
  const withoutBridge = Object.fromEntries(
    Object.entries(fixture.env).filter(([name]) => !name.startsWith('SVC_EXTERNAL_FLEET_')),
  );
  t.is(load(withoutBridge)?.bridge, undefined);
});

test('partial bridge settings stop the start with a message naming every missing or inconsistent setting', (t) => {
  const message = failure(t, {
    ...fixture.env,
    SVC_EXTERNAL_FLEET_NAMESPACE: undefined,
    SVC_EXTERNAL_FLEET_PUBLIC_BASE_URL: undefined,
    SVC_EXTERNAL_FLEET_INSTALLATION_ID: undefined,
    SVC_EXTERNAL_FLEET_RUNTIME_JOB_ID: SAMPLE.migrationJobId,
    SVC_EXTERNAL_FLEET_RUNTIME_HCL_SHA256: SAMPLE.migrationHcl,
    SVC_EXTERNAL_FLEET_VERIFIER_URL: 'https://verifier.example.test/v4',
    SVC_EXTERNAL_FLEET_REPOSITORY_IDS: SAMPLE.repositoryId,
    SVC_EXTERNAL_FLEET_BOOTSTRAP_SIGNER_REF: `${SAMPLE.fleetRepository}/.github/workflows/admit.yml@${'d'.repeat(40)}`,
    SVC_EXTERNAL_FLEET_EVIDENCE_REGISTRATION_TOKEN_FILE: fixture.env.SVC_EXTERNAL_FLEET_VERIFIER_TOKEN_FILE,
  });
  t.regex(message, /^SVC_EXTERNAL_FLEET_NAMESPACE: restricted mode cannot start: /);
  for (const expected of [
    'SVC_EXTERNAL_FLEET_NAMESPACE is missing',
    'SVC_EXTERNAL_FLEET_PUBLIC_BASE_URL is missing',
    'SVC_EXTERNAL_FLEET_INSTALLATION_ID is missing',
    'SVC_EXTERNAL_FLEET_RUNTIME_JOB_ID must differ from SVC_EXTERNAL_FLEET_MIGRATION_JOB_ID',
    'SVC_EXTERNAL_FLEET_RUNTIME_HCL_SHA256 must differ from SVC_EXTERNAL_FLEET_MIGRATION_HCL_SHA256',
    'SVC_EXTERNAL_FLEET_VERIFIER_URL must be a single origin',
    'SVC_EXTERNAL_FLEET_REPOSITORY_IDS must list exactly two distinct numeric repository ids',
    'SVC_EXTERNAL_FLEET_BOOTSTRAP_SIGNER_REF must not be the release signer workflow',
    'SVC_EXTERNAL_FLEET_EVIDENCE_REGISTRATION_TOKEN_FILE must be a different file',
  ])
    t.true(message.includes(expected), `${expected}\nin: ${message}`);
  // One bridge setting alone names all the others.
  const alone = failure(t, {
    ...Object.fromEntries(Object.entries(fixture.env).filter(([name]) => !name.startsWith('SVC_EXTERNAL_FLEET_'))),
    SVC_EXTERNAL_FLEET_VERIFIER_URL: fixture.evidence.url,
  });
  for (const name of BRIDGE_VARIABLES.filter((n) => n !== 'SVC_EXTERNAL_FLEET_VERIFIER_URL'))
    t.true(alone.includes(`${name} is missing`), name);
  t.false(alone.includes(fixture.evidence.verifierToken));
});

test('token and key files must be regular owner-only files, and never appear in the message', (t) => {
  const loose = path.join(tempDir(t), 'verifier.token');
  fs.writeFileSync(loose, 'loose-secret-value', { mode: 0o644 });
  fs.chmodSync(loose, 0o644);
  const message = failure(t, {
    ...fixture.env,
    SVC_EXTERNAL_FLEET_VERIFIER_TOKEN_FILE: loose,
    SVC_EXTERNAL_FLEET_PRIVATE_KEY_FILE: 'relative/key.pem',
  });
  t.true(message.includes(`SVC_EXTERNAL_FLEET_VERIFIER_TOKEN_FILE ${loose} must be owner-only`));
  t.true(message.includes('SVC_EXTERNAL_FLEET_PRIVATE_KEY_FILE must be an absolute path'));
  t.false(message.includes('loose-secret-value'));
});

test('the start-up requirements of restricted mode are each checked and each failure names its setting', (t) => {
  const message = failure(t, {
    SVC_FLEET_AUTHORITY_ONLY: 'true',
    SVC_PROFILE: 'production',
    SVC_RELEASE_SIGNATURE_POLICY: 'none',
    SVC_REQUIRE_EXPLICIT_AUTH: 'true',
    SVC_API_TOKEN: 'x',
    SVC_APPS_DIR: fixture.env.SVC_APPS_DIR,
  });
  for (const expected of [
    'SVC_ENVIRONMENT must be staging in restricted mode, not development',
    'SVC_PROFILE must be development in restricted mode, not production',
    'SVC_POSTGRES_HOST must name an external PostgreSQL server',
    'SVC_POSTGRES_SSLMODE must be verify-full',
    'SVC_POSTGRES_SSL_ROOT_CERT is missing',
    'SVC_FLEET_AUDIT_SIGNING_KEY_FILE is missing',
    'SVC_FLEET_AUDIT_RETENTION is missing',
    'SVC_FLEET_GITHUB_APP_ID is missing',
    'SVC_FLEET_GITHUB_INSTALLATION_ID is missing',
    'SVC_FLEET_GITHUB_PRIVATE_KEY_FILE is missing',
    'SVC_FLEET_GITHUB_REPOSITORY is missing',
    'SVC_FLEET_GITHUB_API_URL is missing',
    'SVC_FLEET_OIDC_REPOSITORY is missing',
    'SVC_FLEET_OIDC_WORKFLOW is missing',
    'SVC_FLEET_OIDC_REF is missing',
    'SVC_FLEET_OIDC_ENVIRONMENT is missing',
    'SVC_FLEET_OIDC_INTENT is missing',
    'SVC_FLEET_OIDC_ISSUER is missing',
    'SVC_FLEET_DOCUMENT is missing',
  ])
    t.true(message.includes(expected), `${expected}\nin: ${message}`);
  t.false(message.includes('SVC_EXTERNAL_FLEET_'), 'no bridge setting, so no bridge problem');
  const noExplicit = failure(t, { ...fixture.env, SVC_REQUIRE_EXPLICIT_AUTH: 'false' });
  t.true(noExplicit.includes('SVC_REQUIRE_EXPLICIT_AUTH must be true in restricted mode'));
});

test("the OIDC key-set endpoint must be the issuer's fixed one, refs are exact, and the fleet document is one, of this environment", (t) => {
  const jwks = failure(t, {
    ...fixture.env,
    SVC_FLEET_OIDC_JWKS_URL: 'https://keys.example.test/jwks',
    SVC_FLEET_OIDC_REF: 'refs/heads/*',
  });
  t.true(
    jwks.includes(
      `SVC_FLEET_OIDC_JWKS_URL must equal the issuer's fixed key-set endpoint ${fixture.oidc.issuer}/.well-known/jwks`,
    ),
  );
  t.true(jwks.includes('SVC_FLEET_OIDC_REF "refs/heads/*" must be an exact ref'));
  t.true(
    failure(t, { ...fixture.env, SVC_FLEET_OIDC_REPOSITORY: 'acme/other' }).includes(
      'SVC_FLEET_OIDC_REPOSITORY must be the repository the git-host app is scoped to (acme/fleet)',
    ),
  );
  const dir = tempDir(t);
  const wildcard = path.join(dir, 'fleet.yaml');
  fs.writeFileSync(
    wildcard,
    'apiVersion: svc.dev/v1\nkind: Fleet\nmetadata:\n  name: f\n  environment: "*"\nnodePools:\n  - name: general\n',
  );
  t.true(
    failure(t, { ...fixture.env, SVC_FLEET_DOCUMENT: wildcard }).includes(
      'metadata.environment must equal SVC_ENVIRONMENT (staging), not "*" (no development wildcard)',
    ),
  );
  t.true(
    failure(t, { ...fixture.env, SVC_FLEET_DOCUMENT: `${wildcard},${fixture.env.SVC_FLEET_DOCUMENT}` }).includes(
      'SVC_FLEET_DOCUMENT must name exactly one fleet document',
    ),
  );
});

test('the bridge catalog must be read-only and hold exactly one deploy:false app with a canonical source and a pinned image', (t) => {
  const catalog = path.join(tempDir(t), 'apps');
  const write = (name: string, spec: string) => {
    fs.mkdirSync(path.join(catalog, name), { recursive: true });
    fs.writeFileSync(path.join(catalog, name, 'infraspec.yaml'), spec);
  };
  write(
    SAMPLE.app,
    `name: sample\ndeploy: true\nrepo:\n  url: https://github.com/${SAMPLE.repository}.git\nbuild:\n  image: registry.example.test/acme/sample:latest\nprocesses:\n  web:\n    port: 8080\n`,
  );
  const writable = failure(t, { ...fixture.env, SVC_APPS_DIR: catalog });
  for (const expected of [
    'must be read-only for the bridge',
    'must say deploy: false',
    'repo.url must be the canonical source',
    'build.image must be digest-pinned',
  ])
    t.true(writable.includes(expected), expected);
  write('other', 'name: other\nprocesses:\n  web:\n    port: 1\n');
  t.true(
    failure(t, { ...fixture.env, SVC_APPS_DIR: catalog }).includes(
      'SVC_APPS_DIR must hold exactly one app spec for the bridge, found 2 (other, sample)',
    ),
  );
});
