// tier: full
import { execFileSync, spawn } from 'node:child_process';
import fs from 'node:fs';
import path from 'node:path';
import test from 'ava';
import { programArgs } from '../../helpers/cli.js';
import {
  ManagedPostgres,
  managedPostgresLayout,
  type ManagedPostgresEvent,
} from '../../../platform/postgres/managed-postgres.js';
import { postgresServerBinDir } from '../../../platform/postgres/postgres-binaries.js';
import { processAlive, stopLeftPostgres } from '../../../platform/postgres/postmaster-pid.js';
import { silentLogger } from '../../../platform/logger.js';
import { UnavailableError } from '../../../domain/errors.js';
import { managedDataDir, superuserPsql } from '../../helpers/managed-postgres.js';
import { sourceDir } from '../../helpers/repo.js';

const CHILD = path.join(sourceDir(import.meta.dirname), 'managed-postgres-child.ts');

/**
 * Resolves with the first event of `type`. The server's child is unref'd (a platform's own handles
 * keep it alive), so the wait holds the event loop open itself: a file running this test alone would
 * otherwise end before the child's exit is seen.
 */
function next(server: ManagedPostgres, type: ManagedPostgresEvent['type']): Promise<ManagedPostgresEvent> {
  const keepAlive = setInterval(() => undefined, 1000);
  return new Promise<ManagedPostgresEvent>((resolve) => {
    const stop = server.watch((event) => {
      if (event.type !== type) return;
      stop();
      resolve(event);
    });
  }).finally(() => clearInterval(keepAlive));
}

test('ManagedPostgres creates its cluster once and keeps the port and the data across a stop and start', async (t) => {
  const dataDir = managedDataDir(t);
  const first = await ManagedPostgres.open({ dataDir, logger: silentLogger() });
  t.teardown(() => first.close());
  const layout = managedPostgresLayout(dataDir);
  const { port } = first.connection();
  t.true(fs.existsSync(path.join(layout.run, `.s.PGSQL.${port}`)), 'listens on a Unix socket in the data folder');
  t.is(fs.statSync(layout.superuserPasswordFile).mode & 0o777, 0o600);
  t.is(fs.statSync(layout.cluster).mode & 0o777, 0o700);
  if (process.getuid?.() === 0)
    t.not(fs.statSync(layout.cluster).uid, 0, 'the cluster belongs to an unprivileged user');
  superuserPsql(first, "CREATE TABLE kept (v text); INSERT INTO kept VALUES ('still here')");
  await first.close();
  t.false(fs.existsSync(path.join(layout.cluster, 'postmaster.pid')), 'a fast shutdown removes postmaster.pid');

  const second = await ManagedPostgres.open({ dataDir, logger: silentLogger() });
  t.teardown(() => second.close());
  t.is(second.connection().port, port, 'the port chosen at first start is kept');
  t.is(superuserPsql(second, 'SELECT v FROM kept').trim(), 'still here');
});

test('ManagedPostgres restarts a server that dies', async (t) => {
  const server = await ManagedPostgres.open({ dataDir: managedDataDir(t), logger: silentLogger(), restartDelayMs: 10 });
  t.teardown(() => server.close());
  superuserPsql(server, 'CREATE TABLE survives (v int); INSERT INTO survives VALUES (7)');
  const killed = server.pid;
  const exited = next(server, 'exited');
  const started = next(server, 'started');
  process.kill(killed, 'SIGKILL');
  t.is((await exited).pid, killed);
  const restarted = await started;
  t.not(restarted.pid, killed);
  t.is(server.pid, restarted.pid);
  t.is(superuserPsql(server, 'SELECT v FROM survives').trim(), '7', 'crash recovery keeps committed data');
});

test('ManagedPostgres adopts the server a SIGKILLed platform left running, with its data; a restore can stop such a server', async (t) => {
  const dataDir = managedDataDir(t);
  const child = spawn(process.execPath, [...programArgs(CHILD), dataDir], { stdio: ['ignore', 'pipe', 'inherit'] });
  const line = await new Promise<{ pid: number }>((resolve, reject) => {
    let out = '';
    child.stdout.on('data', (chunk: Buffer) => {
      out += chunk.toString();
      if (out.includes('\n')) resolve(JSON.parse(out.split('\n')[0]!) as { pid: number });
    });
    child.once('exit', (code) => reject(new Error(`the platform stand-in exited with ${code}`)));
  });
  const exited = new Promise((resolve) => child.once('exit', resolve));
  child.kill('SIGKILL');
  await exited;
  t.true(processAlive(line.pid), 'the server outlives a killed platform');

  const server = await ManagedPostgres.open({ dataDir, logger: silentLogger(), pollMs: 20, restartDelayMs: 10 });
  t.teardown(() => server.close());
  t.is(server.pid, line.pid, 'the running postmaster is adopted, not replaced');
  superuserPsql(server, 'CREATE TABLE adopted (v int)');

  // An adopted server is not the platform's child: its death is noticed by polling, then it is restarted.
  const started = next(server, 'started');
  process.kill(line.pid, 'SIGKILL');
  const restarted = (await started).pid;
  t.not(restarted, line.pid);
  t.is(superuserPsql(server, "SELECT count(*) FROM pg_tables WHERE tablename = 'adopted'").trim(), '1');

  // Left running again (an API restart releases it), the server is what `svc restore` stops before it
  // starts the restored cluster on the same port: a fast shutdown, found through postmaster.pid.
  server.release();
  t.true(processAlive(restarted));
  t.is(await stopLeftPostgres(server.layout.cluster), restarted);
  t.false(processAlive(restarted), 'the left server is stopped');
  t.is(await stopLeftPostgres(server.layout.cluster), undefined, 'none runs: nothing to stop');
});

test('the server programs lookup names the package and the command that installs it when none is installed', (t) => {
  const empty = fs.mkdtempSync('/tmp/svc-no-pg-');
  t.teardown(() => fs.rmSync(empty, { recursive: true, force: true }));
  const error = t.throws(() => postgresServerBinDir({ root: empty }), { instanceOf: UnavailableError });
  t.regex(error.message, /install the Debian package postgresql \(`apt-get install postgresql`/);
  t.regex(error.message, /SVC_POSTGRES_HOST/);
  const cluster = t.throws(() => postgresServerBinDir({ root: empty, major: '13' }), { instanceOf: UnavailableError });
  t.regex(cluster.message, /postgresql-13/);
});

test('ManagedPostgres refuses a data folder its system user cannot reach, saying how to fix it', async (t) => {
  if (process.getuid?.() !== 0) return t.pass('only root runs the server as another user');
  const dataDir = managedDataDir(t);
  const closed = path.join(path.dirname(dataDir), 'closed');
  fs.mkdirSync(path.join(closed, 'data'), { recursive: true, mode: 0o700 });
  fs.chmodSync(closed, 0o700);
  const error = await t.throwsAsync(
    ManagedPostgres.open({ dataDir: path.join(closed, 'data'), logger: silentLogger() }),
    { instanceOf: UnavailableError },
  );
  t.true(error.message.includes(`cannot enter ${closed}`), error.message);
  t.regex(error.message, /setfacl -m u:\S+:x|chmod o\+x/);
  t.is(execFileSync('ls', [closed], { encoding: 'utf8' }).includes('data'), true);
});
