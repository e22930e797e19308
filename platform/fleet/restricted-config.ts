/**
 * Restricted (authority-only) mode configuration: every start-up requirement of the spec checked
 * one by one, and the external-admission bridge settings checked as a whole. Problems are
 * collected, not thrown at the first one, so a single failed start names every missing or
 * inconsistent setting (docs/restricted-mode.md, ADR 0150).
 */
import fs from 'node:fs';
import { ConfigError } from '../../domain/errors.js';
import { intentAudience, type WorkflowBindings } from '../../domain/fleet/workflow-identity.js';
import { validateFleetDocument } from '../../domain/spec/validate-fleet-document.js';
import type { FleetDocument } from '../../schemas/types.generated.js';
import { durationMs, optional, type Env } from '../config-parsers.js';
import type { SvcConfig } from '../config.js';
import { httpsOrigin, NAME, ownerOnlyFile, Problems, REPOSITORY, required } from './restricted-checks.js';
import { loadBridge, type BridgeConfig } from './bridge-config.js';

/** Restricted mode's settings. */
export interface RestrictedModeConfig {
  readonly environment: string;
  readonly fleetDocumentFile: string;
  readonly fleet: FleetDocument;
  readonly auditSigningKey: Buffer;
  readonly auditRetentionMs: number;
  readonly gitHostApiUrl: string;
  readonly gitHostApp: {
    readonly appId: string;
    readonly installationId: string;
    readonly privateKeyFile: string;
    readonly repository: string;
  };
  readonly oidc: {
    readonly issuer: string;
    readonly jwksUrl: string;
    readonly audience: string;
    readonly bindings: WorkflowBindings;
  };
  /** Extra CA certificates trusted for the fleet's outbound HTTPS (PEM); unset: the system's. */
  readonly caCertificates: string | undefined;
  readonly bridge: BridgeConfig | undefined;
}

/**
 * Reads restricted mode's settings when `SVC_FLEET_AUTHORITY_ONLY=true` (undefined otherwise).
 * @throws ConfigError naming every requirement that is not met.
 */
export function loadRestrictedMode(env: Env, config: SvcConfig): RestrictedModeConfig | undefined {
  if (!config.fleetAuthorityOnly) return undefined;
  const problems = new Problems();
  if (config.environment !== 'staging')
    problems.add('SVC_ENVIRONMENT', `must be staging in restricted mode, not ${config.environment}`);
  if (config.profile !== 'development')
    problems.add('SVC_PROFILE', `must be development in restricted mode, not ${config.profile}`);
  if (!config.requireExplicitAuth) problems.add('SVC_REQUIRE_EXPLICIT_AUTH', 'must be true in restricted mode');
  if (config.apiToken === undefined && config.edgeAccessTeamDomain === undefined)
    problems.add('SVC_API_TOKEN', 'must be set in restricted mode (explicit authentication)');
  // Verified TLS to an external PostgreSQL server.
  if (optional(env.SVC_POSTGRES_HOST) === undefined)
    problems.add('SVC_POSTGRES_HOST', 'must name an external PostgreSQL server in restricted mode');
  if (config.postgresSslMode !== 'verify-full')
    problems.add('SVC_POSTGRES_SSLMODE', 'must be verify-full in restricted mode');
  if (config.postgresSslRootCert === undefined)
    problems.add('SVC_POSTGRES_SSL_ROOT_CERT', 'is missing (the CA that verifies the PostgreSQL server)');
  else if (!fs.existsSync(config.postgresSslRootCert))
    problems.add('SVC_POSTGRES_SSL_ROOT_CERT', `${config.postgresSslRootCert} cannot be read`);
  // Audit signing key and retention.
  const key = ownerOnlyFile(
    problems,
    'SVC_FLEET_AUDIT_SIGNING_KEY_FILE',
    optional(env.SVC_FLEET_AUDIT_SIGNING_KEY_FILE),
  );
  if (key !== undefined && Buffer.byteLength(key) < 32)
    problems.add('SVC_FLEET_AUDIT_SIGNING_KEY_FILE', 'must hold at least 32 bytes of key material');
  let auditRetentionMs = 0;
  const retention = optional(env.SVC_FLEET_AUDIT_RETENTION);
  if (retention === undefined)
    problems.add('SVC_FLEET_AUDIT_RETENTION', 'is missing (how long audit entries are kept, e.g. 2160h)');
  else {
    try {
      auditRetentionMs = durationMs('SVC_FLEET_AUDIT_RETENTION', 0)(retention);
      if (auditRetentionMs < 24 * 3_600_000) problems.add('SVC_FLEET_AUDIT_RETENTION', 'must be at least 24h');
    } catch (error) {
      problems.add('SVC_FLEET_AUDIT_RETENTION', (error as Error).message.replace(/^SVC_FLEET_AUDIT_RETENTION: /, ''));
    }
  }
  // A complete repository-scoped git-host app.
  const appId = required(problems, env, 'SVC_FLEET_GITHUB_APP_ID', /^\d+$/, 'a numeric app id');
  const installationId = required(
    problems,
    env,
    'SVC_FLEET_GITHUB_INSTALLATION_ID',
    /^\d+$/,
    'a numeric installation id',
  );
  const appKeyFile = optional(env.SVC_FLEET_GITHUB_PRIVATE_KEY_FILE);
  ownerOnlyFile(problems, 'SVC_FLEET_GITHUB_PRIVATE_KEY_FILE', appKeyFile);
  const repository = required(
    problems,
    env,
    'SVC_FLEET_GITHUB_REPOSITORY',
    REPOSITORY,
    'owner/name (the one repository the app is scoped to)',
  );
  const gitHostApiUrl = httpsOrigin(problems, 'SVC_FLEET_GITHUB_API_URL', optional(env.SVC_FLEET_GITHUB_API_URL), true);
  // Exact workflow OIDC bindings, and the key-set endpoint fixed by the issuer.
  const bindings = {
    repository: required(problems, env, 'SVC_FLEET_OIDC_REPOSITORY', REPOSITORY, 'owner/name'),
    workflow: required(
      problems,
      env,
      'SVC_FLEET_OIDC_WORKFLOW',
      /^\.github\/workflows\/[A-Za-z0-9._-]+\.ya?ml$/,
      'a workflow path such as .github/workflows/admit.yml',
    ),
    ref: required(
      problems,
      env,
      'SVC_FLEET_OIDC_REF',
      /^refs\/(heads|tags)\/[^\s*?[]+$/,
      'an exact ref such as refs/heads/main (no wildcard)',
    ),
    environment: required(problems, env, 'SVC_FLEET_OIDC_ENVIRONMENT', NAME, 'an exact environment name'),
    intent: required(
      problems,
      env,
      'SVC_FLEET_OIDC_INTENT',
      /^[a-z][a-z0-9-]{0,62}$/,
      'a lower-case intent such as external-admission',
    ),
  };
  if (repository !== undefined && bindings.repository !== undefined && repository !== bindings.repository)
    problems.add(
      'SVC_FLEET_OIDC_REPOSITORY',
      `must be the repository the git-host app is scoped to (${repository}): it runs the workflow the app dispatches`,
    );
  const issuer = httpsOrigin(problems, 'SVC_FLEET_OIDC_ISSUER', optional(env.SVC_FLEET_OIDC_ISSUER), true);
  const jwksUrl = optional(env.SVC_FLEET_OIDC_JWKS_URL);
  if (issuer !== undefined && jwksUrl !== `${issuer}/.well-known/jwks`)
    problems.add(
      'SVC_FLEET_OIDC_JWKS_URL',
      `must equal the issuer's fixed key-set endpoint ${issuer}/.well-known/jwks`,
    );
  let caCertificates: string | undefined;
  const caFile = optional(env.SVC_FLEET_CA_FILE);
  if (caFile !== undefined) {
    try {
      caCertificates = fs.readFileSync(caFile, 'utf8');
    } catch {
      problems.add('SVC_FLEET_CA_FILE', `${caFile} cannot be read`);
    }
  }
  // Exactly one fleet document, of this environment.
  const fleetDocumentFile = optional(env.SVC_FLEET_DOCUMENT);
  let fleet: FleetDocument | undefined;
  if (fleetDocumentFile === undefined)
    problems.add('SVC_FLEET_DOCUMENT', 'is missing (exactly one fleet document file)');
  else if (fleetDocumentFile.includes(',')) problems.add('SVC_FLEET_DOCUMENT', 'must name exactly one fleet document');
  else {
    let text: string | undefined;
    try {
      text = fs.readFileSync(fleetDocumentFile, 'utf8');
    } catch {
      problems.add('SVC_FLEET_DOCUMENT', `${fleetDocumentFile} cannot be read`);
    }
    if (text !== undefined) {
      const result = validateFleetDocument(text, { fileName: fleetDocumentFile });
      if (!result.valid || result.fleet === undefined)
        problems.add(
          'SVC_FLEET_DOCUMENT',
          `${fleetDocumentFile} is not a valid fleet document: ${result.findings.map((f) => f.message).join('; ')}`,
        );
      else if (result.fleet.metadata.environment !== config.environment)
        problems.add(
          'SVC_FLEET_DOCUMENT',
          `metadata.environment must equal SVC_ENVIRONMENT (${config.environment}), not ${JSON.stringify(result.fleet.metadata.environment ?? null)} (no development wildcard)`,
        );
      else fleet = result.fleet;
    }
  }
  const bridge = loadBridge(problems, env, config, bindings);
  if (problems.list.length > 0) {
    throw new ConfigError(
      problems.list[0]!.variable,
      `restricted mode cannot start: ${problems.list.map((p) => `${p.variable} ${p.message}`).join('; ')}`,
    );
  }
  return {
    environment: config.environment,
    fleetDocumentFile: fleetDocumentFile!,
    fleet: fleet!,
    auditSigningKey: Buffer.from(key!, 'utf8'),
    auditRetentionMs,
    gitHostApiUrl: gitHostApiUrl!,
    gitHostApp: {
      appId: appId!,
      installationId: installationId!,
      privateKeyFile: appKeyFile!,
      repository: repository!,
    },
    oidc: {
      issuer: issuer!,
      jwksUrl: jwksUrl!,
      audience: intentAudience(config.environment, bindings.intent!),
      bindings: bindings as WorkflowBindings,
    },
    caCertificates,
    bridge,
  };
}
