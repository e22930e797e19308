/**
 * The infrastructure settings an app's processes receive: its database on the managed PostgreSQL
 * server and its S3 proxy key, each made ready for the app's own user (ADR 0190).
 */
import type { InfrastructureSettings } from '../../controllers/apps/app-reconciler.js';
import type { AppDatabases } from '../../controllers/postgres/app-databases.js';
import type { CanonicalAppSpec } from '../../domain/spec/index.js';
import type { AppIdentities } from '../../platform/local-scheduler/index.js';
import type { S3ProxyWiring } from './s3-proxy.js';

/** The reconcilers' per-app infrastructure settings, or undefined when neither app databases nor the S3 proxy run. */
export function appInfrastructure(parts: {
  readonly appDatabases: AppDatabases | undefined;
  readonly s3Proxy: S3ProxyWiring | undefined;
  readonly identities: AppIdentities | undefined;
}): InfrastructureSettings | undefined {
  const { appDatabases, s3Proxy, identities } = parts;
  if (!appDatabases && !s3Proxy) return undefined;
  // The credential files' owner is the app's user: made ready without blocking first (ADR 0190).
  return async (app: string, spec: CanonicalAppSpec) => {
    const database = appDatabases !== undefined && spec.infrastructure?.postgres?.database !== undefined;
    const buckets = s3Proxy !== undefined && (spec.infrastructure?.objectStorage?.buckets?.length ?? 0) > 0;
    if (database || buckets) await identities?.prepare(app, undefined);
    return {
      ...(appDatabases ? await appDatabases.settingsFor(app, spec) : {}),
      ...(s3Proxy ? s3Proxy.settingsFor(app, spec) : {}),
    };
  };
}
