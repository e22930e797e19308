// tier: full
/**
 * Exec against a real app on the local driver, with authentication off (the development default):
 * one-shot commands (compatibility exec) and interactive PTY sessions over real WebSockets run as
 * the app's user (not root), in its environment, working folder and mount namespace; events record
 * who, what and how it ended but never what was typed; bad input and limits answer in the error shape.
 */
import fs from 'node:fs';
import test from 'ava';
import { request } from '../helpers/http-request.js';
import { waitForChange } from '../helpers/wait-for.js';
import { attachSession, startExecPlane } from './exec-harness.js';
import type { ControlPlane } from '../../wiring/control-plane.js';

const asRoot = process.getuid?.() === 0;

function execEvents(plane: ControlPlane, type: string) {
  return plane.eventServices.events.list({ type, limit: 100, offset: 0 }).events;
}

test('a one-shot command runs in the allocation as the app user, with its environment, folder and mount namespace, and returns output and exit code', async (t) => {
  const { plane, pid } = await startExecPlane(t);
  const exec = (json: unknown) => request(`${plane.url}/api/apps/hello/exec`, { method: 'POST', json });
  const id = await exec({ command: ['id', '-u'] });
  t.is(id.status, 200, id.text);
  const taskUid = fs.readFileSync(`/proc/${pid}/status`, 'utf8').match(/^Uid:\s+(\d+)/m)![1];
  t.is(id.body.stdout.trim(), taskUid);
  if (asRoot) t.not(id.body.stdout.trim(), '0');
  t.is(id.body.exitCode, 0);
  t.is(id.body.process, 'web');

  const world = await exec({
    command: 'echo "$GREETING"; pwd; readlink /proc/self/ns/mnt; cat; exit 7',
    stdin: 'from-stdin\n',
  });
  t.is(world.body.exitCode, 7);
  const [greeting, cwd, mountNs, input] = world.body.stdout.split('\n');
  t.is(greeting, 'hello-from-spec');
  t.is(cwd, fs.readlinkSync(`/proc/${pid}/cwd`));
  t.is(mountNs, fs.readlinkSync(`/proc/${pid}/ns/mnt`));
  t.is(input, 'from-stdin');

  const missing = await exec({ command: ['/no/such/program'] });
  t.is(missing.status, 200);
  t.not(missing.body.exitCode, 0);
  t.regex(missing.body.stderr, /no\/such\/program/);

  await waitForChange([(l) => plane.eventServices.events.subscribe(() => l())], () =>
    execEvents(plane, 'exec.session.ended').length >= 3 ? true : undefined,
  );
  const ended = execEvents(plane, 'exec.session.ended').find((e) => (e.metadata as any).exitCode === 7)!;
  t.is(ended.app, 'hello');
  t.is((ended.metadata as any).who, 'anonymous');
  t.is((ended.metadata as any).mode, 'command');
  t.is(typeof (ended.metadata as any).durationMs, 'number');
  t.false(JSON.stringify(ended).includes('from-stdin'), 'stdin never reaches an event');
  t.false(JSON.stringify(ended).includes('hello-from-spec'), 'output never reaches an event');
});

test('an interactive session is a PTY over a WebSocket: type, resize, exit status; events never hold keystrokes', async (t) => {
  const { plane, pid } = await startExecPlane(t);
  const created = await request(`${plane.url}/api/v1/exec-sessions`, {
    method: 'POST',
    json: { app: 'hello', cols: 100, rows: 30 },
  });
  t.is(created.status, 201, created.text);
  t.is(created.body.session.state, 'created');
  t.is(created.body.links.attach, `/api/v1/exec-sessions/${created.body.session.id}/attach`);
  const client = await attachSession(plane.url, created.body.session.id);
  client.send('stty size; tty; id -u; echo "secret-$((6*7))"\r');
  await client.waitFor(/secret-42/);
  t.regex(client.output(), /30 100/);
  t.regex(client.output(), /\/dev\/pts\/\d+/);
  const taskUid = fs.readFileSync(`/proc/${pid}/status`, 'utf8').match(/^Uid:\s+(\d+)/m)![1]!;
  t.regex(client.output(), new RegExp(`^${taskUid}\\r?$`, 'm'));
  client.resize(120, 40);
  client.send('stty size\r');
  await client.waitFor(/40 120/);
  const listed = await request(`${plane.url}/api/v1/exec-sessions`);
  t.is(listed.body.sessions[0].state, 'running');
  client.send('exit 3\r');
  const exit = await client.exited;
  t.is(exit.exitCode, 3);
  t.is(exit.reason, 'exited');
  await waitForChange([(l) => plane.eventServices.events.subscribe(() => l())], () =>
    execEvents(plane, 'exec.session.ended').length >= 1 ? true : undefined,
  );
  const [started] = execEvents(plane, 'exec.session.started');
  const [ended] = execEvents(plane, 'exec.session.ended');
  t.is((started!.metadata as any).allocationId, created.body.session.allocation);
  t.is((ended!.metadata as any).exitCode, 3);
  t.false(JSON.stringify([started, ended]).includes('secret'), 'keystrokes and output never reach an event');
  t.is((await request(`${plane.url}/api/v1/exec-sessions`)).body.sessions.length, 0);
});

test('bad input: unknown app 404, no running allocation 409 naming the state, bad bodies 400, too many sessions 429 with Retry-After, idle sessions close', async (t) => {
  const { plane } = await startExecPlane(t, { SVC_EXEC_MAX_SESSIONS_PER_APP: '2', SVC_EXEC_IDLE_TIMEOUT: '1s' });
  const create = (json: unknown) => request(`${plane.url}/api/v1/exec-sessions`, { method: 'POST', json });
  const unknown = await create({ app: 'nope' });
  t.is(unknown.status, 404);
  t.is(unknown.body.error.code, 'app_not_found');
  const idle = await create({ app: 'idle' });
  t.is(idle.status, 409);
  t.is(idle.body.error.code, 'no_running_allocation');
  t.regex(idle.body.error.message, /"idle".*no release yet/);
  const command409 = await request(`${plane.url}/api/apps/idle/exec`, { method: 'POST', json: { command: ['id'] } });
  t.is(command409.status, 409);
  t.is((await request(`${plane.url}/api/apps/nope/exec`, { method: 'POST', json: { command: ['id'] } })).status, 404);
  for (const body of [{}, { app: 'hello', command: [] }, { app: 'hello', cols: 0 }, { app: 'hello', extra: 1 }]) {
    const bad = await create(body);
    t.is(bad.status, 400, JSON.stringify(body));
    t.truthy(bad.body.error.code);
  }
  t.is((await request(`${plane.url}/api/apps/hello/exec`, { method: 'POST', json: { command: 5 } })).status, 400);
  t.is((await create({ app: 'hello', process: 'worker' })).status, 404);
  t.is((await request(`${plane.url}/api/v1/exec-sessions/not-an-id`)).status, 400);
  t.is((await request(`${plane.url}/api/v1/exec-sessions/xs_${'0'.repeat(32)}`)).status, 404);

  const first = await create({ app: 'hello' });
  const second = await create({ app: 'hello' });
  t.is(second.status, 201);
  const third = await create({ app: 'hello' });
  t.is(third.status, 429);
  t.is(third.body.error.code, 'too_many_sessions');
  t.truthy(Number(third.headers.get('retry-after')) >= 1);
  t.is(
    (await request(`${plane.url}/api/v1/exec-sessions/${second.body.session.id}`, { method: 'DELETE' })).status,
    204,
  );

  // Attached and left alone, a session ends after the idle timeout.
  const client = await attachSession(plane.url, first.body.session.id);
  const exit = await client.exited;
  t.is(exit.reason, 'idle');
  t.is((await create({ app: 'hello' })).status, 201);
});
