/**
 * A throwaway PostgreSQL cluster from the Debian binaries, for tests that need a real server.
 *
 * As root, the cluster runs as the `postgres` system user (initdb refuses root). The cluster lives
 * in a temp folder, listens on a free loopback port and a private socket folder, trusts local
 * connections, and is stopped and deleted when the test file ends.
 */
import { execFileSync, spawnSync } from 'node:child_process';
import fs from 'node:fs';
import net from 'node:net';
import os from 'node:os';
import path from 'node:path';

/** Connection facts of a running throwaway cluster. */
export interface PostgresCluster {
  readonly host: string;
  readonly port: number;
  readonly user: string;
  readonly binDir: string;
  readonly dataDir: string;
  /** `postgresql://user@127.0.0.1:port/<db>` */
  url(database?: string): string;
  /** Runs SQL through psql against `database`, returning stdout. */
  psql(sql: string, database?: string): string;
  stop(): void;
}

/** Finds the newest installed PostgreSQL server binaries, or undefined. */
export function findPostgresBinDir(): string | undefined {
  const root = '/usr/lib/postgresql';
  if (!fs.existsSync(root)) return undefined;
  const versions = fs
    .readdirSync(root)
    .filter((v) => fs.existsSync(path.join(root, v, 'bin', 'initdb')))
    .sort((a, b) => Number(b) - Number(a));
  return versions[0] === undefined ? undefined : path.join(root, versions[0], 'bin');
}

async function freePort(): Promise<number> {
  return new Promise((resolve, reject) => {
    const server = net.createServer();
    server.once('error', reject);
    server.listen(0, '127.0.0.1', () => {
      const { port } = server.address() as net.AddressInfo;
      server.close(() => resolve(port));
    });
  });
}

/** Starts a cluster; call `stop()` (e.g. in `test.after.always`). */
export async function startPostgres(): Promise<PostgresCluster> {
  const binDir = findPostgresBinDir();
  if (!binDir)
    throw new Error(
      'PostgreSQL server binaries not found under /usr/lib/postgresql: run `npm test`, which installs them',
    );
  const isRoot = process.getuid?.() === 0;
  const runAs = isRoot ? 'postgres' : os.userInfo().username;
  const base = fs.mkdtempSync(path.join(os.tmpdir(), 'svc-pg-'));
  const dataDir = path.join(base, 'data');
  const socketDir = path.join(base, 'sock');
  fs.mkdirSync(socketDir);
  if (isRoot) execFileSync('chown', ['-R', 'postgres:postgres', base]);
  fs.chmodSync(base, 0o755);
  const run = (cmd: string, args: string[]) => {
    const full = isRoot
      ? (['runuser', ['-u', 'postgres', '--', path.join(binDir, cmd), ...args]] as const)
      : ([path.join(binDir, cmd), args] as const);
    const result = spawnSync(full[0], [...full[1]], { encoding: 'utf8' });
    if (result.status !== 0) throw new Error(`${cmd} failed: ${result.stderr || result.stdout}`);
    return result.stdout;
  };
  run('initdb', ['-D', dataDir, '-U', runAs, '--auth=trust', '--no-sync', '-E', 'UTF8', '--locale=C']);
  const port = await freePort();
  run('pg_ctl', [
    '-D',
    dataDir,
    '-l',
    path.join(base, 'server.log'),
    '-w',
    '-t',
    '30',
    '-o',
    `-c listen_addresses=127.0.0.1 -p ${port} -c unix_socket_directories=${socketDir} -c fsync=off`,
    'start',
  ]);
  let stopped = false;
  const cluster: PostgresCluster = {
    host: '127.0.0.1',
    port,
    user: runAs,
    binDir,
    dataDir,
    url: (database = 'postgres') => `postgresql://${runAs}@127.0.0.1:${port}/${database}`,
    psql(sql, database = 'postgres') {
      return execFileSync(
        path.join(binDir, 'psql'),
        ['-h', '127.0.0.1', '-p', String(port), '-U', runAs, '-d', database, '-v', 'ON_ERROR_STOP=1', '-At', '-c', sql],
        { encoding: 'utf8' },
      );
    },
    stop() {
      if (stopped) return;
      stopped = true;
      try {
        run('pg_ctl', ['-D', dataDir, '-m', 'immediate', '-w', 'stop']);
      } finally {
        fs.rmSync(base, { recursive: true, force: true });
      }
    },
  };
  return cluster;
}
