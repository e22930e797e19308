/**
 * Files of the managed PostgreSQL server under `<data>/postgres`, and the settings file the platform
 * rewrites at every start (listen address, port, socket folder).
 */
import { spawnSync } from 'node:child_process';
import fs from 'node:fs';
import path from 'node:path';
import { runningAsRoot, type OsUser } from './postgres-os-user.js';

/** Paths of the managed server. */
export interface ManagedPostgresLayout {
  /** `<data>/postgres` (mode 0755: the server's user passes through it). */
  readonly base: string;
  /** The cluster (PGDATA), owned by the server's user, mode 0700. */
  readonly cluster: string;
  /** Folder of the Unix socket. */
  readonly run: string;
  /** The server's log. */
  readonly log: string;
  /** `managed.json`: port and major version, chosen at creation and kept. */
  readonly stateFile: string;
  /** The superuser's generated password, mode 0600, readable by the platform only. */
  readonly superuserPasswordFile: string;
  /** Per-app credentials (libpq password files), mode 0700. */
  readonly credentials: string;
}

/** What the platform keeps about its cluster. */
export interface ManagedState {
  readonly port: number;
  /** PostgreSQL major version that created the cluster (its server programs run it). */
  readonly major: string;
  readonly createdAt: string;
}

/** The layout under `dataDir`. */
export function managedPostgresLayout(dataDir: string): ManagedPostgresLayout {
  const base = path.join(path.resolve(dataDir), 'postgres');
  return {
    base,
    cluster: path.join(base, 'cluster'),
    run: path.join(base, 'run'),
    log: path.join(base, 'server.log'),
    stateFile: path.join(base, 'managed.json'),
    superuserPasswordFile: path.join(base, 'superuser.password'),
    credentials: path.join(base, 'credentials'),
  };
}

/** The kept state; throws when the cluster exists without it (the port is unknown). */
export function readManagedState(layout: ManagedPostgresLayout): ManagedState {
  const state = JSON.parse(fs.readFileSync(layout.stateFile, 'utf8')) as ManagedState;
  if (!Number.isInteger(state.port) || typeof state.major !== 'string')
    throw new Error(`${layout.stateFile} is not a managed PostgreSQL state file`);
  return state;
}

/** The longest Unix socket path the kernel accepts (`sun_path` is 108 bytes with its NUL). */
const MAX_SOCKET_PATH = 107;

/**
 * Writes `svc-managed.conf` in the cluster (included by its postgresql.conf): loopback TCP on the
 * kept port, the socket in the run folder, SCRAM password hashing.
 */
export function writeManagedConf(layout: ManagedPostgresLayout, state: ManagedState, user: OsUser): void {
  const socket = path.join(layout.run, `.s.PGSQL.${state.port}`);
  if (Buffer.byteLength(socket) > MAX_SOCKET_PATH) {
    throw new Error(
      `the managed PostgreSQL socket path ${socket} is longer than ${MAX_SOCKET_PATH} bytes: use a shorter SVC_DATA_DIR`,
    );
  }
  const quoted = (text: string) => `'${text.replaceAll("'", "''")}'`;
  const conf = [
    '# Written by svc at every start of the managed server; edit postgresql.conf for other settings.',
    "listen_addresses = '127.0.0.1'",
    `port = ${state.port}`,
    `unix_socket_directories = ${quoted(layout.run)}`,
    "password_encryption = 'scram-sha-256'",
    '',
  ].join('\n');
  const file = path.join(layout.cluster, 'svc-managed.conf');
  fs.writeFileSync(file, conf, { mode: 0o600 });
  fs.mkdirSync(layout.run, { recursive: true, mode: 0o755 });
  if (runningAsRoot()) {
    fs.chownSync(file, user.uid, user.gid);
    fs.chownSync(layout.run, user.uid, user.gid);
  }
  const main = path.join(layout.cluster, 'postgresql.conf');
  if (!fs.readFileSync(main, 'utf8').includes("include_if_exists = 'svc-managed.conf'")) {
    fs.appendFileSync(
      main,
      "\n# Written by svc: listen address, port and socket folder (rewritten at every start).\ninclude_if_exists = 'svc-managed.conf'\n",
    );
  }
}

/**
 * The first folder on the way to `dir` (inclusive) that `user` cannot pass through, or undefined when
 * it reaches `dir`. PostgreSQL runs as `user` and opens its cluster by path.
 */
export function firstBlockedFolder(dir: string, user: OsUser): string | undefined {
  if (!runningAsRoot()) return undefined;
  const passes = (folder: string) => spawnSync('test', ['-x', folder], { uid: user.uid, gid: user.gid }).status === 0;
  if (passes(dir)) return undefined;
  const parts = path.resolve(dir).split(path.sep).filter(Boolean);
  let current: string = path.sep;
  for (const part of ['', ...parts]) {
    current = part === '' ? current : path.join(current, part);
    if (!passes(current)) return current;
  }
  return path.resolve(dir);
}
