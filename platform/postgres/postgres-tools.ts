/**
 * PostgreSQL client tools (pg_dump, pg_restore, psql) run against the configured server: snapshots,
 * restores and declared migrations. Every command runs through execFile (no shell); the password
 * comes from a file and reaches the tools only through their environment.
 */
import { execFile } from 'node:child_process';
import { createHash } from 'node:crypto';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { promisify } from 'node:util';
import { ConflictError, UnavailableError, ValidationError } from '../../domain/errors.js';

const run = promisify(execFile);

/** Where the PostgreSQL server is and how to reach it. */
export interface PostgresServerOptions {
  /** @default 127.0.0.1 */
  readonly host?: string;
  /** @default 5432 */
  readonly port?: number;
  /** @default postgres */
  readonly user?: string;
  /** File holding the password (first line); never logged. */
  readonly passwordFile?: string;
  /** Folder of pg_dump, pg_restore and psql; @default the newest /usr/lib/postgresql/<v>/bin, else PATH */
  readonly binDir?: string;
  /** Per-command time limit. @default 10 minutes */
  readonly timeoutMs?: number;
  /** libpq `sslmode` (`PGSSLMODE`); unset: libpq's default. */
  readonly sslMode?: string;
  /** CA certificate file verifying the server (`PGSSLROOTCERT`). */
  readonly sslRootCert?: string;
  /**
   * Restores and migrations act as the database's owner (`SET ROLE`) when the connecting user is not
   * the owner, so the objects they create belong to the app's role (the managed server). @default false
   */
  readonly asDatabaseOwner?: boolean;
}

/** Result of applying a migrations folder. */
export interface MigrationRun {
  readonly applied: readonly string[];
  readonly alreadyApplied: readonly string[];
}

const IDENTIFIER = /^[A-Za-z_][A-Za-z0-9_]{0,62}$/;

function defaultBinDir(): string | undefined {
  const root = '/usr/lib/postgresql';
  if (!fs.existsSync(root)) return undefined;
  const versions = fs
    .readdirSync(root)
    .filter((v) => fs.existsSync(path.join(root, v, 'bin', 'pg_dump')))
    .sort((a, b) => Number(b) - Number(a));
  return versions[0] === undefined ? undefined : path.join(root, versions[0], 'bin');
}

/** Drives the PostgreSQL command-line tools for one server. */
export class PostgresTools {
  readonly host: string;
  readonly port: number;
  readonly user: string;
  readonly #passwordFile: string | undefined;
  readonly #binDir: string | undefined;
  readonly #timeoutMs: number;
  readonly #asDatabaseOwner: boolean;
  readonly #ssl: { readonly mode?: string; readonly rootCert?: string };

  constructor(options: PostgresServerOptions = {}) {
    this.host = options.host ?? '127.0.0.1';
    this.port = options.port ?? 5432;
    this.user = options.user ?? 'postgres';
    this.#passwordFile = options.passwordFile;
    this.#binDir = options.binDir ?? defaultBinDir();
    this.#timeoutMs = options.timeoutMs ?? 600_000;
    this.#asDatabaseOwner = options.asDatabaseOwner ?? false;
    this.#ssl = {
      ...(options.sslMode === undefined ? {} : { mode: options.sslMode }),
      ...(options.sslRootCert === undefined ? {} : { rootCert: options.sslRootCert }),
    };
  }

  #tool(name: string): string {
    return this.#binDir ? path.join(this.#binDir, name) : name;
  }

  #env(): NodeJS.ProcessEnv {
    const env: NodeJS.ProcessEnv = { PATH: process.env.PATH, LANG: 'C.UTF-8', PGCONNECT_TIMEOUT: '10' };
    if (this.#ssl.mode !== undefined) env.PGSSLMODE = this.#ssl.mode;
    if (this.#ssl.rootCert !== undefined) env.PGSSLROOTCERT = this.#ssl.rootCert;
    if (this.#passwordFile) env.PGPASSWORD = fs.readFileSync(this.#passwordFile, 'utf8').split('\n')[0]!.trim();
    return env;
  }

  #connection(database: string): string[] {
    if (!IDENTIFIER.test(database))
      throw new ValidationError(`database "${database}" is not a 1-63 character portable identifier`, {
        code: 'invalid_database_name',
      });
    return ['-h', this.host, '-p', String(this.port), '-U', this.user, '-d', database];
  }

  async #exec(tool: string, args: string[], input?: string): Promise<string> {
    try {
      const running = run(this.#tool(tool), args, {
        env: this.#env(),
        timeout: this.#timeoutMs,
        maxBuffer: 64 * 1024 * 1024,
      });
      // Input (SQL holding a password verifier) goes through stdin, never the command line. A tool
      // that exits before reading it (a refused connection) closes the pipe: the EPIPE must not crash
      // the process, and the tool's own exit status and stderr say what went wrong.
      running.child.stdin?.on('error', () => undefined);
      running.child.stdin?.end(input ?? '');
      const { stdout } = await running;
      return stdout;
    } catch (error) {
      const failure = error as NodeJS.ErrnoException & { stderr?: string; code?: string | number };
      if (failure.code === 'ENOENT')
        throw new UnavailableError(`${tool} is not installed (install the postgresql-client Debian package)`, {
          code: 'postgres_tools_missing',
        });
      const detail = (failure.stderr ?? failure.message).trim().split('\n').slice(-5).join('\n');
      throw new UnavailableError(`${tool} failed: ${detail}`, { code: 'postgres_command_failed', cause: error });
    }
  }

  /** Writes a custom-format dump of `database` to `file`. */
  async dump(database: string, file: string): Promise<void> {
    await this.#exec('pg_dump', [...this.#connection(database), '--format=custom', '--no-owner', '--file', file]);
  }

  /** The table of contents of the custom-format dump at `file` (`pg_restore --list`); throws when it cannot be read. */
  async listDump(file: string): Promise<string> {
    return this.#exec('pg_restore', ['--list', file]);
  }

  /** Restores `file` into `database` in one transaction, stopping at the first error (which rolls back everything). */
  async restore(database: string, file: string): Promise<void> {
    const owner = await this.#actingOwner(database);
    await this.#exec('pg_restore', [
      ...this.#connection(database),
      '--single-transaction',
      '--exit-on-error',
      '--clean',
      '--if-exists',
      '--no-owner',
      ...(owner ? [`--role=${owner}`] : []),
      file,
    ]);
  }

  /** The owner to act as (with {@link PostgresServerOptions.asDatabaseOwner}) when it is not the connecting user. */
  async #actingOwner(database: string): Promise<string | undefined> {
    if (!this.#asDatabaseOwner) return undefined;
    const owner = (
      await this.query(database, 'SELECT pg_get_userbyid(datdba) FROM pg_database WHERE datname = current_database()')
    ).trim();
    if (owner === '' || owner === this.user) return undefined;
    if (!IDENTIFIER.test(owner))
      throw new UnavailableError(`the owner of database ${database} is not a portable identifier`, {
        code: 'postgres_command_failed',
      });
    return owner;
  }

  /**
   * Creates the login role `role` (password set from its SCRAM `verifier`) and the database `database`
   * it owns, each when absent; revokes the public's right to connect to it. Idempotent. Throws a
   * conflict when the database already belongs to another role.
   */
  async ensureRoleAndDatabase(role: string, verifier: string, database: string): Promise<{ createdDatabase: boolean }> {
    for (const name of [role, database]) {
      if (!IDENTIFIER.test(name))
        throw new ValidationError(`"${name}" is not a 1-63 character portable identifier`, {
          code: 'invalid_database_name',
        });
    }
    if (!/^SCRAM-SHA-256\$[A-Za-z0-9+/=:$]+$/.test(verifier))
      throw new ValidationError('the password must be given as a SCRAM-SHA-256 verifier', { code: 'invalid_verifier' });
    const literal = (text: string) => `'${text}'`;
    const before = await this.query(
      'postgres',
      `SELECT pg_get_userbyid(datdba) FROM pg_database WHERE datname = ${literal(database)}`,
    );
    const owner = before.trim();
    if (owner !== '' && owner !== role)
      throw new ConflictError(`database ${database} already exists and belongs to role ${owner}, not ${role}`, {
        code: 'database_owned_elsewhere',
        details: { database, owner },
      });
    const sql = [
      `SELECT format('CREATE ROLE %I LOGIN', ${literal(role)}) WHERE NOT EXISTS (SELECT FROM pg_roles WHERE rolname = ${literal(role)}) \\gexec`,
      `ALTER ROLE "${role}" WITH LOGIN NOSUPERUSER NOCREATEDB NOCREATEROLE NOREPLICATION PASSWORD ${literal(verifier)};`,
      ...(owner === ''
        ? [
            `CREATE DATABASE "${database}" OWNER "${role}";`,
            `REVOKE CONNECT, TEMPORARY ON DATABASE "${database}" FROM PUBLIC;`,
          ]
        : []),
      '',
    ].join('\n');
    try {
      await this.#exec('psql', [...this.#connection('postgres'), '-X', '-v', 'ON_ERROR_STOP=1', '-q', '-f', '-'], sql);
    } catch (error) {
      // Another start created it between the check and the create: it is there now.
      if (!(error instanceof UnavailableError && /already exists/.test(error.message))) throw error;
    }
    return { createdDatabase: owner === '' };
  }

  /** Runs SQL and returns psql's unaligned output. */
  async query(database: string, sql: string): Promise<string> {
    return this.#exec('psql', [...this.#connection(database), '-X', '-v', 'ON_ERROR_STOP=1', '-At', '-c', sql]);
  }

  /**
   * Applies the `.sql` files of `dir` in name order, each once: applied files are recorded with
   * their checksum in `svc_schema_migrations` inside the same transaction as the file's SQL.
   */
  async applyMigrations(database: string, dir: string): Promise<MigrationRun> {
    const files = fs.existsSync(dir)
      ? fs
          .readdirSync(dir)
          .filter((f) => f.endsWith('.sql'))
          .sort()
      : [];
    if (files.length === 0)
      throw new ValidationError(`migrations folder ${path.basename(dir)} holds no .sql files`, {
        code: 'no_migrations',
      });
    const owner = await this.#actingOwner(database);
    const asOwner = owner ? `SET ROLE "${owner}";\n` : '';
    await this.query(
      database,
      `${asOwner}CREATE TABLE IF NOT EXISTS svc_schema_migrations (filename text PRIMARY KEY, checksum text NOT NULL, applied_at timestamptz NOT NULL DEFAULT now())`,
    );
    const done = new Map(
      (await this.query(database, 'SELECT filename, checksum FROM svc_schema_migrations'))
        .split('\n')
        .filter(Boolean)
        .map((line) => line.split('|') as [string, string]),
    );
    const applied: string[] = [];
    const alreadyApplied: string[] = [];
    for (const file of files) {
      const sql = fs.readFileSync(path.join(dir, file), 'utf8');
      const checksum = createHash('sha256').update(sql).digest('hex');
      const recorded = done.get(file);
      if (recorded !== undefined) {
        if (recorded !== checksum)
          throw new ValidationError(`migration ${file} changed after it was applied`, {
            code: 'migration_changed',
            details: { file },
          });
        alreadyApplied.push(file);
        continue;
      }
      // One transaction: the file's SQL and its bookkeeping row commit together or not at all.
      const scratch = fs.mkdtempSync(path.join(os.tmpdir(), 'svc-migrate-'));
      const wrapper = path.join(scratch, 'run.sql');
      const quoted = (text: string) => `'${text.replace(/'/g, "''")}'`;
      fs.writeFileSync(
        wrapper,
        `${asOwner}BEGIN;\n\\i ${quoted(path.resolve(dir, file))}\nINSERT INTO svc_schema_migrations (filename, checksum) VALUES (${quoted(file)}, ${quoted(checksum)});\nCOMMIT;\n`,
      );
      try {
        await this.#exec('psql', [...this.#connection(database), '-X', '-v', 'ON_ERROR_STOP=1', '-q', '-f', wrapper]);
      } finally {
        fs.rmSync(scratch, { recursive: true, force: true });
      }
      applied.push(file);
    }
    return { applied, alreadyApplied };
  }
}
