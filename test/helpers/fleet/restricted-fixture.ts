/**
 * Everything restricted mode needs, made for a test: certificates, the stand-ins (evidence
 * service, OIDC issuer, git-host API), PostgreSQL over TLS, key and token files (owner-only), one
 * fleet document, the read-only catalog with its one pinned sample app, and the environment that
 * names them all. Loopback only; stopped with `stop()`.
 */
import { generateKeyPairSync, randomBytes, type KeyObject } from 'node:crypto';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { makeTestCertificates, type TestCertificates } from './test-certificates.js';
import { startEvidenceStandIn, type EvidenceStandIn } from './evidence-stand-in.js';
import { startOidcIssuerStandIn, type OidcIssuerStandIn } from './oidc-issuer-stand-in.js';
import { startGitHostStandIn, type GitHostStandIn } from './git-host-stand-in.js';
import { startPostgresWithTls } from './postgres-tls.js';
import type { PostgresCluster } from '../postgres.js';

export const SAMPLE = {
  app: 'sample',
  repository: 'acme/sample-app',
  repositoryId: '4001',
  fleetRepository: 'acme/fleet',
  fleetRepositoryId: '4002',
  image: `registry.example.test/acme/sample@sha256:${'a'.repeat(64)}`,
  sha: 'c0ffee'.padEnd(40, '0'),
  namespace: 'staging-apps',
  migrationJobId: 'sample-migrate',
  migrationHcl: 'b'.repeat(64),
  runtimeJobId: 'sample-runtime',
  runtimeHcl: 'c'.repeat(64),
  verifierAppId: '777',
  installationId: '888',
} as const;

export interface RestrictedFixture {
  readonly root: string;
  readonly certs: TestCertificates;
  readonly evidence: EvidenceStandIn;
  readonly oidc: OidcIssuerStandIn;
  readonly gitHost: GitHostStandIn;
  readonly postgres: PostgresCluster;
  /** Environment of a restricted plane with the bridge fully configured. */
  readonly env: Record<string, string>;
  /** The control token of that environment. */
  readonly adminToken: string;
  /** A fresh data folder (each plane its own unless shared on purpose). */
  dataDir(): string;
  /** A workflow identity token matching the bindings, for `runId`. */
  identity(
    runId: string,
    overrides?: Record<string, unknown>,
    options?: Parameters<OidcIssuerStandIn['sign']>[1],
  ): Promise<string>;
  stop(): Promise<void>;
}

function ownerOnly(file: string, content: string): string {
  fs.writeFileSync(file, content, { mode: 0o600 });
  fs.chmodSync(file, 0o600);
  return file;
}

function rsaKey(): { pem: string; publicKey: KeyObject } {
  const { privateKey, publicKey } = generateKeyPairSync('rsa', { modulusLength: 2048 });
  return { pem: privateKey.export({ type: 'pkcs1', format: 'pem' }).toString(), publicKey };
}

export async function startRestrictedFixture(
  options: { readonly postgres?: boolean } = {},
): Promise<RestrictedFixture> {
  const root = fs.mkdtempSync(path.join(os.tmpdir(), 'svc-restricted-'));
  const certs = makeTestCertificates();
  const evidence = await startEvidenceStandIn(certs);
  const oidc = await startOidcIssuerStandIn(certs);
  const fleetApp = rsaKey();
  const verifierApp = rsaKey();
  const gitHost = await startGitHostStandIn(certs, {
    apps: [
      {
        appId: SAMPLE.verifierAppId,
        installationId: SAMPLE.installationId,
        publicKey: verifierApp.publicKey,
        repositoryIds: [SAMPLE.repositoryId, SAMPLE.fleetRepositoryId],
      },
      { appId: '555', installationId: '556', publicKey: fleetApp.publicKey, repositoryIds: [SAMPLE.fleetRepositoryId] },
    ],
    repositories: [
      { id: SAMPLE.repositoryId, fullName: SAMPLE.repository, commits: [SAMPLE.sha] },
      { id: SAMPLE.fleetRepositoryId, fullName: SAMPLE.fleetRepository, commits: [] },
    ],
  });
  const postgres = options.postgres === false ? undefined : await startPostgresWithTls(certs);
  const file = (name: string) => path.join(root, name);
  fs.writeFileSync(
    file('fleet.yaml'),
    'apiVersion: svc.dev/v1\nkind: Fleet\nmetadata:\n  name: staging-fleet\n  environment: staging\nnodePools:\n  - name: general\n    datacenters: [dc1]\n  - name: batch\n',
  );
  const apps = file('catalog');
  fs.mkdirSync(path.join(apps, SAMPLE.app), { recursive: true });
  fs.writeFileSync(
    path.join(apps, SAMPLE.app, 'infraspec.yaml'),
    `name: ${SAMPLE.app}\ndeploy: false\nrepo:\n  url: https://github.com/${SAMPLE.repository}\nbuild:\n  image: ${SAMPLE.image}\nprocesses:\n  web:\n    port: 8080\n`,
  );
  fs.chmodSync(path.join(apps, SAMPLE.app), 0o555);
  fs.chmodSync(apps, 0o555);
  const gh = file('gh');
  fs.writeFileSync(gh, '#!/bin/sh\nexit 0\n', { mode: 0o755 });
  const adminToken = `admin-${randomBytes(12).toString('hex')}`;
  let dataDirs = 0;
  const env: Record<string, string> = {
    SVC_PORT: '0',
    SVC_LOG_LEVEL: 'silent',
    SVC_FLEET_AUTHORITY_ONLY: 'true',
    SVC_ENVIRONMENT: 'staging',
    SVC_PROFILE: 'development',
    SVC_REQUIRE_EXPLICIT_AUTH: 'true',
    SVC_API_TOKEN: adminToken,
    SVC_APPS_DIR: apps,
    SVC_DATA_DIR: file('data'),
    SVC_POSTGRES_HOST: '127.0.0.1',
    SVC_POSTGRES_PORT: String(postgres?.port ?? 5432),
    SVC_POSTGRES_USER: postgres?.user ?? 'postgres',
    SVC_POSTGRES_SSLMODE: 'verify-full',
    SVC_POSTGRES_SSL_ROOT_CERT: certs.caFile,
    ...(postgres ? { SVC_POSTGRES_BIN_DIR: postgres.binDir } : {}),
    SVC_FLEET_AUDIT_SIGNING_KEY_FILE: ownerOnly(file('audit.key'), randomBytes(32).toString('hex')),
    SVC_FLEET_AUDIT_RETENTION: '2160h',
    SVC_FLEET_GITHUB_APP_ID: '555',
    SVC_FLEET_GITHUB_INSTALLATION_ID: '556',
    SVC_FLEET_GITHUB_PRIVATE_KEY_FILE: ownerOnly(file('fleet-app.pem'), fleetApp.pem),
    SVC_FLEET_GITHUB_REPOSITORY: SAMPLE.fleetRepository,
    SVC_FLEET_GITHUB_API_URL: gitHost.url,
    SVC_FLEET_OIDC_REPOSITORY: SAMPLE.fleetRepository,
    SVC_FLEET_OIDC_WORKFLOW: '.github/workflows/admit.yml',
    SVC_FLEET_OIDC_REF: 'refs/heads/main',
    SVC_FLEET_OIDC_ENVIRONMENT: 'staging',
    SVC_FLEET_OIDC_INTENT: 'external-admission',
    SVC_FLEET_OIDC_ISSUER: oidc.issuer,
    SVC_FLEET_OIDC_JWKS_URL: `${oidc.issuer}/.well-known/jwks`,
    SVC_FLEET_CA_FILE: certs.caFile,
    SVC_FLEET_DOCUMENT: file('fleet.yaml'),
    SVC_EXTERNAL_FLEET_ADMISSION_APP: SAMPLE.app,
    SVC_EXTERNAL_FLEET_NAMESPACE: SAMPLE.namespace,
    SVC_EXTERNAL_FLEET_MIGRATION_JOB_ID: SAMPLE.migrationJobId,
    SVC_EXTERNAL_FLEET_MIGRATION_HCL_SHA256: SAMPLE.migrationHcl,
    SVC_EXTERNAL_FLEET_RUNTIME_JOB_ID: SAMPLE.runtimeJobId,
    SVC_EXTERNAL_FLEET_RUNTIME_HCL_SHA256: SAMPLE.runtimeHcl,
    SVC_EXTERNAL_FLEET_BOOTSTRAP_SIGNER_REF: `${SAMPLE.fleetRepository}/.github/workflows/bootstrap.yml@${'d'.repeat(40)}`,
    SVC_EXTERNAL_FLEET_VERIFIER_URL: evidence.url,
    SVC_EXTERNAL_FLEET_EVIDENCE_ALLOWED_CIDRS: '127.0.0.0/8,::1/128',
    SVC_EXTERNAL_FLEET_VERIFIER_TOKEN_FILE: ownerOnly(file('verifier.token'), evidence.verifierToken),
    SVC_EXTERNAL_FLEET_EVIDENCE_REGISTRATION_TOKEN_FILE: ownerOnly(
      file('registration.token'),
      evidence.registrationToken,
    ),
    SVC_EXTERNAL_FLEET_GITHUB_VERIFIER_APP_ID: SAMPLE.verifierAppId,
    SVC_EXTERNAL_FLEET_INSTALLATION_ID: SAMPLE.installationId,
    SVC_EXTERNAL_FLEET_PRIVATE_KEY_FILE: ownerOnly(file('verifier-app.pem'), verifierApp.pem),
    SVC_EXTERNAL_FLEET_REPOSITORY_IDS: `${SAMPLE.repositoryId},${SAMPLE.fleetRepositoryId}`,
    SVC_EXTERNAL_FLEET_GITHUB_CLI_PATH: gh,
    SVC_EXTERNAL_FLEET_PUBLIC_BASE_URL: 'https://fleet.example.test',
  };
  return {
    root,
    certs,
    evidence,
    oidc,
    gitHost,
    postgres: postgres!,
    env,
    adminToken,
    dataDir: () => file(`data-${++dataDirs}`),
    identity(runId, overrides = {}, signOptions) {
      return oidc.sign(
        {
          repository: SAMPLE.fleetRepository,
          repository_id: SAMPLE.fleetRepositoryId,
          job_workflow_ref: `${SAMPLE.fleetRepository}/.github/workflows/admit.yml@refs/heads/main`,
          ref: 'refs/heads/main',
          environment: 'staging',
          sha: SAMPLE.sha,
          run_id: runId,
          run_attempt: '1',
          ...overrides,
        },
        signOptions,
      );
    },
    async stop() {
      await Promise.allSettled([evidence.close(), oidc.close(), gitHost.close()]);
      postgres?.stop();
      fs.chmodSync(apps, 0o755);
      fs.chmodSync(path.join(apps, SAMPLE.app), 0o755);
      fs.rmSync(root, { recursive: true, force: true });
      certs.remove();
    },
  };
}
