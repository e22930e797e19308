// tier: full
/**
 * The container checks of `svc doctor` against this host's real podman, OCI runtime and registry
 * program (ADR 0219): what passes, a missing OCI runtime, and limits above the host's hard limits.
 */
import { execFileSync } from 'node:child_process';
import fs from 'node:fs';
import test from 'ava';
import { BASE_IMAGES, containerChecks } from '../../../controllers/doctor/container-checks.js';
import type { DoctorCheck } from '../../../domain/doctor/index.js';
import { hardLimit } from '../../../platform/containers/engine-probe.js';
import { testConfig } from '../../helpers/test-config.js';

const check = (checks: readonly DoctorCheck[], id: string) => checks.find((c) => c.id === id);

const CONTAINER_IDS = [
  'containers.engine',
  'containers.oci-runtime',
  'containers.cgroups',
  'containers.rlimits',
  'containers.registry',
  'containers.base-images',
];

test('the container checks pass on this host, naming podman and runc', async (t) => {
  const podmanVersion = /(\d+\.\d+\.\d+)/.exec(execFileSync('podman', ['--version'], { encoding: 'utf8' }))![1]!;
  const checks = await containerChecks(testConfig(t, { SVC_CONTAINER_RUNTIME: 'auto' }));
  t.deepEqual(
    checks.map((c) => c.id),
    CONTAINER_IDS,
  );
  for (const c of checks) t.like(c, { status: 'pass', required: false, fix: undefined }, `${c.id}: ${c.detail}`);
  t.is(check(checks, 'containers.engine')!.detail, `podman ${podmanVersion}`);
  t.regex(check(checks, 'containers.oci-runtime')!.title, /\(runc\)/);
  t.regex(check(checks, 'containers.oci-runtime')!.detail, /\/runc: runc version \d/);
  t.regex(check(checks, 'containers.cgroups')!.detail, /^cgroup v\d, manager \w+, memory controller present/);
  t.regex(check(checks, 'containers.rlimits')!.detail, /^nofile 4096, nproc 1024 \(host hard limits/);
  t.regex(check(checks, 'containers.registry')!.detail, /docker\/distribution/);
  for (const image of BASE_IMAGES) t.true(check(checks, 'containers.base-images')!.detail.includes(image));

  // SVC_CONTAINER_RUNTIME=podman makes them required.
  const required = await containerChecks(testConfig(t, { SVC_CONTAINER_RUNTIME: 'podman' }));
  t.true(required.every((c) => c.status === 'pass' && c.required === (c.id !== 'containers.base-images')));
});

test('a missing OCI runtime fails its check with a fix naming SVC_CONTAINER_OCI_RUNTIME', async (t) => {
  const env = { SVC_CONTAINER_OCI_RUNTIME: 'no-such-runtime' };
  const checks = await containerChecks(testConfig(t, { ...env, SVC_CONTAINER_RUNTIME: 'podman' }));
  t.deepEqual(
    checks.map((c) => c.id),
    CONTAINER_IDS,
  );
  // podman answers with its default runtime: the engine is fine, the configured runtime is not.
  t.like(check(checks, 'containers.engine'), { status: 'pass' });
  const oci = check(checks, 'containers.oci-runtime')!;
  t.like(oci, { status: 'fail', required: true, detail: 'no-such-runtime is not installed' });
  t.regex(oci.fix ?? '', /SVC_CONTAINER_OCI_RUNTIME/);
  t.like(check(checks, 'containers.base-images'), { status: 'pass' });
  // Optional under auto: a warning with the same fix.
  const auto = await containerChecks(testConfig(t, { ...env, SVC_CONTAINER_RUNTIME: 'auto' }));
  t.like(check(auto, 'containers.oci-runtime'), { status: 'warn', required: false });
  t.regex(check(auto, 'containers.oci-runtime')!.fix ?? '', /SVC_CONTAINER_OCI_RUNTIME/);
});

test('an open-file limit above the host hard limit is capped, and doctor says so', async (t) => {
  const hard = hardLimit(fs.readFileSync('/proc/self/limits', 'utf8'), 'Max open files');
  if (hard === undefined || !Number.isFinite(hard) || hard >= 1_048_576) {
    t.pass(`the host's hard open-file limit (${String(hard)}) cannot be exceeded by a setting`);
    return;
  }
  const checks = await containerChecks(
    testConfig(t, { SVC_CONTAINER_RUNTIME: 'auto', SVC_CONTAINER_NOFILE: String(hard + 1) }),
  );
  const rlimits = check(checks, 'containers.rlimits')!;
  t.is(rlimits.status, 'warn');
  t.regex(rlimits.detail, new RegExp(`^nofile ${hard}, .*the configured limits were capped at the host hard limits`));
  t.regex(rlimits.fix ?? '', /SVC_CONTAINER_NOFILE/);
});

test('with SVC_CONTAINER_RUNTIME=native containers are one skipped check', async (t) => {
  const checks = await containerChecks(testConfig(t, { SVC_CONTAINER_RUNTIME: 'native' }));
  t.is(checks.length, 1);
  t.like(checks[0], { id: 'containers.engine', status: 'skip', required: false });
  t.regex(checks[0]!.detail, /containers are off by setting \(SVC_CONTAINER_RUNTIME=native\)/);
});
