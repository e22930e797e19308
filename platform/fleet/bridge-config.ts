/**
 * The external-admission bridge settings of restricted mode (`SVC_EXTERNAL_FLEET_*`): all or none,
 * checked as a whole, with the read-only catalog of the one app it admits (docs/restricted-mode.md).
 */
import fs from 'node:fs';
import net from 'node:net';
import path from 'node:path';
import { parse as parseYaml } from 'yaml';
import { isPinnedImage } from '../../domain/fleet/admission-identity.js';
import type { WorkflowBindings } from '../../domain/fleet/workflow-identity.js';
import type { AdmissionBindings } from '../../domain/fleet/receipt-v4.js';
import { optional, type Env } from '../config-parsers.js';
import type { SvcConfig } from '../config.js';
import { httpsOrigin, NAME, ownerOnlyFile, required, SHA256, type Problems } from './restricted-checks.js';

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

/** The bridge settings, when any is set: all of them, checked as a whole; undefined with problems otherwise. */
export function loadBridge(
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
