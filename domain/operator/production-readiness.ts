/**
 * Production admission summary: named checks over secret-free facts, each passing or failing with
 * a reason. Required checks decide `ready`; advisory checks are shown but do not block.
 */
import type { SecretPlan } from './secret-plan.js';

/** Secret-free facts the checks read. */
export interface ReadinessFacts {
  readonly profile: string;
  readonly apiTokenConfigured: boolean;
  readonly requireExplicitAuth: boolean;
  readonly tunnel: {
    readonly configFile: string;
    readonly configWritten: boolean;
    readonly credentialsFile: string;
    readonly credentialsPresent: boolean;
    readonly lastError: string | null;
  };
  readonly webhookSecretConfigured: boolean;
  /** Apps with `repo.autoDeploy: true`. */
  readonly autoDeployApps: readonly string[];
  /** Apps that declare a database, with their snapshot state and policy. */
  readonly databases: readonly {
    readonly app: string;
    readonly database: string;
    readonly snapshots: number;
    readonly keep: number;
    readonly exportBucket: string | null;
    readonly preRestore: boolean;
  }[];
  readonly objectStorageConfigured: boolean;
  readonly postgresPasswordFileConfigured: boolean;
  readonly eventSinkConfigured: boolean;
  readonly notificationChannels: number;
  /** Apps with `deploy: true` whose `build.image` is not pinned by digest. */
  readonly unpinnedApps: readonly string[];
  readonly operationWorkerEnabled: boolean;
  readonly secretSummary: SecretPlan['summary'];
}

/** One check. */
export interface ReadinessCheck {
  readonly id: string;
  readonly title: string;
  /** `required` checks decide readiness; `advisory` ones inform. */
  readonly level: 'required' | 'advisory';
  readonly status: 'pass' | 'fail';
  readonly reason: string;
}

/** The admission summary. */
export interface ProductionReadiness {
  readonly ready: boolean;
  readonly profile: string;
  readonly summary: { readonly passed: number; readonly failed: number; readonly requiredFailed: number };
  readonly checks: readonly ReadinessCheck[];
}

function check(
  id: string,
  title: string,
  level: ReadinessCheck['level'],
  pass: boolean,
  passReason: string,
  failReason: string,
): ReadinessCheck {
  return { id, title, level, status: pass ? 'pass' : 'fail', reason: pass ? passReason : failReason };
}

function list(names: readonly string[]): string {
  return names.length <= 5 ? names.join(', ') : `${names.slice(0, 5).join(', ')} and ${names.length - 5} more`;
}

/** Evaluates every check. */
export function evaluateReadiness(facts: ReadinessFacts): ProductionReadiness {
  const noBackup = facts.databases.filter((d) => d.snapshots === 0).map((d) => d.app);
  const keepZero = facts.databases.filter((d) => d.keep < 1).map((d) => d.app);
  const notExported = facts.databases.filter((d) => d.exportBucket === null).map((d) => d.app);
  const noSafety = facts.databases.filter((d) => !d.preRestore).map((d) => d.app);
  const missingSecrets = facts.secretSummary['provide-value'];
  const exposedSecrets = facts.secretSummary['restrict-permissions'];
  const plaintext = facts.secretSummary['move-to-secrets'];
  const tunnel = facts.tunnel;
  const checks: ReadinessCheck[] = [
    check(
      'profile',
      'Production profile',
      'required',
      facts.profile === 'production',
      'SVC_PROFILE=production: strict admission of deploys and preflights is on',
      `SVC_PROFILE=${facts.profile}; production admission (digest-pinned images, strict secrets) is off`,
    ),
    check(
      'auth.token',
      'Control token configured',
      'required',
      facts.apiTokenConfigured,
      'SVC_API_TOKEN is set; protected routes need Authorization: Bearer',
      'SVC_API_TOKEN is not set: the API is open to anyone who can reach it',
    ),
    check(
      'auth.explicit',
      'Explicit authentication',
      'required',
      facts.requireExplicitAuth,
      'SVC_REQUIRE_EXPLICIT_AUTH=true: metrics and the service manifest need a caller too',
      'SVC_REQUIRE_EXPLICIT_AUTH is false: /metrics and the service manifest are open',
    ),
    check(
      'tunnel.config',
      'Edge tunnel config',
      'required',
      tunnel.configWritten && tunnel.credentialsPresent && tunnel.lastError === null,
      `${tunnel.configFile} is written and the credentials file exists`,
      !tunnel.configWritten
        ? `${tunnel.configFile} has not been written yet`
        : !tunnel.credentialsPresent
          ? `the tunnel credentials file ${tunnel.credentialsFile} does not exist (SVC_TUNNEL_CREDENTIALS_FILE)`
          : `the last routing reconcile failed: ${tunnel.lastError}`,
    ),
    check(
      'webhooks.secret',
      'Push webhook secret',
      facts.autoDeployApps.length > 0 ? 'required' : 'advisory',
      facts.webhookSecretConfigured,
      'SVC_WEBHOOK_SECRET is set: push deliveries are verified',
      facts.autoDeployApps.length > 0
        ? `SVC_WEBHOOK_SECRET is not set but ${list(facts.autoDeployApps)} deploy on push: every delivery is refused`
        : 'SVC_WEBHOOK_SECRET is not set: push webhooks are refused (no app deploys on push)',
    ),
    check(
      'backups.snapshots',
      'Every app database has a snapshot',
      'required',
      noBackup.length === 0,
      facts.databases.length === 0
        ? 'no app declares a database'
        : `all ${facts.databases.length} app database(s) have at least one local snapshot`,
      `no snapshot yet for ${list(noBackup)}: take one (POST /api/v1/apps/{id}/snapshots)`,
    ),
    check(
      'backups.policy',
      'Snapshot retention keeps a restore point',
      'required',
      keepZero.length === 0,
      facts.databases.length === 0 ? 'no app declares a database' : 'every snapshot policy keeps at least one dump',
      `snapshots.keep is 0 for ${list(keepZero)}: retention would delete every restore point`,
    ),
    check(
      'backups.offsite',
      'Snapshots exported off the host',
      'advisory',
      facts.databases.length === 0 || (notExported.length === 0 && facts.objectStorageConfigured),
      facts.databases.length === 0
        ? 'no app declares a database'
        : 'every app database names snapshots.exportBucket and object storage is configured',
      notExported.length > 0
        ? `no snapshots.exportBucket for ${list(notExported)}: dumps exist on this host only`
        : 'object storage is not configured (SVC_S3_ENDPOINT, SVC_S3_ACCESS_KEY, SVC_S3_SECRET_KEY)',
    ),
    check(
      'backups.pre-restore',
      'Safety snapshot before restores',
      'advisory',
      noSafety.length === 0,
      facts.databases.length === 0
        ? 'no app declares a database'
        : 'every app database takes a safety snapshot before a restore',
      `snapshots.preRestore is false for ${list(noSafety)}`,
    ),
    check(
      'postgres.password',
      'PostgreSQL password from a file',
      'advisory',
      facts.databases.length === 0 || facts.postgresPasswordFileConfigured,
      facts.databases.length === 0 ? 'no app declares a database' : 'SVC_POSTGRES_PASSWORD_FILE is set',
      'SVC_POSTGRES_PASSWORD_FILE is not set: the snapshot tools connect without a password',
    ),
    check(
      'secrets.values',
      'Declared secrets have values',
      'required',
      missingSecrets === 0,
      'every declared secret has a value file',
      `${missingSecrets} declared secret(s) have no value file: deploys fail at inspect (GET /api/secrets/migration-plan)`,
    ),
    check(
      'secrets.protection',
      'Secret files are owner-only',
      'required',
      exposedSecrets === 0,
      'every secret value file is readable by its owner only',
      `${exposedSecrets} secret value file(s) are readable by others`,
    ),
    check(
      'secrets.plaintext',
      'No secrets in committed env',
      'advisory',
      plaintext === 0,
      'no spec env key reads like a secret',
      `${plaintext} spec env key(s) read like secrets and are committed to git`,
    ),
    check(
      'images.pinned',
      'Images pinned by digest',
      'required',
      facts.unpinnedApps.length === 0,
      'every deployed app names build.image@sha256:<digest>',
      `${list(facts.unpinnedApps)} deploy without an image@sha256 digest; the production profile refuses such deploys`,
    ),
    check(
      'events.delivery',
      'Incidents reach someone',
      'advisory',
      facts.eventSinkConfigured || facts.notificationChannels > 0,
      facts.eventSinkConfigured
        ? 'an event sink is configured'
        : `${facts.notificationChannels} notification channel(s)`,
      'no event sink (SVC_EVENT_SINK_URL) and no notification channel: incidents are only visible in the API',
    ),
    check(
      'operations.worker',
      'Operation worker running',
      'required',
      facts.operationWorkerEnabled,
      'the operation worker runs deploys, restores and migrations',
      'SVC_OPERATION_WORKER=false: queued deploys and restores never run',
    ),
  ];
  const failed = checks.filter((c) => c.status === 'fail');
  const requiredFailed = failed.filter((c) => c.level === 'required').length;
  return {
    ready: requiredFailed === 0,
    profile: facts.profile,
    summary: { passed: checks.length - failed.length, failed: failed.length, requiredFailed },
    checks,
  };
}
