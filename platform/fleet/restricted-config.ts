/**
 * Restricted (authority-only) mode configuration: every start-up requirement of the spec checked
 * one by one, and the external-admission bridge settings checked as a whole. Problems are
 * collected, not thrown at the first one, so a single failed start names every missing or
 * inconsistent setting (docs/restricted-mode.md, ADR 0150).
 */
import fs from 'node:fs';
import net from 'node:net';
import path from 'node:path';
import { parse as parseYaml } from 'yaml';
import { ConfigError } from '../../domain/errors.js';
import { isPinnedImage } from '../../domain/fleet/admission-identity.js';
import { intentAudience, type WorkflowBindings } from '../../domain/fleet/workflow-identity.js';
import { validateFleetDocument } from '../../domain/spec/validate-fleet-document.js';
import type { AdmissionBindings } from '../../domain/fleet/receipt-v4.js';
import type { FleetDocument } from '../../schemas/types.generated.js';
import { durationMs, optional, type Env } from '../config-parsers.js';
import type { SvcConfig } from '../config.js';

/** The bridge's settings (all or none). */
export interface BridgeConfig extends AdmissionBindings {
  readonly bootstrapSignerRef: string;
  /** The evidence service's single HTTPS origin. */
  readonly verifierUrl: string;
  readonly evidenceAllowedCidrs: readonly string[];
  /** Read from `_VERIFIER_TOKEN_FILE`; never logged. */
  readonly verifierToken: string;
  /** Read from `_EVIDENCE_REGISTRATION_TOKEN_FILE`; never logged. */
  readonly registrationToken: string;
  readonly verifierAppId: string;
  readonly installationId: string;
  readonly privateKeyFile: string;
  readonly repositoryIds: readonly string[];
  readonly cliPath: string;
  readonly publicBaseUrl: string;
  /** The one pinned sample app of the read-only catalog. */
  readonly catalog: { readonly app: string; readonly image: string; readonly repository: string };
}

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

/** Every bridge variable, with the suffix after `SVC_EXTERNAL_FLEET_`. */
export const BRIDGE_VARIABLES = [
  'ADMISSION_APP',
  'NAMESPACE',
  'MIGRATION_JOB_ID',
  'MIGRATION_HCL_SHA256',
  'RUNTIME_JOB_ID',
  'RUNTIME_HCL_SHA256',
  'BOOTSTRAP_SIGNER_REF',
  'VERIFIER_URL',
  'EVIDENCE_ALLOWED_CIDRS',
  'VERIFIER_TOKEN_FILE',
  'EVIDENCE_REGISTRATION_TOKEN_FILE',
  'GITHUB_VERIFIER_APP_ID',
  'INSTALLATION_ID',
  'PRIVATE_KEY_FILE',
  'REPOSITORY_IDS',
  'GITHUB_CLI_PATH',
  'PUBLIC_BASE_URL',
].map((suffix) => `SVC_EXTERNAL_FLEET_${suffix}`);

const SHA256 = /^[0-9a-f]{64}$/;
const NAME = /^[A-Za-z0-9][A-Za-z0-9._-]{0,127}$/;
const REPOSITORY = /^[A-Za-z0-9][A-Za-z0-9-]{0,38}\/[A-Za-z0-9._-]{1,100}$/;

class Problems {
  readonly list: { variable: string; message: string }[] = [];
  add(variable: string, message: string): void {
    this.list.push({ variable, message });
  }
}

/** A regular, owner-only file (no group or other permission bits); its content, or undefined with a problem. */
function ownerOnlyFile(problems: Problems, variable: string, file: string | undefined): string | undefined {
  if (file === undefined) return (problems.add(variable, 'is missing'), undefined);
  if (!path.isAbsolute(file)) return (problems.add(variable, 'must be an absolute path'), undefined);
  let stat: fs.Stats;
  try {
    stat = fs.lstatSync(file);
  } catch {
    return (problems.add(variable, `${file} cannot be read`), undefined);
  }
  if (!stat.isFile()) return (problems.add(variable, `${file} is not a regular file`), undefined);
  if ((stat.mode & 0o077) !== 0)
    return (
      problems.add(variable, `${file} must be owner-only (mode 0600 or 0400), not ${(stat.mode & 0o777).toString(8)}`),
      undefined
    );
  const content = fs.readFileSync(file, 'utf8').trim();
  if (content === '') return (problems.add(variable, `${file} is empty`), undefined);
  return content;
}

function httpsOrigin(
  problems: Problems,
  variable: string,
  raw: string | undefined,
  allowPath = false,
): string | undefined {
  if (raw === undefined) return (problems.add(variable, 'is missing'), undefined);
  let url: URL;
  try {
    url = new URL(raw);
  } catch {
    return (problems.add(variable, `"${raw}" is not a URL`), undefined);
  }
  if (url.protocol !== 'https:') return (problems.add(variable, 'must be an https URL'), undefined);
  if (url.username !== '' || url.password !== '' || url.search !== '' || url.hash !== '')
    return (problems.add(variable, 'must carry no credentials, query or fragment'), undefined);
  if (!allowPath && url.pathname !== '/')
    return (problems.add(variable, 'must be a single origin (no path)'), undefined);
  return allowPath ? raw.replace(/\/+$/, '') : url.origin;
}

function required(problems: Problems, env: Env, variable: string, pattern?: RegExp, rule?: string): string | undefined {
  const value = optional(env[variable]);
  if (value === undefined) return (problems.add(variable, 'is missing'), undefined);
  if (pattern !== undefined && !pattern.test(value))
    return (problems.add(variable, `"${value}" must be ${rule}`), undefined);
  return value;
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

function loadBridge(
  problems: Problems,
  env: Env,
  config: SvcConfig,
  bindings: Partial<WorkflowBindings>,
): BridgeConfig | undefined {
  const set = BRIDGE_VARIABLES.filter((name) => optional(env[name]) !== undefined);
  if (set.length === 0) return undefined;
  const v = (suffix: string) => `SVC_EXTERNAL_FLEET_${suffix}`;
  const start = problems.list.length;
  const app = required(problems, env, v('ADMISSION_APP'), NAME, 'an app name');
  const namespace = required(problems, env, v('NAMESPACE'), NAME, 'a namespace name');
  const migrationJobId = required(problems, env, v('MIGRATION_JOB_ID'), NAME, 'a job id');
  const migrationHcl = required(problems, env, v('MIGRATION_HCL_SHA256'), SHA256, 'a lower-case SHA-256 hex digest');
  const runtimeJobId = required(problems, env, v('RUNTIME_JOB_ID'), NAME, 'a job id');
  const runtimeHcl = required(problems, env, v('RUNTIME_HCL_SHA256'), SHA256, 'a lower-case SHA-256 hex digest');
  if (migrationJobId !== undefined && migrationJobId === runtimeJobId)
    problems.add(v('RUNTIME_JOB_ID'), 'must differ from SVC_EXTERNAL_FLEET_MIGRATION_JOB_ID');
  if (migrationHcl !== undefined && migrationHcl === runtimeHcl)
    problems.add(v('RUNTIME_HCL_SHA256'), 'must differ from SVC_EXTERNAL_FLEET_MIGRATION_HCL_SHA256');
  const signer = required(
    problems,
    env,
    v('BOOTSTRAP_SIGNER_REF'),
    /^[A-Za-z0-9][A-Za-z0-9-]{0,38}\/[A-Za-z0-9._-]{1,100}\/\.github\/workflows\/[A-Za-z0-9._-]+\.ya?ml@[0-9a-f]{40}$/,
    'owner/repo/.github/workflows/<file>@<40-character commit>',
  );
  if (
    signer !== undefined &&
    bindings.repository !== undefined &&
    signer.startsWith(`${bindings.repository}/${bindings.workflow ?? ''}@`)
  )
    problems.add(v('BOOTSTRAP_SIGNER_REF'), 'must not be the release signer workflow bound by SVC_FLEET_OIDC_*');
  const verifierUrl = httpsOrigin(problems, v('VERIFIER_URL'), optional(env[v('VERIFIER_URL')]));
  const cidrs = (optional(env[v('EVIDENCE_ALLOWED_CIDRS')]) ?? '')
    .split(',')
    .map((c) => c.trim())
    .filter((c) => c !== '');
  if (cidrs.length === 0)
    problems.add(v('EVIDENCE_ALLOWED_CIDRS'), 'is missing (comma-separated CIDRs the evidence service may resolve to)');
  for (const cidr of cidrs) {
    const [address = '', prefix = ''] = cidr.split('/');
    const family = net.isIP(address);
    if (family === 0 || !/^\d+$/.test(prefix) || Number(prefix) > (family === 6 ? 128 : 32))
      problems.add(v('EVIDENCE_ALLOWED_CIDRS'), `"${cidr}" is not a CIDR`);
  }
  const verifierTokenFile = optional(env[v('VERIFIER_TOKEN_FILE')]);
  const registrationTokenFile = optional(env[v('EVIDENCE_REGISTRATION_TOKEN_FILE')]);
  const verifierToken = ownerOnlyFile(problems, v('VERIFIER_TOKEN_FILE'), verifierTokenFile);
  const registrationToken = ownerOnlyFile(problems, v('EVIDENCE_REGISTRATION_TOKEN_FILE'), registrationTokenFile);
  if (
    verifierTokenFile !== undefined &&
    registrationTokenFile !== undefined &&
    path.resolve(verifierTokenFile) === path.resolve(registrationTokenFile)
  )
    problems.add(
      v('EVIDENCE_REGISTRATION_TOKEN_FILE'),
      'must be a different file from SVC_EXTERNAL_FLEET_VERIFIER_TOKEN_FILE',
    );
  else if (verifierToken !== undefined && verifierToken === registrationToken)
    problems.add(
      v('EVIDENCE_REGISTRATION_TOKEN_FILE'),
      'must hold a different token from SVC_EXTERNAL_FLEET_VERIFIER_TOKEN_FILE',
    );
  const verifierAppId = required(problems, env, v('GITHUB_VERIFIER_APP_ID'), /^\d+$/, 'a numeric app id');
  const installationId = required(problems, env, v('INSTALLATION_ID'), /^\d+$/, 'a numeric installation id');
  const privateKeyFile = optional(env[v('PRIVATE_KEY_FILE')]);
  ownerOnlyFile(problems, v('PRIVATE_KEY_FILE'), privateKeyFile);
  const repositoryIds = (optional(env[v('REPOSITORY_IDS')]) ?? '')
    .split(',')
    .map((c) => c.trim())
    .filter((c) => c !== '');
  if (repositoryIds.length === 0)
    problems.add(v('REPOSITORY_IDS'), 'is missing (the fleet and artifact repository ids)');
  else if (
    repositoryIds.length !== 2 ||
    !repositoryIds.every((id) => /^\d+$/.test(id)) ||
    repositoryIds[0] === repositoryIds[1]
  )
    problems.add(
      v('REPOSITORY_IDS'),
      'must list exactly two distinct numeric repository ids (the fleet and artifact repositories)',
    );
  const cliPath = optional(env[v('GITHUB_CLI_PATH')]);
  if (cliPath === undefined) problems.add(v('GITHUB_CLI_PATH'), 'is missing');
  else if (!path.isAbsolute(cliPath))
    problems.add(v('GITHUB_CLI_PATH'), 'must be an absolute path (it is run without a shell)');
  else {
    try {
      fs.accessSync(cliPath, fs.constants.X_OK);
      if (!fs.statSync(cliPath).isFile()) problems.add(v('GITHUB_CLI_PATH'), `${cliPath} is not a file`);
    } catch {
      problems.add(v('GITHUB_CLI_PATH'), `${cliPath} is not an executable file`);
    }
  }
  const publicBaseUrl = httpsOrigin(problems, v('PUBLIC_BASE_URL'), optional(env[v('PUBLIC_BASE_URL')]), true);
  const catalog = app === undefined ? undefined : readCatalog(problems, config.appsDir, app);
  if (problems.list.length > start) return undefined;
  return {
    app: app!,
    namespace: namespace!,
    migrationJobId: migrationJobId!,
    migrationHclSha256: migrationHcl!,
    runtimeJobId: runtimeJobId!,
    runtimeHclSha256: runtimeHcl!,
    bootstrapSignerRef: signer!,
    verifierUrl: verifierUrl!,
    evidenceAllowedCidrs: cidrs,
    verifierToken: verifierToken!,
    registrationToken: registrationToken!,
    verifierAppId: verifierAppId!,
    installationId: installationId!,
    privateKeyFile: privateKeyFile!,
    repositoryIds,
    cliPath: cliPath!,
    publicBaseUrl: publicBaseUrl!,
    catalog: catalog!,
  };
}

/**
 * The bridge's catalog: a readable, read-only SVC_APPS_DIR holding exactly one app spec, `deploy:
 * false`, named by ADMISSION_APP, with a canonical source (`repo.url` https://host/owner/name) and a
 * digest-pinned `build.image`.
 */
function readCatalog(problems: Problems, appsDir: string, app: string): BridgeConfig['catalog'] | undefined {
  let entries: fs.Dirent[];
  try {
    entries = fs.readdirSync(appsDir, { withFileTypes: true });
  } catch {
    return (problems.add('SVC_APPS_DIR', `${appsDir} cannot be read (the external admission catalog)`), undefined);
  }
  if ((fs.statSync(appsDir).mode & 0o222) !== 0)
    problems.add('SVC_APPS_DIR', `${appsDir} must be read-only for the bridge (no write permission bits)`);
  const specs = entries
    .filter((e) => e.isDirectory() && fs.existsSync(path.join(appsDir, e.name, 'infraspec.yaml')))
    .map((e) => e.name);
  if (specs.length !== 1)
    return (
      problems.add(
        'SVC_APPS_DIR',
        `must hold exactly one app spec for the bridge, found ${specs.length}${specs.length > 0 ? ` (${specs.join(', ')})` : ''}`,
      ),
      undefined
    );
  if (specs[0] !== app)
    return (
      problems.add('SVC_EXTERNAL_FLEET_ADMISSION_APP', `names ${app}, but the catalog's one app is ${specs[0]}`),
      undefined
    );
  let spec: Record<string, any>;
  try {
    spec = parseYaml(fs.readFileSync(path.join(appsDir, app, 'infraspec.yaml'), 'utf8')) as Record<string, any>;
  } catch (error) {
    return (
      problems.add('SVC_APPS_DIR', `${app}/infraspec.yaml cannot be parsed: ${(error as Error).message}`),
      undefined
    );
  }
  const before = problems.list.length;
  if (spec?.deploy !== false)
    problems.add(
      'SVC_APPS_DIR',
      `${app}/infraspec.yaml must say deploy: false (the platform never deploys the catalog app itself)`,
    );
  const url = typeof spec?.repo?.url === 'string' ? (spec.repo.url as string) : '';
  const source = /^https:\/\/[a-z0-9.-]+\/([A-Za-z0-9][A-Za-z0-9-]{0,38}\/[A-Za-z0-9._-]{1,100})$/.exec(url);
  if (source === null || url.endsWith('.git'))
    problems.add(
      'SVC_APPS_DIR',
      `${app}/infraspec.yaml repo.url must be the canonical source https://<host>/<owner>/<name> (no .git, credentials or trailing slash)`,
    );
  const image: unknown = spec?.build?.image;
  if (!isPinnedImage(image))
    problems.add('SVC_APPS_DIR', `${app}/infraspec.yaml build.image must be digest-pinned (name@sha256:<64 hex>)`);
  if (problems.list.length > before) return undefined;
  return { app, image: image as string, repository: source![1]! };
}
