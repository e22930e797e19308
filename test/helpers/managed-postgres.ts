/**
 * Helpers for tests of the managed PostgreSQL server: a data folder its system user can reach, and
 * psql as its superuser.
 */
import { execFileSync } from 'node:child_process';
import fs from 'node:fs';
import path from 'node:path';
import type { ExecutionContext } from 'ava';
import type { ManagedPostgres } from '../../platform/postgres/managed-postgres.js';
import { tempDir } from './temp-dir.js';

/**
 * A fresh data folder under a temp folder opened to other users (mode 0755: as root the server runs
 * as another user, which must pass through it), removed when the test ends.
 */
export function managedDataDir(t: ExecutionContext): string {
  const root = tempDir(t, 'svc-mpg-');
  fs.chmodSync(root, 0o755);
  return path.join(root, 'data');
}

/** Runs SQL as the managed server's superuser over its Unix socket; returns psql's unaligned output. */
export function superuserPsql(server: ManagedPostgres, sql: string, database = 'postgres'): string {
  const c = server.connection();
  return execFileSync(
    path.join(c.binDir, 'psql'),
    [
      '-h',
      c.socketDir,
      '-p',
      String(c.port),
      '-U',
      c.user,
      '-d',
      database,
      '-X',
      '-v',
      'ON_ERROR_STOP=1',
      '-At',
      '-c',
      sql,
    ],
    {
      encoding: 'utf8',
      env: { PATH: process.env.PATH, PGPASSWORD: fs.readFileSync(c.passwordFile, 'utf8').trim() },
    },
  );
}
