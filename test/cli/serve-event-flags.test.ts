// tier: full
/**
 * `svc serve --host-id` and `--event-environment`: the event correlation keys of this host, stamped on
 * every event the platform records (ADR 0073, ADR 0196).
 */
import test from 'ava';
import { runSvc, startSvc } from '../helpers/cli.js';
import { request } from '../helpers/http-request.js';
import { tempDir } from '../helpers/temp-dir.js';

function env(data: string): Record<string, string> {
  return {
    SVC_PORT: '0',
    SVC_DATA_DIR: data,
    SVC_APPS_DIR: `${data}/apps`,
    SVC_LOG_LEVEL: 'info',
    SVC_HOST_ID: 'from-variable',
    SVC_EVENT_ENVIRONMENT: 'from-variable',
  };
}

test('svc serve stamps --host-id and --event-environment on every event, over the variables', async (t) => {
  const data = tempDir(t);
  let url = '';
  const { child } = await startSvc(
    ['serve', '--only', 'control', '--host-id', 'edge-7', '--event-environment', 'staging'],
    (line) => {
      if (line.msg === 'control plane listening') url = String(line.url);
      return url !== '';
    },
    { env: env(data), timeoutMs: 90_000 },
  );
  t.teardown(() => child.kill('SIGKILL'));
  const json = { 'content-type': 'application/json' };
  // An event of the platform (the test event) and one posted by an app that names neither key.
  const own = await request(`${url}/api/events/test`, { method: 'POST', body: '{}', headers: json });
  t.is(own.status, 201, JSON.stringify(own.body));
  const posted = await request(`${url}/api/events`, {
    method: 'POST',
    body: JSON.stringify({ type: 'app.note', severity: 'info', title: 'from an app', app: 'demo' }),
    headers: json,
  });
  t.is(posted.status, 201, JSON.stringify(posted.body));
  // An event that names its own host keeps it.
  const elsewhere = await request(`${url}/api/events`, {
    method: 'POST',
    body: JSON.stringify({ type: 'app.note', severity: 'info', title: 'relayed', metadata: { hostId: 'other-host' } }),
    headers: json,
  });
  t.is(elsewhere.status, 201);
  const listed = (await request(`${url}/api/events?limit=10`)).body as {
    events: { title: string; environment: string; metadata: { hostId?: string } }[];
  };
  const byTitle = Object.fromEntries(listed.events.map((e) => [e.title, e]));
  t.is(byTitle['Test event']?.metadata.hostId, 'edge-7');
  t.is(byTitle['Test event']?.environment, 'staging');
  t.is(byTitle['from an app']?.metadata.hostId, 'edge-7');
  t.is(byTitle['from an app']?.environment, 'staging');
  t.is(byTitle.relayed?.metadata.hostId, 'other-host');
});

test('svc serve refuses a --host-id its capacity keys cannot carry', async (t) => {
  const data = tempDir(t);
  const result = await runSvc(['serve', '--only', 'control', '--host-id', 'bad:id'], { env: env(data) });
  t.is(result.code, 1);
  t.regex(
    result.stderr,
    /configuration error: .*SVC_HOST_ID.*"bad:id" must be letters, digits, dots, hyphens and underscores/,
  );
});
