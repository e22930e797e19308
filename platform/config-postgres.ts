/**
 * The settings of the PostgreSQL server of app databases, managed (ADR 0011) or external, part of {@link
 * VARIABLES} in config.ts.
 */
import path from 'node:path';
import { bool, oneOf, optional, port, type VariableSpec } from './config-parsers.js';

/** PostgreSQL settings of {@link SvcConfig}. */
export interface PostgresConfig {
  /**
   * The platform runs its own PostgreSQL server for app databases (in `<dataDir>/postgres`, ADR 0011):
   * true unless `SVC_POSTGRES_HOST` selects an external server or `SVC_POSTGRES_MANAGED=false`.
   */
  readonly postgresManaged: boolean;
  /** External PostgreSQL server for app databases (snapshots, migrations), when not managed. @default 127.0.0.1:5432, user postgres */
  readonly postgresHost: string;
  readonly postgresPort: number;
  readonly postgresUser: string;
  /** File holding the PostgreSQL password; never logged. */
  readonly postgresPasswordFile: string | undefined;
  /** Folder of pg_dump, pg_restore and psql. @default the newest /usr/lib/postgresql/<v>/bin */
  readonly postgresBinDir: string | undefined;
  /** libpq `sslmode` of the external server (restricted mode requires `verify-full`). @default libpq's own (prefer) */
  readonly postgresSslMode: 'disable' | 'prefer' | 'require' | 'verify-ca' | 'verify-full' | undefined;
  /** CA certificate file that verifies the external server's certificate (`sslrootcert`). */
  readonly postgresSslRootCert: string | undefined;
}

export const POSTGRES_VARIABLES = {
  postgresManaged: {
    name: 'SVC_POSTGRES_MANAGED',
    description: 'Run a managed PostgreSQL server for app databases when SVC_POSTGRES_HOST is unset',
    defaultText: 'true (when SVC_POSTGRES_HOST is unset)',
    parse: (raw, env) => bool('SVC_POSTGRES_MANAGED', true)(raw) && optional(env.SVC_POSTGRES_HOST) === undefined,
  },
  postgresHost: {
    name: 'SVC_POSTGRES_HOST',
    description: 'PostgreSQL server of app databases',
    defaultText: '127.0.0.1',
    parse: (raw) => optional(raw) ?? '127.0.0.1',
  },
  postgresPort: {
    name: 'SVC_POSTGRES_PORT',
    description: 'PostgreSQL port',
    defaultText: '5432',
    parse: port('SVC_POSTGRES_PORT', 5432),
  },
  postgresUser: {
    name: 'SVC_POSTGRES_USER',
    description: 'PostgreSQL user for snapshots and migrations',
    defaultText: 'postgres',
    parse: (raw) => optional(raw) ?? 'postgres',
  },
  postgresPasswordFile: {
    name: 'SVC_POSTGRES_PASSWORD_FILE',
    description: 'file holding the PostgreSQL password',
    defaultText: '(none)',
    parse: optional,
  },
  postgresBinDir: {
    name: 'SVC_POSTGRES_BIN_DIR',
    description: 'folder of pg_dump, pg_restore, psql',
    defaultText: '(newest installed)',
    parse: optional,
  },
  postgresSslMode: {
    name: 'SVC_POSTGRES_SSLMODE',
    description: 'libpq sslmode of the external PostgreSQL server (verify-full verifies its certificate and host name)',
    defaultText: '(libpq default)',
    parse: (raw) => {
      const value = optional(raw);
      return value === undefined
        ? undefined
        : oneOf(
            'SVC_POSTGRES_SSLMODE',
            ['disable', 'prefer', 'require', 'verify-ca', 'verify-full'] as const,
            'prefer',
          )(value);
    },
  },
  postgresSslRootCert: {
    name: 'SVC_POSTGRES_SSL_ROOT_CERT',
    description: 'CA certificate file verifying the external PostgreSQL server',
    defaultText: '(none)',
    parse: (raw) => {
      const value = optional(raw);
      return value === undefined ? undefined : path.resolve(value);
    },
  },
} satisfies { [K in keyof PostgresConfig]: VariableSpec<PostgresConfig[K]> };
