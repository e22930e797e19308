// tier: full
/**
 * The ledger-api sample keeps its entries in the PostgreSQL database the platform provides: on a
 * platform with the managed server, an entry posted over HTTP survives a redeploy of a new commit,
 * and a snapshot restored through the platform's restore operation brings back exactly the entries
 * it holds, as the app serves them.
 */
import fs from 'node:fs';
import path from 'node:path';
import test from 'ava';
import type { ControlPlane } from '../../wiring/control-plane.js';
import { managedDataDir, superuserPsql } from '../helpers/managed-postgres.js';
import { request } from '../helpers/http-request.js';
import { REPO_ROOT } from '../helpers/repo.js';
import { tempDir } from '../helpers/temp-dir.js';
import { git, initAppsRepo, pipelineConfig, startPlane, waitForApp } from '../pipeline/pipeline-fixture.js';

// A name of its own: app users are host-wide, and other tests run the sample as ledger-api meanwhile.
const APP = 'ledger-kept';
const SAMPLE = path.join(REPO_ROOT, 'fixtures/apps/ledger-api');

interface Entry {
  readonly id: number;
  readonly account: string;
  readonly amountCents: number;
  readonly memo: string | null;
  readonly createdAt: string;
}

/** Queues `POST /api/apps/<app>/deploy` and waits for its operation; returns its status, step summary and step messages. */
async function deploy(
  plane: ControlPlane,
): Promise<{ status: string; steps: string; messages: Record<string, string>; detail: string }> {
  const queued = await request(`${plane.url}/api/apps/${APP}/deploy`, { method: 'POST', json: {} });
  if (queued.status !== 202) throw new Error(`deploy answered ${queued.status}: ${queued.text}`);
  // npm ci of the release (pg from the registry or npm's cache), a snapshot and the migrations.
  const operation = await plane.deploys.worker.waitFor(queued.body.operation.id, 180_000);
  const steps = (await request(`${plane.url}/api/v1/deployments/${queued.body.deploymentId}/steps`)).body as {
    steps: { step: string; status: string; message?: string; output?: string }[];
  };
  return {
    status: operation.status,
    steps: steps.steps.map((s) => `${s.step} ${s.status}`).join(', '),
    messages: Object.fromEntries(steps.steps.map((s) => [s.step, s.message ?? ''])),
    detail: `${operation.lastError ?? ''}\n${steps.steps.map((s) => `${s.step}: ${s.message ?? ''}\n${s.output ?? ''}`).join('\n')}`,
  };
}

/** The base URL of the app's running web allocation of the newest job version, with the release it runs. */
async function appUrl(plane: ControlPlane): Promise<{ url: string; commit: string | undefined }> {
  const app = (await request(`${plane.url}/api/apps/${APP}`)).body as {
    release: { commit: string } | null;
    processes: {
      process: string;
      allocations: { status: string; desiredStatus: string; jobVersion: number; ports: Record<string, number> }[];
    }[];
  };
  const running = (app.processes.find((p) => p.process === 'web')?.allocations ?? [])
    .filter((a) => a.status === 'running' && a.desiredStatus === 'run')
    .sort((a, b) => b.jobVersion - a.jobVersion);
  const port = running[0]?.ports.http;
  if (port === undefined) throw new Error(`${APP} has no running web allocation: ${JSON.stringify(app.processes)}`);
  return { url: `http://127.0.0.1:${port}`, commit: app.release?.commit };
}

async function entries(url: string): Promise<{ entries: Entry[]; balanceCents: number }> {
  const response = await request(`${url}/entries`);
  if (response.status !== 200) throw new Error(`GET /entries answered ${response.status}: ${response.text}`);
  return response.body as { entries: Entry[]; balanceCents: number };
}

/** POSTs with an Idempotency-Key to the versioned API and waits for the queued operation to succeed; returns its result. */
async function operation(plane: ControlPlane, url: string, key: string, json: unknown): Promise<Record<string, any>> {
  const queued = await request(`${plane.url}${url}`, { method: 'POST', json, headers: { 'idempotency-key': key } });
  if (queued.status !== 202) throw new Error(`POST ${url} answered ${queued.status}: ${queued.text}`);
  const done = await plane.deploys.worker.waitFor(queued.body.operation.id, 60_000);
  if (done.status !== 'succeeded') throw new Error(`POST ${url}: ${done.status} ${done.lastError ?? ''}`);
  return (await request(`${plane.url}/api/v1/operations/${queued.body.operation.id}`)).body.result;
}

test('ledger-api keeps its entries in its managed database across a redeploy, and a restored snapshot brings them back over HTTP', async (t) => {
  t.timeout(420_000);
  const config = pipelineConfig(t, {
    SVC_DATA_DIR: managedDataDir(t),
    SVC_SNAPSHOTS_DIR: path.join(tempDir(t), 'snapshots'),
    SVC_POSTGRES_MANAGED: 'true',
    SVC_DEPLOY_HEALTHY_TIMEOUT: '60s',
  });
  initAppsRepo(config);
  const folder = path.join(config.appsDir, APP);
  fs.cpSync(SAMPLE, folder, { recursive: true, filter: (source) => path.basename(source) !== 'node_modules' });
  const spec = path.join(folder, 'infraspec.yaml');
  fs.writeFileSync(spec, fs.readFileSync(spec, 'utf8').replace('name: ledger-api\n', `name: ${APP}\n`));
  git(config.appsDir, 'add', '-A');
  git(config.appsDir, 'commit', '-q', '-m', `${APP} from the sample`);
  const plane = await startPlane(t, config);
  const server = plane.managedPostgres;
  if (server === undefined) throw new Error('the platform started no managed PostgreSQL server');
  await waitForApp(plane, APP);

  const first = await deploy(plane);
  t.is(first.status, 'succeeded', first.detail);
  t.regex(first.steps, /build succeeded.*snapshot succeeded.*migrate succeeded.*healthy succeeded/, first.steps);
  t.regex(first.messages.migrate ?? '', /^3 migration\(s\) applied to ledger/);
  let app = await appUrl(plane);
  const health = await request(`${app.url}/healthz`);
  t.is(health.status, 200, health.text);
  t.like(health.body, { status: 'ok', databaseConfigured: true, database: 'reachable' });

  // Input is checked before anything is written.
  const invalid = await request(`${app.url}/entries`, { method: 'POST', json: { account: 'cash', amountCents: 12.5 } });
  t.is(invalid.status, 400);
  t.is(invalid.body.error.code, 'invalid_entry');
  t.regex(invalid.body.error.message, /^amountCents: must be an integer number of cents/);
  const posted = await request(`${app.url}/entries`, {
    method: 'POST',
    json: { account: 'cash', amountCents: 1250, memo: 'opening balance' },
  });
  t.is(posted.status, 201, posted.text);
  const opening = posted.body as Entry;
  t.like(opening, { account: 'cash', amountCents: 1250, memo: 'opening balance' });
  // The row is in the app's database, where the platform's snapshots and backups see it.
  t.is(
    superuserPsql(server, 'SELECT account, amount_cents, memo FROM entries', 'ledger').trim(),
    'cash|1250|opening balance',
  );
  t.deepEqual(await entries(app.url), { entries: [opening], balanceCents: 1250 });

  // A new commit of the app (one more migration) deploys a new release; the entry is still served.
  fs.writeFileSync(
    path.join(folder, 'migrations', '004_index_entries_created_at.sql'),
    '-- Entries are listed in the order they were made.\nCREATE INDEX entries_created_at_idx ON entries (created_at);\n',
  );
  git(config.appsDir, 'add', '-A');
  git(config.appsDir, 'commit', '-q', '-m', `${APP}: index entries by time`);
  const commit = git(config.appsDir, 'rev-parse', 'HEAD');
  const second = await deploy(plane);
  t.is(second.status, 'succeeded', second.detail);
  t.regex(
    second.messages.snapshot ?? '',
    /^dumped ledger to ledger_predeploy_/,
    'the entry is in the predeploy snapshot',
  );
  t.regex(
    second.messages.migrate ?? '',
    /^1 migration\(s\) applied to ledger: 004_index_entries_created_at\.sql; 3 already/,
  );
  app = await appUrl(plane);
  t.is(app.commit, commit, 'the new commit runs');
  t.deepEqual(await entries(app.url), { entries: [opening], balanceCents: 1250 }, 'the entry survives the redeploy');

  const snapshot = await operation(plane, `/api/v1/apps/${APP}/snapshots`, 'ledger-snapshot', {});
  t.regex(snapshot.snapshot, /^ledger_manual_/);

  // After the snapshot: a new entry over HTTP, and the opening entry deleted behind the app's back.
  const later = await request(`${app.url}/entries`, {
    method: 'POST',
    json: { account: 'cash', amountCents: -800, memo: 'after the snapshot' },
  });
  t.is(later.status, 201, later.text);
  superuserPsql(server, `DELETE FROM entries WHERE id = ${opening.id}`, 'ledger');
  t.deepEqual(await entries(app.url), { entries: [later.body as Entry], balanceCents: -800 });

  const restored = await operation(
    plane,
    `/api/v1/apps/${APP}/snapshots/${snapshot.snapshot}/restore`,
    'ledger-restore',
    { confirm: true },
  );
  t.is(restored.restoredSnapshot, snapshot.snapshot);
  t.regex(restored.safetySnapshot, /^ledger_prerestore_/, 'snapshots.preRestore: the state before is kept');
  // The running app's pool reads the restored tables: the opening entry is back, the later one gone.
  t.deepEqual(await entries(app.url), { entries: [opening], balanceCents: 1250 });
  const afterRestore = await request(`${app.url}/entries`, {
    method: 'POST',
    json: { account: 'card', amountCents: 300 },
  });
  t.is(afterRestore.status, 201, afterRestore.text);
  t.like(afterRestore.body, { account: 'card', amountCents: 300, memo: null });
  t.is((await entries(app.url)).balanceCents, 1550);
  t.is((await request(`${app.url}/healthz`)).status, 200);
});
