// tier: full
import fs from 'node:fs';
import path from 'node:path';
import test from 'ava';
import { runSvc } from '../helpers/cli.js';
import { tempDir } from '../helpers/temp-dir.js';
import { REPO_ROOT } from '../helpers/repo.js';

const root = REPO_ROOT;

test('svc validate passes every sample app', async (t) => {
  const result = await runSvc(['validate', path.join(root, 'fixtures/apps')]);
  t.is(result.code, 0, result.stdout + result.stderr);
  t.is(result.stdout, '');
  t.regex(result.stderr, /file\(s\) checked, 0 invalid/);
});

test('svc validate prints file:line:col rule message and exits 1 on an error', async (t) => {
  const dir = tempDir(t);
  const file = path.join(dir, 'infraspec.yaml');
  fs.writeFileSync(file, 'name: demo\nprocesses:\n  web:\n    port: 8080\n    health:\n      interval: "10"\n');
  const result = await runSvc(['validate', file]);
  t.is(result.code, 1);
  const line = result.stdout
    .trim()
    .split('\n')
    .find((l) => l.includes('processes.web.health.interval'));
  t.truthy(line, result.stdout);
  t.true(line!.startsWith(`${file}:6:`), line);
  t.regex(line!, /^\S+:6:\d+ duration\.go /);
});

test('svc validate with no paths checks SVC_APPS_DIR', async (t) => {
  const apps = tempDir(t);
  fs.cpSync(path.join(root, 'fixtures/apps'), apps, { recursive: true });
  const ok = await runSvc(['validate'], { env: { SVC_APPS_DIR: apps } });
  t.is(ok.code, 0, ok.stdout + ok.stderr);
  fs.writeFileSync(path.join(apps, 'hello-web', 'infraspec.yaml'), 'name: hello-web\nprocesses: []\n');
  const bad = await runSvc(['validate', '--json'], { env: { SVC_APPS_DIR: apps } });
  t.is(bad.code, 1);
  const parsed = JSON.parse(bad.stdout) as { valid: boolean; files: { key: string; valid: boolean }[] };
  t.false(parsed.valid);
  t.false(parsed.files.find((f) => f.key === 'hello-web')!.valid);
});

test('svc validate names a missing path', async (t) => {
  const result = await runSvc(['validate', '/nonexistent/spec.yaml']);
  t.not(result.code, 0);
  t.regex(result.stderr, /no such file or folder/);
});

test('svc validate warns about placement.nodePool on the local driver with file:line:col, and not on kubernetes', async (t) => {
  const fixture = 'fixtures/specs/valid/placement-fleet.yaml';
  const [local, fromEnv, kubernetes, unknown] = await Promise.all([
    runSvc(['validate', fixture], { cwd: root, env: { SVC_SCHEDULER_DRIVER: '' } }),
    runSvc(['validate', fixture], { cwd: root, env: { SVC_SCHEDULER_DRIVER: 'kubernetes' } }),
    runSvc(['validate', '--driver', 'kubernetes', fixture], { cwd: root }),
    runSvc(['validate', '--driver', 'nomad', fixture], { cwd: root }),
  ]);
  // A warning is not an error: the spec stays valid.
  t.is(local.code, 0, local.stderr);
  t.regex(
    local.stdout,
    /^fixtures\/specs\/valid\/placement-fleet\.yaml:7:13 warning driver\.nodePool placement\.nodePool: "batch" is not applied on the local driver: .*one host.*; remove placement\.nodePool, or run the app on the kubernetes driver/m,
  );
  t.is(fromEnv.code, 0);
  t.is(fromEnv.stdout, '');
  t.is(kubernetes.code, 0);
  t.is(kubernetes.stdout, '');
  t.is(unknown.code, 2);
  t.regex(unknown.stderr, /--driver must be local, kubernetes or swarm, got "nomad"/);
});
