/**
 * App databases on the managed PostgreSQL server: each app that declares
 * `infrastructure.postgres.database` gets that database, owned by its own login role with a generated
 * password, and the connection settings the translation turns into `DATABASE_URL`, `PGHOST`, `PGPORT`,
 * `PGDATABASE`, `PGUSER` and `PGPASSFILE` (ADR 0012). The password stays in the app's 0600 password
 * file; the server only ever receives its SCRAM verifier.
 */
import type { CanonicalAppSpec } from '../../domain/spec/index.js';
import type { TranslationInfrastructure } from '../../domain/translate/index.js';
import type { Logger } from '../../platform/logger.js';
import type { AppCredentials } from '../../platform/postgres/app-credentials.js';
import type { PostgresTools } from '../../platform/postgres/postgres-tools.js';
import { scramSha256Verifier } from '../../platform/postgres/scram-verifier.js';
import type { Db } from '../../store/database.js';
import { getApp } from '../../store/control/apps.js';

export interface AppDatabasesOptions {
  readonly db: Db;
  /** Tools connected to the managed server as its superuser. */
  readonly tools: PostgresTools;
  readonly credentials: AppCredentials;
  /** Where apps reach the server (loopback TCP). */
  readonly host: string;
  readonly port: number;
  readonly logger: Logger;
}

/** Provisions app databases and says how apps reach them. */
export class AppDatabases {
  /** `<app>/<database>` pairs provisioned by this process (the work is idempotent; this only saves round trips). */
  readonly #ready = new Set<string>();
  /** One provisioning at a time per app. */
  readonly #running = new Map<string, Promise<unknown>>();

  constructor(private readonly options: AppDatabasesOptions) {}

  /** The connection settings of an app whose spec declares a database, after creating its role and database when needed. */
  async settingsFor(app: string, spec: CanonicalAppSpec): Promise<TranslationInfrastructure> {
    const database = spec.infrastructure?.postgres?.database;
    if (database === undefined) return {};
    const credential = await this.ensure(app, database);
    return {
      postgres: {
        host: this.options.host,
        port: this.options.port,
        user: credential.role,
        passwordFile: credential.passwordFile,
      },
    };
  }

  /** Creates the app's role and database when the app's current spec declares one; nothing otherwise. */
  async prepare(app: string): Promise<void> {
    const spec = getApp(this.options.db, app)?.spec;
    const database = spec?.infrastructure?.postgres?.database;
    if (database !== undefined) await this.ensure(app, database);
  }

  /** Creates (once) the role and database of `app`; returns the role and its password file. */
  async ensure(app: string, database: string): Promise<{ role: string; passwordFile: string }> {
    const previous = this.#running.get(app) ?? Promise.resolve();
    const next = previous.catch(() => undefined).then(() => this.#ensure(app, database));
    this.#running.set(app, next);
    try {
      return await next;
    } finally {
      if (this.#running.get(app) === next) this.#running.delete(app);
    }
  }

  async #ensure(app: string, database: string): Promise<{ role: string; passwordFile: string }> {
    const credential = this.options.credentials.ensure(app, database);
    const key = `${app}/${database}`;
    if (!this.#ready.has(key)) {
      const { createdDatabase } = await this.options.tools.ensureRoleAndDatabase(
        credential.role,
        scramSha256Verifier(credential.password),
        database,
      );
      this.#ready.add(key);
      this.options.logger.info(
        { app, database, role: credential.role, createdDatabase },
        createdDatabase ? 'app database created' : 'app database ready',
      );
    }
    return { role: credential.role, passwordFile: credential.passwordFile };
  }
}
