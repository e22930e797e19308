/**
 * Reads the facts of the secret migration plan: declared keys and spec env keys from each app's
 * spec, and the names and modes of the value files in `<data dir>/secrets/<app>/` (lstat only:
 * no value file is ever opened).
 */
import fs from 'node:fs';
import path from 'node:path';
import {
  planSecretMigration,
  type AppSecretFacts,
  type PlatformSecretFacts,
  type SecretPlan,
  type SecretValueFile,
} from '../../domain/operator/index.js';
import type { Db } from '../../store/database.js';
import { listApps } from '../../store/control/apps.js';
import { readEncryptedSources } from '../secrets/encrypted-secrets.js';

/** Where the secret facts come from. */
export interface SecretSources {
  readonly db: Db;
  readonly dataDir: string;
  readonly platformSecrets: readonly PlatformSecretFacts[];
}

/** The folder of an app's secret value files (the deploy pipeline's inspect step reads the same). */
export function appSecretsDir(dataDir: string, app: string): string {
  return path.join(dataDir, 'secrets', app);
}

function valueFiles(dir: string): SecretValueFile[] {
  let names: string[];
  try {
    names = fs.readdirSync(dir);
  } catch {
    return [];
  }
  const out: SecretValueFile[] = [];
  for (const name of names) {
    const stat = fs.lstatSync(path.join(dir, name), { throwIfNoEntry: false });
    if (stat) out.push({ name, mode: stat.mode & 0o777, regular: stat.isFile() });
  }
  return out;
}

function envKeys(env: Readonly<Record<string, string>>, at: string): AppSecretFacts['envKeys'] {
  return Object.entries(env).map(([key, value]) => ({ path: at, key, hasValue: value.trim() !== '' }));
}

/** The facts of every app (optionally one). */
export function readAppSecretFacts(sources: SecretSources, filter: { readonly app?: string } = {}): AppSecretFacts[] {
  const out: AppSecretFacts[] = [];
  for (const row of listApps(sources.db)) {
    const spec = row.spec;
    if (!spec || row.deletedAt !== null || (filter.app !== undefined && row.name !== filter.app)) continue;
    const dir = appSecretsDir(sources.dataDir, row.name);
    out.push({
      app: row.name,
      secretsDir: dir,
      declared: spec.secrets,
      valueFiles: valueFiles(dir),
      envKeys: [
        ...envKeys(spec.env, 'env'),
        ...Object.entries(spec.processes).flatMap(([name, p]) => envKeys(p.env, `processes.${name}.env`)),
      ],
      schedulerVariables: Object.entries(spec.processes).flatMap(([name, p]) =>
        (p.schedulerVariables?.files ?? []).map((file) => ({
          process: name,
          key: file.key,
          destination: file.destination,
        })),
      ),
      encryptedKeys: Object.keys(readEncryptedSources(sources.dataDir, row.name)),
    });
  }
  return out;
}

/** The secret migration plan; with an app filter, only that app's keys (no platform keys). */
export function readSecretPlan(sources: SecretSources, filter: { readonly app?: string } = {}): SecretPlan {
  return planSecretMigration(
    filter.app === undefined ? sources.platformSecrets : [],
    readAppSecretFacts(sources, filter),
  );
}
