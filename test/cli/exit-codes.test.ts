// tier: full
/**
 * Every documented exit code of every `svc` command (docs/cli.md, ADR 0015), against
 * a real control plane with token auth on and two committed apps: `good` (a service and a
 * function process) and `broken` (whose build test fails).
 */
import net from 'node:net';
import test, { type ExecutionContext } from 'ava';
import type { ControlPlane } from '../../wiring/control-plane.js';
import { runSvc, type CliResult } from '../helpers/cli.js';
import { request } from '../helpers/servers.js';
import { tempDir } from '../helpers/temp-dir.js';
import { commitApp, initAppsRepo, pipelineConfig, startPlane, waitForApp } from '../pipeline/pipeline-fixture.js';

const TOKEN = 'exit-codes-control-token';
const FUNCTION = ['  job:', '    command: node job.mjs', '    function:', '      timeout: 20s'].join('\n');
const JOB =
  "const body = JSON.parse(process.env.SVC_REQUEST_BODY ?? 'null');\nif (body && body.fail) { console.error('asked to fail'); process.exit(3); }\nconsole.log('done');\n";

let plane: ControlPlane;
let unreachable: string;

// Hooks have no t.teardown: the shared plane's teardowns run after the last test.
const teardowns: (() => unknown)[] = [];
const shared = { teardown: (fn: () => unknown) => void teardowns.push(fn) } as unknown as ExecutionContext;
test.after.always(async () => {
  for (const fn of teardowns.reverse()) await fn();
});

test.before(async () => {
  const t = shared;
  const config = pipelineConfig(t, { SVC_API_TOKEN: TOKEN });
  initAppsRepo(config);
  commitApp(config.appsDir, 'good', { extra: FUNCTION }, { 'job.mjs': JOB });
  commitApp(config.appsDir, 'broken', { test: 'exit 3' });
  plane = await startPlane(t, config);
  await Promise.all([waitForApp(plane, 'good'), waitForApp(plane, 'broken')]);
  // A port nothing listens on: bound, then released.
  const probe = net.createServer();
  await new Promise<void>((resolve) => probe.listen(0, '127.0.0.1', resolve));
  unreachable = `http://127.0.0.1:${(probe.address() as net.AddressInfo).port}`;
  await new Promise<void>((resolve) => probe.close(() => resolve()));
});

// At most two svc processes of this file at once: the suite runs other files beside it on two cores.
const MAX_PROCESSES = 2;
let running = 0;
const queued: (() => void)[] = [];
async function limited<T>(run: () => Promise<T>): Promise<T> {
  if (running >= MAX_PROCESSES) await new Promise<void>((resolve) => queued.push(resolve));
  running += 1;
  try {
    return await run();
  } finally {
    running -= 1;
    queued.shift()?.();
  }
}

/** Runs svc against the plane with the control token (or `token`, or unreachable with `down`). */
function svc(
  args: readonly string[],
  options: { token?: string; down?: boolean; env?: Record<string, string> } = {},
): Promise<CliResult> {
  return limited(() =>
    runSvc(args, {
      env: {
        SVC_API_URL: options.down ? unreachable : plane.url,
        SVC_API_TOKEN: options.token ?? TOKEN,
        ...options.env,
      },
      timeoutMs: 90_000,
    }),
  );
}

/** Checks the exit code, that a failure is one `error:` line (no usage text) and that usage appears only where it belongs. */
function expectExit(
  t: ExecutionContext,
  what: string,
  result: CliResult,
  code: number,
  options: { usage?: boolean; stderr?: RegExp; report?: boolean } = {},
): void {
  t.is(result.code, code, `${what}: ${result.stdout}${result.stderr}`);
  if (options.stderr) t.regex(result.stderr, options.stderr, what);
  if (options.usage) t.regex(result.stderr, /^Usage: svc/m, `${what} shows the usage`);
  else t.notRegex(result.stderr, /^Usage: /m, `${what} shows no usage text`);
  if (code !== 0 && code !== 2 && !options.usage && options.report !== false)
    t.regex(result.stderr, /^error: .+/m, `${what} says what failed`);
}

test('svc version exits 0, and 2 with the usage for an unknown option', async (t) => {
  const [ok, unknown] = await Promise.all([svc(['version']), svc(['version', '--bogus'])]);
  expectExit(t, 'version', ok, 0);
  expectExit(t, 'version --bogus', unknown, 2, { usage: true, stderr: /unknown option '--bogus'/ });
});

test('svc with an unknown command exits 2 with the usage; --help exits 0 on standard output', async (t) => {
  const [unknown, help, nothing] = await Promise.all([svc(['bogus']), svc(['--help']), svc([])]);
  expectExit(t, 'bogus', unknown, 2, { usage: true, stderr: /unknown command 'bogus'/ });
  expectExit(t, '--help', help, 0);
  t.regex(help.stdout, /^Usage: svc/m);
  t.regex(help.stdout, /Exit codes: 0 done, 1 failed/);
  expectExit(t, 'no command', nothing, 2, { usage: true });
});

test('svc serve exits 1 on a configuration error and 2 for a bad --only, without the usage', async (t) => {
  const [config, only] = await Promise.all([
    limited(() => runSvc(['serve'], { env: { SVC_PORT: 'abc', SVC_DATA_DIR: tempDir(t) }, timeoutMs: 90_000 })),
    limited(() => runSvc(['serve', '--only', 'everything'], { env: { SVC_DATA_DIR: tempDir(t) }, timeoutMs: 90_000 })),
  ]);
  expectExit(t, 'serve with SVC_PORT=abc', config, 1, {
    stderr: /^error: configuration error: SVC_PORT: "abc" is not a port number/,
  });
  expectExit(t, 'serve --only everything', only, 2, { stderr: /^error: --only must be one of control, knowledge/ });
});

test('svc validate exits 0 for valid specs, 1 for an error finding, 2 for a missing path or an unreadable --fleet', async (t) => {
  const dir = tempDir(t);
  const fs = await import('node:fs');
  fs.writeFileSync(
    `${dir}/bad.yaml`,
    'name: demo\nprocesses:\n  web:\n    port: 8080\n    health:\n      interval: "10"\n',
  );
  fs.writeFileSync(`${dir}/good.yaml`, 'name: demo\nprocesses:\n  web:\n    port: 8080\n');
  const [ok, bad, missing, fleet, config] = await Promise.all([
    svc(['validate', `${dir}/good.yaml`]),
    svc(['validate', `${dir}/bad.yaml`]),
    svc(['validate', `${dir}/none.yaml`]),
    svc(['validate', '--fleet', `${dir}/no-fleet.yaml`, `${dir}/good.yaml`]),
    svc(['validate'], { env: { SVC_LOG_LEVEL: 'loud' } }),
  ]);
  expectExit(t, 'validate good', ok, 0);
  // The findings are the report: file:line:col lines and a count.
  expectExit(t, 'validate bad', bad, 1, { report: false, stderr: /^1 file\(s\) checked, 1 invalid$/m });
  t.regex(bad.stdout, /duration\.go/);
  expectExit(t, 'validate missing', missing, 2, { stderr: /^error: .*none\.yaml: no such file or folder$/m });
  expectExit(t, 'validate --fleet missing', fleet, 2, { stderr: /^error: --fleet .*no-fleet\.yaml/ });
  expectExit(t, 'validate with a bad configuration', config, 1, {
    stderr: /^error: configuration error: SVC_LOG_LEVEL/,
  });
});

test('svc apps exits 0, 1 when the server refuses the token, 2 for an unknown option, 3 when unreachable', async (t) => {
  const [ok, refused, unknown, down] = await Promise.all([
    svc(['apps']),
    svc(['apps'], { token: 'wrong' }),
    svc(['apps', '--bogus']),
    svc(['apps'], { down: true }),
  ]);
  expectExit(t, 'apps', ok, 0);
  t.regex(ok.stdout, /^good\s+yes/m);
  expectExit(t, 'apps with a wrong token', refused, 1, { stderr: /^error: .*\(invalid_credentials\)$/m });
  expectExit(t, 'apps --bogus', unknown, 2, { usage: true });
  expectExit(t, 'apps unreachable', down, 3, {
    stderr: /^error: cannot reach the control plane at http:\/\/127\.0\.0\.1:\d+ \(ECONNREFUSED\)/,
  });
});

test('svc status exits 0, 1, 2 without an app (no usage), 3 when unreachable, 4 for an unknown app (no usage)', async (t) => {
  const [ok, refused, missing, down, unknown] = await Promise.all([
    svc(['status', 'good']),
    svc(['status', 'good'], { token: 'wrong' }),
    svc(['status']),
    svc(['status', 'good'], { down: true }),
    svc(['status', 'nonexistent']),
  ]);
  expectExit(t, 'status good', ok, 0);
  expectExit(t, 'status refused', refused, 1);
  expectExit(t, 'status without app', missing, 2, {
    stderr: /^error: missing required argument 'app'\n\(run "svc status --help" for usage\)\n$/,
  });
  expectExit(t, 'status unreachable', down, 3);
  expectExit(t, 'status nonexistent', unknown, 4, {
    stderr: /^error: app "nonexistent" .*\(app_not_found\)\n {2}app: nonexistent\n$/,
  });
});

test('svc events and svc events active exit 0, 1 for a refused request, 2 for a bad option, 3 when unreachable', async (t) => {
  const results = await Promise.all([
    svc(['events']),
    svc(['events', '--severity', 'catastrophic']),
    svc(['events', '--limit']),
    svc(['events'], { down: true }),
    svc(['events', 'active']),
    svc(['events', 'active'], { token: 'wrong' }),
    svc(['events', 'active', '--bogus']),
    svc(['events', 'active'], { down: true }),
  ]);
  const [ok, refused, usage, down, activeOk, activeRefused, activeUsage, activeDown] = results;
  expectExit(t, 'events', ok, 0);
  expectExit(t, 'events --severity catastrophic', refused, 1);
  expectExit(t, 'events --limit (no value)', usage, 2, { stderr: /option '--limit <n>' argument missing/ });
  expectExit(t, 'events unreachable', down, 3);
  expectExit(t, 'events active', activeOk, 0);
  expectExit(t, 'events active refused', activeRefused, 1);
  expectExit(t, 'events active --bogus', activeUsage, 2, { usage: true });
  expectExit(t, 'events active unreachable', activeDown, 3);
});

test('svc notifications bootstrap exits 0, 1 for a refused request, 2 for an unknown option, 3 when unreachable', async (t) => {
  const [ok, refused, unknown, down] = await Promise.all([
    svc(['notifications', 'bootstrap', '--dry-run']),
    svc(['notifications', 'bootstrap', '--dry-run'], { token: 'wrong' }),
    svc(['notifications', 'bootstrap', '--bogus']),
    svc(['notifications', 'bootstrap'], { down: true }),
  ]);
  expectExit(t, 'bootstrap', ok, 0);
  expectExit(t, 'bootstrap refused', refused, 1);
  expectExit(t, 'bootstrap --bogus', unknown, 2, { usage: true });
  expectExit(t, 'bootstrap unreachable', down, 3);
});

test('svc tokens create, list and revoke exit 0, 1 for a refused request, 2 for a missing option, 3 when unreachable, 4 for an unknown token', async (t) => {
  const created = await svc(['tokens', 'create', '--name', 'scraper', '--scope', 'metrics:read', '--json']);
  expectExit(t, 'tokens create', created, 0);
  const id = (JSON.parse(created.stdout) as { token: { id: string } }).token.id;
  const [refusedScope, missingScope, createDown, list, listRefused, listDown, revoke, revokeUnknown, revokeMissing] =
    await Promise.all([
      svc(['tokens', 'create', '--name', 'x', '--scope', 'fleet:external-admission']),
      svc(['tokens', 'create', '--name', 'x']),
      svc(['tokens', 'create', '--name', 'x', '--scope', 'metrics:read'], { down: true }),
      svc(['tokens', 'list']),
      svc(['tokens', 'list'], { token: '' }),
      svc(['tokens', 'list'], { down: true }),
      svc(['tokens', 'revoke', id]),
      svc(['tokens', 'revoke', 'tok_nonexistent']),
      svc(['tokens', 'revoke']),
    ]);
  expectExit(t, 'tokens create fleet:external-admission', refusedScope, 1, { stderr: /^error: .+\n {2}\w+/ });
  expectExit(t, 'tokens create without --scope', missingScope, 2, {
    stderr: /required option '--scope <scope>' not specified/,
  });
  expectExit(t, 'tokens create unreachable', createDown, 3);
  expectExit(t, 'tokens list', list, 0);
  expectExit(t, 'tokens list anonymous', listRefused, 1);
  expectExit(t, 'tokens list unreachable', listDown, 3);
  expectExit(t, 'tokens revoke', revoke, 0);
  expectExit(t, 'tokens revoke unknown', revokeUnknown, 4);
  expectExit(t, 'tokens revoke without id', revokeMissing, 2);
});

test('svc inbox exits 0, 1 for a refused request, 2 while something is critical or for a bad option, 3 when unreachable, 4 for an unknown app', async (t) => {
  const [ok, refused, unknownOption, down, unknownApp] = await Promise.all([
    svc(['inbox', '--app', 'good']),
    svc(['inbox', '--limit', 'lots']),
    svc(['inbox', '--bogus']),
    svc(['inbox'], { down: true }),
    svc(['inbox', '--app', 'nonexistent']),
  ]);
  expectExit(t, 'inbox good', ok, 0);
  expectExit(t, 'inbox --limit lots', refused, 1, { stderr: /\(invalid_query\)/ });
  expectExit(t, 'inbox --bogus', unknownOption, 2, { usage: true });
  expectExit(t, 'inbox unreachable', down, 3);
  expectExit(t, 'inbox nonexistent', unknownApp, 4);
  const created = await request(`${plane.url}/api/events`, {
    method: 'POST',
    headers: { authorization: `Bearer ${TOKEN}` },
    json: {
      type: 'service.unhealthy',
      severity: 'critical',
      title: 'exit codes',
      app: 'critical-app',
      dedupeKey: 'exit-codes-critical',
    },
  });
  t.is(created.status, 201, created.text);
  expectExit(t, 'inbox critical', await svc(['inbox']), 2);
});

test('svc deploy, preflight and rollback exit 0, 1 when the deploy fails or nothing to roll back, 2 without an app, 3 when unreachable, 4 for an unknown app; invoke and functions history follow', async (t) => {
  const deployed = await svc(['deploy', 'good', '--follow']);
  expectExit(t, 'deploy good --follow', deployed, 0);
  const [
    failed,
    preflight,
    rollback,
    missing,
    down,
    unknown,
    preflightUnknown,
    rollbackUnknown,
    preflightDown,
    rollbackMissing,
  ] = await Promise.all([
    svc(['deploy', 'broken', '--follow']),
    svc(['preflight', 'good', '--json']),
    svc(['rollback', 'good']),
    svc(['deploy']),
    svc(['deploy', 'good'], { down: true }),
    svc(['deploy', 'nonexistent']),
    svc(['preflight', 'nonexistent']),
    svc(['rollback', 'nonexistent']),
    svc(['preflight', 'good'], { down: true }),
    svc(['rollback']),
  ]);
  expectExit(t, 'deploy broken --follow', failed, 1, { stderr: /^error: deploy of broken failed at test/ });
  t.regex(failed.stdout, /test\s+failed/);
  expectExit(t, 'preflight good', preflight, 0);
  expectExit(t, 'rollback good (nothing older)', rollback, 1, { stderr: /\(no_rollback_target\)/ });
  expectExit(t, 'deploy without app', missing, 2);
  expectExit(t, 'deploy unreachable', down, 3);
  expectExit(t, 'deploy nonexistent', unknown, 4);
  expectExit(t, 'preflight nonexistent', preflightUnknown, 4);
  expectExit(t, 'rollback nonexistent', rollbackUnknown, 4);
  expectExit(t, 'preflight unreachable', preflightDown, 3);
  expectExit(t, 'rollback without app', rollbackMissing, 2);

  // The function process runs from the deployed release.
  const [
    invoked,
    invokeFailed,
    badBody,
    invokeMissing,
    invokeDown,
    invokeUnknown,
    noFunction,
    history,
    historyRefused,
    historyMissing,
    historyDown,
    historyUnknown,
  ] = await Promise.all([
    svc(['invoke', 'good']),
    svc(['invoke', 'good', '--body', '{"fail":true}']),
    svc(['invoke', 'good', '--body', '{fail']),
    svc(['invoke']),
    svc(['invoke', 'good'], { down: true }),
    svc(['invoke', 'nonexistent']),
    svc(['invoke', 'broken']),
    svc(['functions', 'history', 'good']),
    svc(['functions', 'history', 'good'], { token: 'wrong' }),
    svc(['functions', 'history']),
    svc(['functions', 'history', 'good'], { down: true }),
    svc(['functions', 'history', 'nonexistent']),
  ]);
  expectExit(t, 'invoke good', invoked, 0);
  t.is(invoked.stdout, 'done\n');
  expectExit(t, 'invoke good failing', invokeFailed, 1, {
    stderr: /^error: function good\/job failed \(exit code 3\)/m,
  });
  expectExit(t, 'invoke --body not JSON', badBody, 2, { stderr: /^error: --body is not JSON/ });
  expectExit(t, 'invoke without app', invokeMissing, 2);
  expectExit(t, 'invoke unreachable', invokeDown, 3);
  expectExit(t, 'invoke nonexistent', invokeUnknown, 4);
  expectExit(t, 'invoke an app without a function', noFunction, 4, {
    stderr: /^error: broken has no function process$/m,
  });
  expectExit(t, 'functions history', history, 0);
  expectExit(t, 'functions history refused', historyRefused, 1);
  expectExit(t, 'functions history without app', historyMissing, 2);
  expectExit(t, 'functions history unreachable', historyDown, 3);
  expectExit(t, 'functions history nonexistent', historyUnknown, 4);
});

test('svc ops exits 0, 1 for a refused request, 2 for an unknown option, 3 when unreachable, 4 for an unknown operation', async (t) => {
  const [ok, refused, unknownOption, down, unknownOperation] = await Promise.all([
    svc(['ops']),
    svc(['ops'], { token: 'wrong' }),
    svc(['ops', '--bogus']),
    svc(['ops'], { down: true }),
    svc(['ops', 'op_nonexistent']),
  ]);
  expectExit(t, 'ops', ok, 0);
  expectExit(t, 'ops refused', refused, 1);
  expectExit(t, 'ops --bogus', unknownOption, 2, { usage: true });
  expectExit(t, 'ops unreachable', down, 3);
  expectExit(t, 'ops nonexistent', unknownOperation, 4);
});
