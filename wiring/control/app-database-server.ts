/**
 * The PostgreSQL server of app databases (managed by the control plane, or external) and the app
 * databases made on the managed one, with credential files owned by each app's user (ADR 0047).
 */
import type { SvcConfig } from '../../platform/config.js';
import type { Logger } from '../../platform/logger.js';
import { PostgresTools } from '../../platform/postgres/postgres-tools.js';
import { ManagedPostgres } from '../../platform/postgres/managed-postgres.js';
import { AppCredentials, type CredentialOwner } from '../../platform/postgres/app-credentials.js';
import { AppDatabases } from '../../controllers/postgres/app-databases.js';
import type { Db } from '../../store/database.js';

/** The server of app databases: its tools, and the managed server when the control plane runs it. */
export interface AppDatabaseServer {
  readonly tools: PostgresTools;
  readonly managed?: ManagedPostgres;
}

/** The PostgreSQL server of app databases: the managed one (started here), or the external one SVC_POSTGRES_* names. */
export async function startAppDatabaseServer(
  config: SvcConfig,
  hostedDir: string,
  log: Logger,
): Promise<AppDatabaseServer> {
  if (!config.postgresManaged) {
    return {
      tools: new PostgresTools({
        host: config.postgresHost,
        port: config.postgresPort,
        user: config.postgresUser,
        ...(config.postgresPasswordFile === undefined ? {} : { passwordFile: config.postgresPasswordFile }),
        ...(config.postgresBinDir === undefined ? {} : { binDir: config.postgresBinDir }),
      }),
    };
  }
  const managed = await ManagedPostgres.open({
    dataDir: hostedDir,
    logger: log,
    ...(config.postgresBinDir === undefined ? {} : { binDir: config.postgresBinDir }),
  });
  const connection = managed.connection();
  return {
    managed,
    tools: new PostgresTools({
      host: connection.socketDir,
      port: connection.port,
      user: connection.user,
      passwordFile: connection.passwordFile,
      binDir: connection.binDir,
      asDatabaseOwner: true,
    }),
  };
}
/** The app databases on the managed server (none with an external one); `owner` owns each app's credential files. */
export function appDatabasesOn(
  database: AppDatabaseServer,
  parts: { readonly db: Db; readonly owner: CredentialOwner | undefined; readonly logger: Logger },
): AppDatabases | undefined {
  return database.managed
    ? new AppDatabases({
        db: parts.db,
        tools: database.tools,
        credentials: new AppCredentials(database.managed.layout.credentials, parts.owner),
        host: database.managed.connection().host,
        port: database.managed.connection().port,
        logger: parts.logger.child({ component: 'app-databases' }),
      })
    : undefined;
}
