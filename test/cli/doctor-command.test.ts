// tier: full
import { spawnSync } from 'node:child_process';
import fs from 'node:fs';
import net from 'node:net';
import path from 'node:path';
import test from 'ava';
import { doctorCheck, doctorReport, versionAtLeast, type DoctorReport } from '../../domain/doctor/index.js';
import { runSvc } from '../helpers/cli.js';
import { appUsersOf } from '../../platform/local-scheduler/isolation/app-leftovers.js';
import { tempDir } from '../helpers/temp-dir.js';

/** Settings of a doctor run: a fresh data folder, ports 0 (skipped), the managed server on. */
function doctorEnv(t: Parameters<typeof tempDir>[0], env: Record<string, string> = {}): Record<string, string> {
  const root = tempDir(t, 'svc-doctor-');
  fs.chmodSync(root, 0o755);
  return {
    SVC_DATA_DIR: path.join(root, 'data'),
    SVC_PORT: '0',
    SVC_KNOWLEDGE_PORT: '0',
    SVC_KNOWLEDGE_ADMIN_PORT: '0',
    SVC_POSTGRES_MANAGED: '',
    SVC_POSTGRES_HOST: '',
    ...env,
  };
}

const check = (report: DoctorReport, id: string) => report.checks.find((c) => c.id === id);

(process.getuid?.() === 0 ? test : test.skip)(
  'svc doctor lists app users of deleted apps and orphaned ones, with the fix',
  async (t) => {
    const env = doctorEnv(t);
    const orphan = `svc-app-orphan-${process.pid.toString(36)}`;
    const gone = `gone-${process.pid.toString(36)}`;
    for (const name of [orphan, `svc-app-${gone}`]) spawnSync('useradd', ['--system', '--no-create-home', name]);
    t.teardown(() => {
      for (const name of [orphan, `svc-app-${gone}`]) spawnSync('userdel', [name]);
    });
    // A deleted app of this data folder whose volume holds data, recorded by the retirement sweep.
    fs.mkdirSync(path.join(env.SVC_DATA_DIR!, 'app-data', gone, 'volumes', 'files'), { recursive: true });
    fs.writeFileSync(path.join(env.SVC_DATA_DIR!, 'app-data', gone, 'volumes', 'files', 'a.bin'), 'x');
    fs.writeFileSync(
      path.join(env.SVC_DATA_DIR!, 'retired-apps.json'),
      JSON.stringify({ [gone]: '2026-01-01T00:00:00.000Z' }),
    );
    const result = await runSvc(['doctor', '--json'], { env });
    const leftovers = check(JSON.parse(result.stdout) as DoctorReport, 'apps.leftovers');
    t.like(leftovers, { status: 'warn', required: false });
    // The host may hold many orphans (the detail names ten): which user is whose comes from appUsersOf.
    t.regex(leftovers!.detail, /orphaned \(no app folder in /);
    const users = await appUsersOf(env.SVC_DATA_DIR!);
    t.like(
      users.find((u) => u.user === orphan),
      { app: undefined },
    );
    t.like(
      users.find((u) => u.user === `svc-app-${gone}`),
      { app: gone },
    );
    t.regex(leftovers!.detail, new RegExp(`volumes hold data: svc-app-${gone}`));
    t.regex(leftovers!.fix ?? '', /userdel <name>/);
  },
);

test('svc doctor passes on this host and reports every check', async (t) => {
  // Containers where podman answers (npm test runs the platforms it starts with native).
  const result = await runSvc(['doctor', '--json'], { env: doctorEnv(t, { SVC_CONTAINER_RUNTIME: 'auto' }) });
  t.is(result.code, 0, result.stdout + result.stderr);
  const report = JSON.parse(result.stdout) as DoctorReport;
  t.true(report.ok);
  t.deepEqual(
    report.checks.map((c) => c.id),
    [
      'node',
      'git',
      'postgres.binaries',
      'postgres.server',
      'promtool',
      'cgroups.cpu',
      'cgroups.memory',
      'containers.engine',
      'containers.oci-runtime',
      'containers.cgroups',
      'containers.rlimits',
      'containers.registry',
      'containers.base-images',
      'ports.control',
      'ports.knowledge',
      'ports.knowledge-admin',
      'knowledge.sample-write',
      'data.layout',
      'data.permissions',
      'data.disk',
      ...(process.getuid!() === 0
        ? ['apps.users', 'apps.passage', 'apps.leftovers', 'data.hosted_leftovers']
        : ['apps.users']),
      'clock',
    ],
  );
  // As root apps run as their own users; otherwise doctor says they share the platform's.
  if (process.getuid!() === 0) {
    t.like(check(report, 'apps.users'), { status: 'pass', required: false });
    t.regex(check(report, 'apps.users')!.detail, /apps run as their own system users \(svc-app-<name>/);
    t.like(check(report, 'apps.passage'), { status: 'pass' });
  } else {
    t.like(check(report, 'apps.users'), { status: 'warn' });
  }
  t.like(check(report, 'postgres.binaries'), { status: 'pass', required: true });
  t.like(check(report, 'ports.control'), { status: 'skip' });
  t.like(check(report, 'containers.engine'), { status: 'pass', required: false });
  t.like(check(report, 'containers.base-images'), { status: 'pass' });
  for (const c of report.checks)
    t.true(c.status === 'pass' || c.fix !== undefined || c.status === 'skip', `${c.id} says how to fix it`);

  const text = await runSvc(['doctor'], { env: doctorEnv(t) });
  t.is(text.code, 0);
  t.regex(text.stdout, /^ok {4}Node\.js: v\d+/m);
  t.regex(text.stdout, /ready: every required check passed/);
});

test('svc doctor exits 1 when git is not on the PATH, printing the fix', async (t) => {
  const result = await runSvc(['doctor'], { env: doctorEnv(t, { PATH: '/nonexistent' }) });
  t.is(result.code, 1, result.stdout + result.stderr);
  t.regex(result.stdout, /^FAIL {2}git .*: git is not on the PATH\n {6}fix: apt-get install git$/m);
  t.regex(result.stdout, /not ready: \d+ required check\(s\) failed/);
});

test('svc doctor exits 1 when the PostgreSQL server programs are missing, naming the package', async (t) => {
  const result = await runSvc(['doctor', '--json'], {
    env: doctorEnv(t, { SVC_POSTGRES_BIN_DIR: '/nonexistent/bin' }),
  });
  t.is(result.code, 1);
  const report = JSON.parse(result.stdout) as DoctorReport;
  t.false(report.ok);
  t.like(check(report, 'postgres.binaries'), { status: 'fail', required: true });
  t.regex(check(report, 'postgres.binaries')!.fix!, /apt-get install postgresql/);
});

test('svc doctor exits 1 when another program holds the control plane port', async (t) => {
  const holder = net.createServer();
  await new Promise<void>((resolve) => holder.listen(0, '127.0.0.1', resolve));
  t.teardown(() => holder.close());
  const port = (holder.address() as net.AddressInfo).port;
  const result = await runSvc(['doctor', '--json'], { env: doctorEnv(t, { SVC_PORT: String(port) }) });
  t.is(result.code, 1);
  const report = JSON.parse(result.stdout) as DoctorReport;
  t.like(check(report, 'ports.control'), { status: 'fail', detail: `127.0.0.1:${port} is used by another program` });
});

test('svc doctor reports a bad setting as a failed check instead of crashing', async (t) => {
  const result = await runSvc(['doctor', '--json'], { env: doctorEnv(t, { SVC_PORT: 'abc' }) });
  t.is(result.code, 1);
  t.like((JSON.parse(result.stdout) as DoctorReport).checks[0], { id: 'config', status: 'fail' });
});

test('doctorReport fails only on a failed required check, and versionAtLeast compares numerically', (t) => {
  t.true(versionAtLeast('20.18.0', '20.18'));
  t.true(versionAtLeast('v22.1.0', '20.18'));
  t.false(versionAtLeast('20.9.0', '20.18'));
  const optional = doctorCheck({ id: 'x', title: 'x', required: false, status: 'fail', detail: 'd', fix: 'f' });
  t.is(optional.status, 'warn');
  t.true(doctorReport([optional]).ok);
  t.false(
    doctorReport([doctorCheck({ id: 'y', title: 'y', required: true, status: 'fail', detail: 'd', fix: 'f' })]).ok,
  );
  t.is(doctorCheck({ id: 'z', title: 'z', required: true, status: 'pass', detail: 'd', fix: 'f' }).fix, undefined);
});
