// tier: full
/**
 * The README's quick start, end to end: an empty data folder, the platform started as `npm start`
 * starts it (`svc serve` with the sample apps copied into a git repository), every `deploy: true`
 * sample app deployed with `svc deploy --follow` until Ready, then a SIGKILL of the platform and a
 * start again with the managed PostgreSQL data intact. The data folder lies under a 0700 parent, as a
 * checkout under /root does: the platform keeps what other users reach in a hosted folder (ADR 0157).
 */
import { execFileSync, type ChildProcess } from 'node:child_process';
import fs from 'node:fs';
import path from 'node:path';
import test from 'ava';
import { parse } from 'yaml';
import { readHostedFolder } from '../../platform/files/hosted-folder.js';
import { managedPostgresLayout } from '../../platform/postgres/managed-postgres.js';
import { runSvc, startSvc } from '../helpers/cli.js';
import { request } from '../helpers/http-request.js';
import { stopAppsIn } from '../helpers/stop-apps.js';
import { tempDir } from '../helpers/temp-dir.js';
import { REPO_ROOT } from '../helpers/repo.js';

const FIXTURE_APPS = path.join(REPO_ROOT, 'fixtures/apps');

/** The sample apps the quick start deploys: every `deploy: true` spec. */
const DEPLOYABLE = fs
  .readdirSync(FIXTURE_APPS)
  .filter((name) => fs.existsSync(path.join(FIXTURE_APPS, name, 'infraspec.yaml')))
  .filter(
    (name) =>
      (parse(fs.readFileSync(path.join(FIXTURE_APPS, name, 'infraspec.yaml'), 'utf8')) as { deploy?: boolean })
        .deploy === true,
  )
  .sort();

/** What scripts/start.sh does before `svc serve`: the sample apps copied into a git repository. */
function copySampleApps(appsDir: string): void {
  fs.mkdirSync(appsDir, { recursive: true });
  fs.cpSync(FIXTURE_APPS, appsDir, { recursive: true });
  const git = (...args: string[]) =>
    execFileSync('git', ['-C', appsDir, '-c', 'user.name=svc', '-c', 'user.email=svc@localhost', ...args]);
  git('init', '-q', '-b', 'main');
  git('add', '-A');
  git('commit', '-q', '-m', 'sample apps');
}

/** psql as the managed server's superuser (over its socket), the way an operator would look. */
function psql(dataDir: string, sql: string, database = 'postgres'): string {
  const layout = managedPostgresLayout(dataDir);
  const { port } = JSON.parse(fs.readFileSync(layout.stateFile, 'utf8')) as { port: number };
  return execFileSync(
    '/usr/lib/postgresql/15/bin/psql',
    [
      '-h',
      layout.run,
      '-p',
      String(port),
      '-U',
      'postgres',
      '-d',
      database,
      '-X',
      '-At',
      '-v',
      'ON_ERROR_STOP=1',
      '-c',
      sql,
    ],
    {
      encoding: 'utf8',
      env: { PATH: process.env.PATH, PGPASSWORD: fs.readFileSync(layout.superuserPasswordFile, 'utf8').trim() },
    },
  ).trim();
}

async function serve(env: Record<string, string>): Promise<{ child: ChildProcess; url: string; output: () => string }> {
  const started = await startSvc(['serve'], (line) => line.msg === 'control plane listening', {
    env,
    timeoutMs: 90_000,
  });
  return { child: started.child, url: String(started.line.url), output: started.output };
}

function kill(child: ChildProcess, signal: NodeJS.Signals): Promise<void> {
  if (child.exitCode !== null || child.signalCode !== null) return Promise.resolve();
  return new Promise((resolve) => {
    child.once('exit', () => resolve());
    child.kill(signal);
  });
}

test('the quick start deploys every sample app on the embedded default, and a SIGKILLed or restarted platform keeps its PostgreSQL server and data', async (t) => {
  t.timeout(300_000);
  t.true(
    DEPLOYABLE.includes('ledger-api') && DEPLOYABLE.includes('hello-web'),
    `deployable sample apps: ${DEPLOYABLE.join(', ')}`,
  );
  const root = tempDir(t, 'svc-quick-');
  // Private, as /root is on Debian: neither PostgreSQL nor the app users can enter it.
  fs.chmodSync(root, 0o700);
  const dataDir = path.join(root, 'data');
  const env = {
    SVC_DATA_DIR: dataDir,
    SVC_APPS_DIR: path.join(dataDir, 'apps'),
    SVC_SNAPSHOTS_DIR: path.join(root, 'snapshots'),
    SVC_PORT: '0',
    SVC_KNOWLEDGE_PORT: '0',
    SVC_KNOWLEDGE_ADMIN_PORT: '0',
    SVC_LOG_LEVEL: 'info',
    SVC_POSTGRES_MANAGED: '',
    SVC_POSTGRES_HOST: '',
    // As `npm start` runs: apps in their own images where podman answers (it does where the suite
    // installed it), hello-ruby among them. The mirror of base images has its own test.
    SVC_CONTAINER_RUNTIME: 'auto',
    SVC_REGISTRY_MIRROR: 'false',
  };
  copySampleApps(env.SVC_APPS_DIR);
  const children: ChildProcess[] = [];
  t.teardown(async () => {
    for (const child of children) await kill(child, 'SIGTERM');
    await stopAppsIn(dataDir);
    const hosted = readHostedFolder(dataDir);
    if (hosted !== undefined) fs.rmSync(hosted, { recursive: true, force: true });
  });

  const first = await serve(env);
  children.push(first.child);
  t.regex(first.output(), /managed PostgreSQL cluster created/);
  // The hosted folder: named in the data folder, outside it, enterable; the data folder's links lead there.
  const hosted = readHostedFolder(dataDir);
  t.truthy(hosted, 'a data folder under a 0700 parent gets a hosted folder');
  t.false(hosted!.startsWith(root), hosted);
  t.is(fs.realpathSync(managedPostgresLayout(dataDir).cluster), path.join(hosted!, 'postgres', 'cluster'));
  t.is(fs.statSync(root).mode & 0o777, 0o700, 'the private parent stays private');
  t.regex(first.output(), /app folders live in a hosted folder/);
  const deploys = await Promise.all(
    DEPLOYABLE.map((app) => runSvc(['deploy', app, '--follow', '--api', first.url], { timeoutMs: 180_000 })),
  );
  deploys.forEach((result, index) => t.is(result.code, 0, `${DEPLOYABLE[index]}: ${result.stdout}${result.stderr}`));
  t.regex(deploys[DEPLOYABLE.indexOf('ledger-api')]!.stdout, /migrate\s+succeeded.*3 migration\(s\) applied to ledger/);

  // Every deployable sample app becomes Ready (observed over the API, as `svc apps` does).
  const deadline = Date.now() + 60_000;
  let notReady: string[] = DEPLOYABLE;
  while (notReady.length > 0 && Date.now() < deadline) {
    const { body } = await request(`${first.url}/api/apps`);
    const apps = (body.items ?? body.apps ?? body) as {
      name: string;
      conditions: { type: string; status: string }[];
    }[];
    notReady = DEPLOYABLE.filter(
      (name) => apps.find((a) => a.name === name)?.conditions.find((c) => c.type === 'Ready')?.status !== 'True',
    );
    if (notReady.length > 0) await new Promise((resolve) => setTimeout(resolve, 250));
  }
  t.deepEqual(notReady, [], 'every deploy: true sample app is Ready');

  // Into the app (issue 28): `svc exec hello-web -- id` runs as the app's own user, never root.
  const id = await runSvc(['exec', 'hello-web', '--api', first.url, '--', 'id']);
  t.is(id.code, 0, id.stderr);
  t.regex(id.stdout, process.getuid?.() === 0 ? /^uid=[1-9]\d*\(svc-app-hello-web\)/ : /^uid=\d+/);

  // ledger-api's migrations ran against the managed server, as the app's own role.
  t.is(
    psql(dataDir, "SELECT string_agg(filename, ',' ORDER BY filename) FROM svc_schema_migrations", 'ledger'),
    '001_create_entries.sql,002_add_entry_memo.sql,003_index_entries_account.sql',
  );
  t.is(psql(dataDir, "SELECT tableowner FROM pg_tables WHERE tablename = 'entries'", 'ledger'), 'app_ledger_api');
  psql(dataDir, "INSERT INTO entries (account, amount_cents, memo) VALUES ('cash', 1250, 'before the kill')", 'ledger');
  const snapshots = await request(`${first.url}/api/v1/apps/ledger-api/snapshots`);
  t.is(snapshots.status, 200);
  t.true(JSON.stringify(snapshots.body).includes('ledger_predeploy_'), JSON.stringify(snapshots.body));

  // The app's password is in its 0600 password file and nowhere the platform shows or logs.
  const passfile = path.join(managedPostgresLayout(dataDir).credentials, 'ledger-api.pgpass');
  t.is(fs.statSync(passfile).mode & 0o777, 0o600);
  const password = fs.readFileSync(passfile, 'utf8').trim().split(':')[4]!;
  const shown = await Promise.all(
    [
      '/api/apps',
      '/api/apps/ledger-api',
      '/api/events?limit=500',
      '/api/secrets/migration-plan?app=ledger-api',
      '/api/ops/platform',
    ].map((p) => request(`${first.url}${p}`)),
  );
  for (const response of shown) t.false(response.text.includes(password), 'a response holds the app password');
  t.false(first.output().includes(password), 'the platform log holds the app password');
  t.false(deploys.some((d) => d.stdout.includes(password) || d.stderr.includes(password)));

  const doctor = await runSvc(['doctor', '--json'], { env: { ...env, SVC_PORT: '8800' } });
  const layout = (
    JSON.parse(doctor.stdout) as { checks: { id: string; status: string; detail: string }[] }
  ).checks.find((check) => check.id === 'data.layout');
  t.is(layout?.status, 'pass', doctor.stdout);
  t.true(layout?.detail.includes(hosted!), layout?.detail);

  const inbox = await runSvc(['inbox', '--api', first.url]);
  t.is(inbox.code, 0, `svc inbox shows something critical: ${inbox.stdout}${inbox.stderr}`);
  t.regex(inbox.stdout, /^critical 0,/m);

  // SIGKILL: the postmaster outlives the platform; the next start adopts it and the data is there.
  const postmaster = Number(
    fs.readFileSync(path.join(managedPostgresLayout(dataDir).cluster, 'postmaster.pid'), 'utf8').split('\n')[0],
  );
  await kill(first.child, 'SIGKILL');
  const second = await serve(env);
  children.push(second.child);
  t.regex(second.output(), /managed PostgreSQL adopted/);
  t.is(
    Number(fs.readFileSync(path.join(managedPostgresLayout(dataDir).cluster, 'postmaster.pid'), 'utf8').split('\n')[0]),
    postmaster,
  );
  t.is(psql(dataDir, 'SELECT memo FROM entries', 'ledger'), 'before the kill');
  const after = await request(`${second.url}/api/v1/apps/ledger-api/snapshots`);
  t.true(JSON.stringify(after.body).includes('ledger_predeploy_'));

  // A restart by the host agent (SIGUSR2, ADR 0086): the API stops but the managed server keeps
  // running, so apps keep their database while no API runs; the next API adopts it.
  await kill(second.child, 'SIGUSR2');
  t.is(second.child.exitCode, 0, second.output().slice(-2000));
  t.regex(second.output(), /managed PostgreSQL left running for the next start to adopt/);
  t.is(psql(dataDir, 'SELECT memo FROM entries', 'ledger'), 'before the kill', 'the server answers while no API runs');
  const third = await serve(env);
  children.push(third.child);
  t.regex(third.output(), /managed PostgreSQL adopted/);
  t.is(
    Number(fs.readFileSync(path.join(managedPostgresLayout(dataDir).cluster, 'postmaster.pid'), 'utf8').split('\n')[0]),
    postmaster,
  );

  // A clean stop stops the server too (fast shutdown).
  await kill(third.child, 'SIGTERM');
  t.false(
    fs.existsSync(path.join(managedPostgresLayout(dataDir).cluster, 'postmaster.pid')),
    'SIGTERM stops the managed server',
  );
});
