// tier: full
import { once } from 'node:events';
import test from 'ava';
import Koa from 'koa';
import WebSocket from 'ws';
import { listen } from '../../api/http/listen.js';
import { startTestControlPlane, startTestKnowledgeStore } from '../helpers/servers.js';
import { rawUpgrade } from '../helpers/raw-upgrade.js';

const statusLine = (text: string) => text.split('\r\n')[0];
const bodyOf = (text: string) =>
  JSON.parse(text.slice(text.indexOf('\r\n\r\n') + 4)) as { error: { code: string; message: string } };

test('the control plane answers a compatibility exec upgrade 400, an unknown exec session 404 and an unknown upgrade path 404, then closes the socket', async (t) => {
  const plane = await startTestControlPlane(t);
  const exec = await rawUpgrade(plane.url, '/api/apps/demo/exec?command=sh');
  const execAnswer = await exec.ended;
  t.is(statusLine(execAnswer), 'HTTP/1.1 400 Bad Request');
  t.is(bodyOf(execAnswer).error.code, 'not_an_upgrade');
  t.regex(execAnswer, /Connection: close/);
  const sessions = await rawUpgrade(plane.url, '/api/v1/exec-sessions/abc/attach');
  const sessionsAnswer = await sessions.ended;
  t.is(statusLine(sessionsAnswer), 'HTTP/1.1 404 Not Found');
  t.is(bodyOf(sessionsAnswer).error.code, 'session_not_found');
  const unknown = await rawUpgrade(plane.url, '/api/nothing/here');
  const unknownAnswer = await unknown.ended;
  t.is(statusLine(unknownAnswer), 'HTTP/1.1 404 Not Found');
  t.is(bodyOf(unknownAnswer).error.code, 'route_not_found');
  t.is(plane.server.upgradedSockets(), 0);
});

test('the knowledge store answers upgrades on both listeners 404', async (t) => {
  const store = await startTestKnowledgeStore(t);
  for (const url of [store.url, store.adminUrl]) {
    const answer = await (await rawUpgrade(url, '/v1/ping')).ended;
    t.is(statusLine(answer), 'HTTP/1.1 404 Not Found', url);
    t.is(bodyOf(answer).error.code, 'route_not_found');
  }
});

test("the event stream still upgrades through the listener's handlers", async (t) => {
  const plane = await startTestControlPlane(t);
  const ws = new WebSocket(`${plane.url.replace('http', 'ws')}/api/v1/events`);
  const [message] = (await once(ws, 'message')) as [Buffer];
  t.deepEqual(JSON.parse(message.toString()), { kind: 'ready' });
  ws.close();
});

// Serial: ava runs serial tests before the concurrent ones, so a control plane another test of this
// file starts (seconds of synchronous start-up on a loaded host) cannot hold this test's deadline timer.
test.serial(
  'close() ends at once an upgrade a handler took and never answered, and a half-sent request by the deadline',
  async (t) => {
    const app = new Koa();
    app.use((ctx) => {
      ctx.body = 'ok';
    });
    const server = await listen(app, 0, '127.0.0.1');
    // A handler that claims every upgrade and never answers: the old failure mode of /exec.
    server.onUpgrade(() => true);
    const taken = once(server.server, 'upgrade');
    const silent = await rawUpgrade(server.url, '/api/apps/demo/exec');
    await taken;
    const partial = await rawUpgrade(server.url, '/api/apps/demo/exec', { complete: false });
    t.is(server.upgradedSockets(), 1);
    const started = Date.now();
    const closed = server.close(2_000);
    await silent.ended;
    const upgradeClosedAfter = Date.now() - started;
    await closed;
    const elapsed = Date.now() - started;
    await partial.ended;
    t.is(silent.received(), '');
    // The upgraded socket has no response to wait for: closed at once. The half-sent request counts
    // as in flight: closed at the deadline.
    t.true(upgradeClosedAfter < 500, `the upgraded socket closed after ${upgradeClosedAfter} ms`);
    t.true(elapsed < 2_500, `close took ${elapsed} ms`);
    t.is(server.upgradedSockets(), 0);
  },
);
