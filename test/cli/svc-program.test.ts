// tier: full
import { once } from 'node:events';
import test from 'ava';
import { runSvc, startSvc } from '../helpers/cli.js';
import { request } from '../helpers/servers.js';
import { tempDir } from '../helpers/temp-dir.js';

test('svc --help lists the commands with their descriptions', async (t) => {
  const result = await runSvc(['--help']);
  t.is(result.code, 0);
  for (const command of ['serve', 'validate', 'version']) t.regex(result.stdout, new RegExp(`^\\s+${command}\\b`, 'm'));
});

test('svc version prints the platform label', async (t) => {
  const result = await runSvc(['version', '--json']);
  t.is(result.code, 0);
  const info = JSON.parse(result.stdout) as { label: string; version: string };
  t.regex(info.label, /^v\d+\.\d+\.\d+-platform/);
});

test('svc -v and svc --version print the same label as svc version', async (t) => {
  const [short, long, json] = await Promise.all([runSvc(['-v']), runSvc(['--version']), runSvc(['version', '--json'])]);
  const label = (JSON.parse(json.stdout) as { label: string }).label;
  for (const result of [short, long]) {
    t.is(result.code, 0, result.stderr);
    t.is(result.stdout.trim(), label);
  }
});

test('svc serve refuses a malformed configuration naming the variable', async (t) => {
  const result = await runSvc(['serve'], { env: { SVC_PORT: 'abc', SVC_DATA_DIR: tempDir(t) } });
  t.not(result.code, 0);
  t.regex(result.stderr, /SVC_PORT: "abc" is not a port number/);
});

test('svc serve starts both services and stops cleanly on SIGTERM', async (t) => {
  const data = tempDir(t);
  const env = {
    SVC_PORT: '0',
    SVC_KNOWLEDGE_PORT: '0',
    SVC_KNOWLEDGE_ADMIN_PORT: '0',
    SVC_DATA_DIR: data,
    SVC_APPS_DIR: `${data}/apps`,
    SVC_LOG_LEVEL: 'info',
  };
  const control = { url: '' };
  const { child, line } = await startSvc(
    ['serve'],
    (l) => {
      if (l.msg === 'control plane listening') control.url = String(l.url);
      return l.msg === 'knowledge store listening';
    },
    { env },
  );
  t.teardown(() => child.kill('SIGKILL'));
  t.truthy(control.url);
  t.is((await request(`${control.url}/api/health`)).status, 200);
  t.deepEqual((await request(`${String(line.url)}/v1/ping`)).body, { status: 'ok' });
  child.kill('SIGTERM');
  const [code] = (await once(child, 'exit')) as [number | null];
  t.is(code, 0);
});

test('svc serve --only knowledge leaves the control plane port unbound', async (t) => {
  const data = tempDir(t);
  const env = {
    SVC_PORT: '0',
    SVC_KNOWLEDGE_PORT: '0',
    SVC_KNOWLEDGE_ADMIN_PORT: '0',
    SVC_DATA_DIR: data,
    SVC_LOG_LEVEL: 'info',
  };
  let sawControl = false;
  const { child, output } = await startSvc(
    ['serve', '--only', 'knowledge'],
    (l) => {
      if (l.msg === 'control plane listening') sawControl = true;
      return l.msg === 'knowledge store listening';
    },
    { env },
  );
  child.kill('SIGINT');
  await once(child, 'exit');
  t.false(sawControl);
  t.regex(output(), /SVC_KNOWLEDGE_TOKENS is not set/);
});
