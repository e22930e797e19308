/**
 * Where the PostgreSQL server programs are: the Debian packages put each major version under
 * `/usr/lib/postgresql/<major>/bin`. A missing server is a clear error naming the package to install.
 */
import fs from 'node:fs';
import path from 'node:path';
import { UnavailableError } from '../../domain/errors.js';

/** Root of the Debian PostgreSQL installs. */
export const DEBIAN_POSTGRES_ROOT = '/usr/lib/postgresql';

/** The command that installs the server programs on Debian. */
export const POSTGRES_INSTALL_COMMAND = 'apt-get install postgresql';

/** Server programs the managed server runs. */
const SERVER_PROGRAMS = ['initdb', 'postgres', 'pg_ctl', 'psql', 'pg_dump', 'pg_restore'] as const;

/** Installed major versions that hold every server program, newest first. */
export function installedPostgresVersions(root = DEBIAN_POSTGRES_ROOT): string[] {
  if (!fs.existsSync(root)) return [];
  return fs
    .readdirSync(root)
    .filter((v) => /^\d+$/.test(v) && SERVER_PROGRAMS.every((p) => fs.existsSync(path.join(root, v, 'bin', p))))
    .sort((a, b) => Number(b) - Number(a));
}

/** The server programs' folder: `binDir` when given (checked), else the newest Debian install (or `major` when a cluster needs it). */
export function postgresServerBinDir(options: { binDir?: string; major?: string; root?: string } = {}): string {
  if (options.binDir !== undefined) {
    const missing = SERVER_PROGRAMS.filter((p) => !fs.existsSync(path.join(options.binDir!, p)));
    if (missing.length > 0)
      throw new UnavailableError(
        `${options.binDir} lacks the PostgreSQL server programs ${missing.join(', ')} (SVC_POSTGRES_BIN_DIR)`,
        { code: 'postgres_server_missing' },
      );
    return options.binDir;
  }
  const root = options.root ?? DEBIAN_POSTGRES_ROOT;
  const versions = installedPostgresVersions(root);
  if (options.major !== undefined) {
    if (versions.includes(options.major)) return path.join(root, options.major, 'bin');
    throw new UnavailableError(
      `the managed PostgreSQL cluster was created by PostgreSQL ${options.major}, whose server programs are not installed under ${root}` +
        `${versions.length > 0 ? ` (installed: ${versions.join(', ')})` : ''}: install the Debian package postgresql-${options.major} (\`apt-get install postgresql-${options.major}\`)`,
      { code: 'postgres_server_missing' },
    );
  }
  const newest = versions[0];
  if (newest === undefined) {
    throw new UnavailableError(
      `the PostgreSQL server is not installed (no ${root}/<version>/bin/postgres): install the Debian package postgresql (\`${POSTGRES_INSTALL_COMMAND}\`, as root; \`npm start\` does it), ` +
        'or set SVC_POSTGRES_HOST to use an external server',
      { code: 'postgres_server_missing' },
    );
  }
  return path.join(root, newest, 'bin');
}
