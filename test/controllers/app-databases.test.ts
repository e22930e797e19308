// tier: full
import { spawnSync } from 'node:child_process';
import fs from 'node:fs';
import path from 'node:path';
import test from 'ava';
import { AppDatabases } from '../../controllers/postgres/app-databases.js';
import { canonicalizeInfraspec as canonicalize } from '../../domain/spec/index.js';
import { infrastructureEnvironment } from '../../domain/translate/index.js';
import { ConflictError } from '../../domain/errors.js';
import { AppCredentials, appRoleName } from '../../platform/postgres/app-credentials.js';
import { ManagedPostgres } from '../../platform/postgres/managed-postgres.js';
import { PostgresTools } from '../../platform/postgres/postgres-tools.js';
import { scramSha256Verifier } from '../../platform/postgres/scram-verifier.js';
import { silentLogger } from '../../platform/logger.js';
import { openControlStore } from '../../store/open-stores.js';
import { superuserPsql } from '../helpers/managed-postgres.js';

const server = { current: undefined as ManagedPostgres | undefined, dataDir: '' };

test.before(async () => {
  const root = fs.mkdtempSync('/tmp/svc-appdb-');
  fs.chmodSync(root, 0o755);
  server.dataDir = path.join(root, 'data');
  server.current = await ManagedPostgres.open({ dataDir: server.dataDir, logger: silentLogger() });
});

test.after.always(async () => {
  await server.current?.close();
  fs.rmSync(path.dirname(server.dataDir), { recursive: true, force: true });
});

function setup() {
  const managed = server.current!;
  const c = managed.connection();
  const tools = new PostgresTools({
    host: c.socketDir,
    port: c.port,
    user: c.user,
    passwordFile: c.passwordFile,
    binDir: c.binDir,
    asDatabaseOwner: true,
  });
  // Under the server's folder, which test.after removes.
  const store = openControlStore(fs.mkdtempSync(path.join(path.dirname(server.dataDir), 'store-')));
  const credentials = new AppCredentials(managed.layout.credentials);
  const databases = new AppDatabases({
    db: store.db,
    tools,
    credentials,
    host: c.host,
    port: c.port,
    logger: silentLogger(),
  });
  return { managed, c, tools, databases, credentials };
}

/** psql as an app, the way the app's own libpq reads its settings. */
function asApp(env: Record<string, string>, sql: string, binDir: string) {
  return spawnSync(path.join(binDir, 'psql'), ['-X', '-q', '-At', '-v', 'ON_ERROR_STOP=1', '-c', sql], {
    encoding: 'utf8',
    env: { PATH: process.env.PATH, ...env },
  });
}

test('AppDatabases gives an app its own database and role, reachable with the settings the translation delivers', async (t) => {
  const { managed, c, databases } = setup();
  const spec = canonicalize({
    name: 'ledger-api',
    deploy: true,
    processes: { web: { port: 8080 } },
    infrastructure: { postgres: { database: 'ledger_t1' } },
  });
  const settings = await databases.settingsFor('ledger-api', spec);
  t.deepEqual(settings.postgres, {
    host: '127.0.0.1',
    port: c.port,
    user: 'app_ledger_api',
    passwordFile: path.join(managed.layout.credentials, 'ledger-api.pgpass'),
  });
  const env = infrastructureEnvironment(spec, settings);
  t.is(env.DATABASE_URL, `postgres://app_ledger_api@127.0.0.1:${c.port}/ledger_t1`);
  t.false(
    JSON.stringify(env).includes(fs.readFileSync(settings.postgres!.passwordFile!, 'utf8').split(':')[4]!.trim()),
    'the password is not in the environment',
  );
  t.is(fs.statSync(settings.postgres!.passwordFile!).mode & 0o777, 0o600);
  t.is(fs.statSync(managed.layout.credentials).mode & 0o777, 0o700);

  const result = asApp(env, 'CREATE TABLE mine (v int); SELECT current_user, current_database()', c.binDir);
  t.is(result.status, 0, result.stderr);
  t.is(result.stdout.trim(), 'app_ledger_api|ledger_t1');
  t.is(
    superuserPsql(managed, "SELECT tableowner FROM pg_tables WHERE tablename = 'mine'", 'ledger_t1').trim(),
    'app_ledger_api',
  );
  t.is(
    superuserPsql(
      managed,
      "SELECT rolsuper::text || rolcreatedb::text FROM pg_roles WHERE rolname = 'app_ledger_api'",
    ).trim(),
    'falsefalse',
  );
  const logged = fs.readFileSync(managed.layout.log, 'utf8');
  t.false(logged.includes('PASSWORD'), 'the server log holds no password statement');

  // Idempotent: a second call (another process, nothing cached) keeps the password and the data.
  const again = setup();
  await again.databases.settingsFor('ledger-api', spec);
  t.is(asApp(env, 'SELECT count(*) FROM mine', c.binDir).stdout.trim(), '0');
});

test("AppDatabases keeps apps out of each other's databases", async (t) => {
  const { c, databases } = setup();
  const spec = (name: string, database: string) =>
    canonicalize({
      name,
      deploy: true,
      processes: { web: { port: 8080 } },
      infrastructure: { postgres: { database } },
    });
  const a = infrastructureEnvironment(
    spec('app-a', 'db_a'),
    await databases.settingsFor('app-a', spec('app-a', 'db_a')),
  );
  await databases.settingsFor('app-b', spec('app-b', 'db_b'));
  const password = fs.readFileSync(a.PGPASSFILE!, 'utf8').trim().split(':')[4]!;
  const intrusion = asApp({ ...a, PGDATABASE: 'db_b', PGPASSWORD: password }, 'SELECT 1', c.binDir);
  t.not(intrusion.status, 0);
  t.regex(intrusion.stderr, /permission denied for database "db_b"/);
  const wrong = asApp({ ...a, PGPASSFILE: '/dev/null', PGPASSWORD: 'guess' }, 'SELECT 1', c.binDir);
  t.regex(wrong.stderr, /password authentication failed/);
  await t.throwsAsync(databases.settingsFor('app-c', spec('app-c', 'db_a')), {
    instanceOf: ConflictError,
    message: /database db_a already exists and belongs to role app_app_a, not app_app_c/,
  });
});

test('PostgresTools restores and migrates as the database owner on the managed server', async (t) => {
  const { managed, tools, credentials } = setup();
  const credential = credentials.ensure('owner-app', 'owned');
  await tools.ensureRoleAndDatabase(credential.role, scramSha256Verifier(credential.password), 'owned');
  const dir = fs.mkdtempSync('/tmp/svc-appdb-mig-');
  t.teardown(() => fs.rmSync(dir, { recursive: true, force: true }));
  fs.writeFileSync(path.join(dir, '001.sql'), 'CREATE TABLE t (v int);');
  t.deepEqual((await tools.applyMigrations('owned', dir)).applied, ['001.sql']);
  t.is(
    superuserPsql(
      managed,
      "SELECT string_agg(tableowner, ',' ORDER BY tablename) FROM pg_tables WHERE schemaname = 'public'",
      'owned',
    ).trim(),
    `${appRoleName('owner-app')},${appRoleName('owner-app')}`,
  );
  const dump = path.join(dir, 'owned.dump');
  await tools.dump('owned', dump);
  await tools.restore('owned', dump);
  t.is(
    superuserPsql(managed, "SELECT tableowner FROM pg_tables WHERE tablename = 't'", 'owned').trim(),
    appRoleName('owner-app'),
  );
});

test("scramSha256Verifier produces PostgreSQL's stored form", (t) => {
  const verifier = scramSha256Verifier('pencil', Buffer.from('0123456789abcdef'), 4096);
  t.regex(verifier, /^SCRAM-SHA-256\$4096:MDEyMzQ1Njc4OWFiY2RlZg==\$[A-Za-z0-9+/]{43}=:[A-Za-z0-9+/]{43}=$/);
  t.throws(() => scramSha256Verifier('pass word'), { message: /printable ASCII/ });
});
