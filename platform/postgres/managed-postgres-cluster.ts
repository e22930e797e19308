/**
 * The making of the managed cluster (ADR 0011): `initdb` into a scratch folder renamed once complete,
 * the loopback port chosen at first start, and the state file a cluster that lost it gets again.
 */
import { spawnSync } from 'node:child_process';
import crypto, { randomBytes } from 'node:crypto';
import fs from 'node:fs';
import net from 'node:net';
import path from 'node:path';
import { UnavailableError } from '../../domain/errors.js';
import type { Logger } from '../logger.js';
import { postgresServerBinDir } from './postgres-binaries.js';
import { asUser, runningAsRoot, type OsUser } from './postgres-os-user.js';
import type { ManagedPostgresLayout, ManagedState } from './managed-postgres-layout.js';

/** The superuser role of the managed cluster. */
export const MANAGED_SUPERUSER = 'postgres';

/** Ports tried in order at first start (below the usual ephemeral range, beside no well-known service); then any free port. */
const PORT_RANGE = { first: 15432, last: 15531 } as const;

/** What creating a cluster uses of the managed server's options. */
export interface ClusterOptions {
  readonly logger: Logger;
  /** Folder of the server programs. @default the newest Debian install */
  readonly binDir?: string;
}

/**
 * A free loopback port of {@link PORT_RANGE}, tried from a random place in it (wrapping round), else one
 * the kernel picks. Trying from the range's start made two platforms that create their clusters at
 * the same moment choose the same port, and the second server failed to bind it.
 */
async function choosePort(): Promise<number> {
  const tryPort = (port: number) =>
    new Promise<number | undefined>((resolve) => {
      const server = net.createServer();
      server.once('error', () => resolve(undefined));
      server.listen(port, '127.0.0.1', () => {
        const chosen = (server.address() as net.AddressInfo).port;
        server.close(() => resolve(chosen));
      });
    });
  const size = PORT_RANGE.last - PORT_RANGE.first + 1;
  const offset = crypto.randomInt(size);
  for (let i = 0; i < size; i += 1) {
    const free = await tryPort(PORT_RANGE.first + ((offset + i) % size));
    if (free !== undefined) return free;
  }
  const any = await tryPort(0);
  if (any === undefined)
    throw new UnavailableError('no free loopback port for the managed PostgreSQL', { code: 'postgres_start_failed' });
  return any;
}

/** `initdb` into a scratch folder, renamed to the cluster once complete: superuser with a generated password, SCRAM authentication everywhere. */
export async function initializeCluster(
  layout: ManagedPostgresLayout,
  user: OsUser,
  options: ClusterOptions,
): Promise<ManagedState> {
  const binDir = postgresServerBinDir(options.binDir === undefined ? {} : { binDir: options.binDir });
  const log = options.logger.child({ component: 'managed-postgres' });
  const scratch = `${layout.cluster}.initdb`;
  // A half-made cluster (a start killed during initdb) never held data: it is remade.
  fs.rmSync(scratch, { recursive: true, force: true });
  fs.mkdirSync(scratch, { mode: 0o700 });
  fs.mkdirSync(layout.run, { recursive: true, mode: 0o755 });
  if (runningAsRoot()) {
    fs.chownSync(scratch, user.uid, user.gid);
    fs.chownSync(layout.run, user.uid, user.gid);
  }
  if (!fs.existsSync(layout.superuserPasswordFile))
    fs.writeFileSync(layout.superuserPasswordFile, `${randomBytes(24).toString('base64url')}\n`, { mode: 0o600 });
  // initdb reads the password from a file only the server's user can read, removed right after.
  const pwfile = path.join(layout.run, `.initdb-${process.pid}`);
  fs.writeFileSync(pwfile, fs.readFileSync(layout.superuserPasswordFile, 'utf8').trim(), { mode: 0o600 });
  if (runningAsRoot()) fs.chownSync(pwfile, user.uid, user.gid);
  const started = Date.now();
  try {
    const result = spawnSync(
      path.join(binDir, 'initdb'),
      [
        '-D',
        scratch,
        '-U',
        MANAGED_SUPERUSER,
        `--pwfile=${pwfile}`,
        '--auth-local=scram-sha-256',
        '--auth-host=scram-sha-256',
        '-E',
        'UTF8',
        '--locale=C',
      ],
      {
        ...asUser(user),
        cwd: layout.run,
        encoding: 'utf8',
        env: { PATH: process.env.PATH ?? '/usr/bin:/bin', LANG: 'C' },
      },
    );
    if (result.error)
      throw new UnavailableError(`initdb could not run: ${result.error.message}`, {
        code: 'postgres_init_failed',
        cause: result.error,
      });
    if (result.status !== 0)
      throw new UnavailableError(
        `initdb failed: ${(result.stderr || result.stdout).trim().split('\n').slice(-5).join('\n')}`,
        { code: 'postgres_init_failed' },
      );
  } finally {
    fs.rmSync(pwfile, { force: true });
  }
  const state: ManagedState = {
    port: await choosePort(),
    major: fs.readFileSync(path.join(scratch, 'PG_VERSION'), 'utf8').trim(),
    createdAt: new Date().toISOString(),
  };
  fs.renameSync(scratch, layout.cluster);
  fs.writeFileSync(layout.stateFile, `${JSON.stringify(state, null, 2)}\n`);
  log.info(
    { port: state.port, major: state.major, user: user.name, ms: Date.now() - started },
    'managed PostgreSQL cluster created',
  );
  return state;
}

/** A cluster whose state file was lost keeps its data: a new port is chosen and recorded. */
export async function recoverState(layout: ManagedPostgresLayout, logger: Logger): Promise<ManagedState> {
  const state: ManagedState = {
    port: await choosePort(),
    major: fs.readFileSync(path.join(layout.cluster, 'PG_VERSION'), 'utf8').trim(),
    createdAt: new Date().toISOString(),
  };
  fs.writeFileSync(layout.stateFile, `${JSON.stringify(state, null, 2)}\n`);
  logger.warn(
    { file: layout.stateFile, port: state.port },
    'managed PostgreSQL state file was missing: a new port was chosen',
  );
  return state;
}
