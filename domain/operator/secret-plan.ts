/**
 * The secret migration plan: every secret key the platform and its apps use, where it lives,
 * whether it is declared, present and protected, and what to do next. Values are never an input,
 * so they can never be an output: the facts carry names, locations, presence and file modes only.
 *
 * Where secrets live:
 * - platform secrets: `SVC_*` environment variables marked secret (`platform/config.ts`);
 * - app secrets: declared in `secrets:` of the spec, valued by one file per key under
 *   `<SVC_DATA_DIR>/secrets/<app>/<KEY>` (checked by the deploy pipeline's inspect step);
 * - scheduler variables: `processes.<p>.schedulerVariables.files`, delivered as private files;
 * - plaintext: spec `env` keys that read like secrets, committed to git with the spec.
 */
import { looksLikeSecretName } from './secret-safety.js';

/** What to do about one key. */
export const SecretAction = {
  none: 'none',
  provideValue: 'provide-value',
  restrictPermissions: 'restrict-permissions',
  moveToSecrets: 'move-to-secrets',
  declare: 'declare',
  verifyProvisioned: 'verify-provisioned',
} as const;
export type SecretAction = (typeof SecretAction)[keyof typeof SecretAction];

/** Where a secret key lives. */
export type SecretLocation = 'platform-environment' | 'app-secret-file' | 'scheduler-variable-file' | 'spec-env';

/** A value file in an app's secrets folder: name and mode only. */
export interface SecretValueFile {
  readonly name: string;
  /** Permission bits, e.g. 0o600. */
  readonly mode: number;
  readonly regular: boolean;
}

/** The secret facts of one app. */
export interface AppSecretFacts {
  readonly app: string;
  /** The folder holding the value files (shown, it is a path not a value). */
  readonly secretsDir: string;
  readonly declared: readonly string[];
  readonly valueFiles: readonly SecretValueFile[];
  /** Environment keys of the spec (`env` or `processes.<p>.env`) with whether they hold a non-empty value. */
  readonly envKeys: readonly { readonly path: string; readonly key: string; readonly hasValue: boolean }[];
  readonly schedulerVariables: readonly {
    readonly process: string;
    readonly key: string;
    readonly destination: string;
  }[];
  /** Keys whose value file the last deploy decrypted from a committed `secrets/<KEY>.age`. @default [] */
  readonly encryptedKeys?: readonly string[];
}

/** A platform variable marked secret. */
export interface PlatformSecretFacts {
  readonly variable: string;
  readonly set: boolean;
  readonly description: string;
}

/** One key of the plan. */
export interface SecretPlanEntry {
  readonly key: string;
  readonly app: string | null;
  readonly location: SecretLocation;
  /** Where exactly: a variable name, a file path, a spec path. Never a value. */
  readonly where: string;
  /** Declared where the platform expects secrets (spec `secrets:`, a secret variable, a scheduler variable). */
  readonly declared: boolean;
  /** A value exists; null when the control plane cannot tell. */
  readonly present: boolean | null;
  /**
   * True when the value is committed to git age-encrypted (`secrets/<KEY>.age`) and decrypted at
   * deploy; false for values held only in plain form (environment, owner-only files, spec env).
   */
  readonly encrypted: boolean;
  /** `owner-only` for files no one else can read; `exposed` otherwise; null when not a file. */
  readonly protection: 'owner-only' | 'exposed' | null;
  /** True when the value sits in git with the spec. */
  readonly committed: boolean;
  readonly action: SecretAction;
  readonly reason: string;
}

/** The plan. */
export interface SecretPlan {
  readonly entries: readonly SecretPlanEntry[];
  readonly summary: Readonly<Record<SecretAction, number>> & { readonly keys: number };
}

function fileEntry(
  app: AppSecretFacts,
  key: string,
  file: SecretValueFile | undefined,
  declared: boolean,
): SecretPlanEntry {
  const where = `${app.secretsDir}/${key}`;
  const encrypted = (app.encryptedKeys ?? []).includes(key);
  const base = {
    key,
    app: app.app,
    location: 'app-secret-file' as const,
    where,
    declared,
    encrypted,
    committed: false,
  };
  if (!file || !file.regular) {
    return {
      ...base,
      present: false,
      protection: null,
      action: 'provide-value',
      reason: `declared in secrets: but ${where} does not exist${file && !file.regular ? ' as a regular file' : ''}; deploys fail at the inspect step until it does`,
    };
  }
  const exposed = (file.mode & 0o077) !== 0;
  if (exposed)
    return {
      ...base,
      present: true,
      protection: 'exposed',
      action: 'restrict-permissions',
      reason: `${where} is readable by others (mode ${file.mode.toString(8).padStart(4, '0')}); chmod 600 it`,
    };
  if (!declared)
    return {
      ...base,
      present: true,
      protection: 'owner-only',
      action: 'declare',
      reason: `${where} exists but the spec does not declare ${key} in secrets:; declare it or remove the file`,
    };
  return {
    ...base,
    present: true,
    protection: 'owner-only',
    action: 'none',
    reason: encrypted
      ? `declared, committed encrypted as secrets/${key}.age, decrypted at deploy and readable by its owner only`
      : 'declared, present and readable by its owner only',
  };
}

/** Builds the plan for the platform and each app, apps in name order, keys in name order. */
export function planSecretMigration(
  platform: readonly PlatformSecretFacts[],
  apps: readonly AppSecretFacts[],
): SecretPlan {
  const entries: SecretPlanEntry[] = [];
  for (const variable of [...platform].sort((a, b) => a.variable.localeCompare(b.variable))) {
    entries.push({
      key: variable.variable,
      app: null,
      location: 'platform-environment',
      where: variable.variable,
      declared: true,
      present: variable.set,
      encrypted: false,
      protection: null,
      committed: false,
      action: 'none',
      reason: variable.set
        ? `${variable.description}; set in the platform's environment`
        : `${variable.description}; not set (optional)`,
    });
  }
  for (const app of [...apps].sort((a, b) => a.app.localeCompare(b.app))) {
    const files = new Map(app.valueFiles.map((f) => [f.name, f]));
    const declared = new Set(app.declared);
    for (const key of [...declared].sort()) entries.push(fileEntry(app, key, files.get(key), true));
    for (const file of [...files.values()].sort((a, b) => a.name.localeCompare(b.name))) {
      if (!declared.has(file.name)) entries.push(fileEntry(app, file.name, file, false));
    }
    for (const variable of app.schedulerVariables) {
      entries.push({
        key: variable.key,
        app: app.app,
        location: 'scheduler-variable-file',
        where: `processes.${variable.process}.schedulerVariables (secrets/${variable.destination} in the allocation)`,
        declared: true,
        present: null,
        encrypted: false,
        protection: 'owner-only',
        committed: false,
        action: 'verify-provisioned',
        reason:
          'delivered as a mode 0400 file from the job-owned variables; the process fails with exit 78 while the value is missing',
      });
    }
    for (const env of app.envKeys) {
      if (!looksLikeSecretName(env.key) || !env.hasValue) continue;
      const alsoDeclared = declared.has(env.key);
      entries.push({
        key: env.key,
        app: app.app,
        location: 'spec-env',
        where: `${env.path}.${env.key}`,
        declared: alsoDeclared,
        present: true,
        encrypted: false,
        protection: null,
        committed: true,
        action: 'move-to-secrets',
        reason: `${env.path}.${env.key} reads like a secret and its value is committed to git with the spec; declare it in secrets:, put the value in ${app.secretsDir}/${env.key}, remove it from env and rotate it`,
      });
    }
  }
  const summary = {
    keys: entries.length,
    none: 0,
    'provide-value': 0,
    'restrict-permissions': 0,
    'move-to-secrets': 0,
    declare: 0,
    'verify-provisioned': 0,
  };
  for (const entry of entries) summary[entry.action] += 1;
  return { entries, summary };
}
