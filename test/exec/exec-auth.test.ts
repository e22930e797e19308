// tier: full
/**
 * Exec with authentication on (SVC_API_TOKEN): `apps:exec` is issued and required; a session also
 * consumes a one-use device-key step-up capability bound to the app and the caller (an approved
 * enrolled key signs a server nonce); compatibility exec needs the scope only. Each refusal is a 4xx
 * naming what is missing, and the attach socket checks the token too.
 */
import { generateKeyPairSync, sign } from 'node:crypto';
import fs from 'node:fs';
import path from 'node:path';
import test from 'ava';
import { request } from '../helpers/http-request.js';
import { runSvc } from '../helpers/cli.js';
import { rawUpgrade } from '../helpers/raw-upgrade.js';
import { tempDir } from '../helpers/temp-dir.js';
import { attachSession, startExecPlane } from './exec-harness.js';

const ADMIN_TOKEN = 'admin-token-for-exec-tests-0123456789';
const admin = { authorization: `Bearer ${ADMIN_TOKEN}` };

test('apps:exec and the device-key step-up guard exec; each refusal names what is missing', async (t) => {
  const { plane } = await startExecPlane(t, { SVC_API_TOKEN: ADMIN_TOKEN });
  const post = (p: string, json: unknown, headers: Record<string, string> = {}) =>
    request(`${plane.url}${p}`, { method: 'POST', json, headers });
  const issue = async (scopes: string[]) =>
    (await post('/api/access/tokens', { name: scopes.join('-') || 'none', scopes }, admin)).body.token.token as string;
  const execToken = { authorization: `Bearer ${await issue(['apps:exec'])}` };
  const eventsToken = { authorization: `Bearer ${await issue(['events:read'])}` };

  t.is((await post('/api/v1/exec-sessions', { app: 'hello' })).status, 401);
  const noScope = await post('/api/v1/exec-sessions', { app: 'hello' }, eventsToken);
  t.is(noScope.status, 403);
  t.is(noScope.body.error.code, 'insufficient_scope');
  t.regex(noScope.body.error.message, /apps:exec/);
  t.is((await post('/api/apps/hello/exec', { command: ['id'] }, eventsToken)).status, 403);
  const noStepUp = await post('/api/v1/exec-sessions', { app: 'hello' }, execToken);
  t.is(noStepUp.status, 403);
  t.is(noStepUp.body.error.code, 'step_up_required');
  t.is(noStepUp.body.error.details.missing, 'stepUp');

  // Compatibility exec needs the scope only.
  const once = await post('/api/apps/hello/exec', { command: ['echo', 'ok'] }, execToken);
  t.is(once.status, 200, once.text);
  t.is(once.body.stdout, 'ok\n');

  // A device enrolls its key; until approved, its signature earns nothing.
  const { publicKey, privateKey } = generateKeyPairSync('ed25519');
  const pem = publicKey.export({ type: 'spki', format: 'pem' }).toString();
  const enrolled = await post('/api/v1/fleet/devices/enroll', { name: 'laptop', publicKey: pem });
  t.is(enrolled.status, 201, enrolled.text);
  t.is(enrolled.body.enrollment.state, 'pending');
  const prove = async (app: string, key = privateKey, headers = execToken) => {
    const challenge = await post('/api/v1/exec-sessions/step-up/challenge', { app }, headers);
    t.is(challenge.status, 201, challenge.text);
    const signature = sign(null, Buffer.from(challenge.body.message), key).toString('base64');
    return post('/api/v1/exec-sessions/step-up', { nonce: challenge.body.nonce, publicKey: pem, signature }, headers);
  };
  const pending = await prove('hello');
  t.is(pending.status, 403);
  t.is(pending.body.error.code, 'device_not_approved');
  t.is(
    (await post(`/api/v1/fleet/devices/enrollments/${enrolled.body.enrollment.id}/approve`, {}, execToken)).status,
    403,
  );
  const approved = await post(`/api/v1/fleet/devices/enrollments/${enrolled.body.enrollment.id}/approve`, {}, admin);
  t.is(approved.body.enrollment.state, 'approved');

  // A wrong key's signature fails; a nonce is good once.
  const other = generateKeyPairSync('ed25519').privateKey;
  t.is((await prove('hello', other)).body.error.code, 'step_up_signature_invalid');
  const challenge = await post('/api/v1/exec-sessions/step-up/challenge', { app: 'hello' }, execToken);
  const signature = sign(null, Buffer.from(challenge.body.message), privateKey).toString('base64');
  const proof = { nonce: challenge.body.nonce, publicKey: pem, signature };
  const granted = await post('/api/v1/exec-sessions/step-up', proof, execToken);
  t.is(granted.status, 201, granted.text);
  t.regex(granted.body.capability, /^svc_xcap_/);
  t.is((await post('/api/v1/exec-sessions/step-up', proof, execToken)).body.error.code, 'step_up_nonce_invalid');

  // The capability is bound to its app and caller, and used once.
  const otherApp = await post('/api/v1/exec-sessions', { app: 'idle', stepUp: granted.body.capability }, execToken);
  t.is(otherApp.status, 409, 'checked after the app, before consuming: a stopped app does not burn it');
  const created = await post('/api/v1/exec-sessions', { app: 'hello', stepUp: granted.body.capability }, execToken);
  t.is(created.status, 201, created.text);
  const reused = await post('/api/v1/exec-sessions', { app: 'hello', stepUp: granted.body.capability }, execToken);
  t.is(reused.body.error.code, 'step_up_invalid');
  const forAnother = (await prove('hello', privateKey, admin)).body.capability as string;
  t.is((await post('/api/v1/exec-sessions', { app: 'hello', stepUp: forAnother }, execToken)).status, 403);

  // The socket wants the token too, and the session's own caller.
  const id = created.body.session.id as string;
  const anonymous = await (await rawUpgrade(plane.url, `/api/v1/exec-sessions/${id}/attach`)).ended;
  t.regex(anonymous, /^HTTP\/1\.1 401 /);
  const client = await attachSession(plane.url, id, { headers: execToken });
  client.send('echo "who=$(id -u)"; exit 0\r');
  await client.waitFor(/who=\d+/);
  t.is((await client.exited).exitCode, 0);

  const started = plane.eventServices.events.list({ type: 'exec.session.started', limit: 10, offset: 0 }).events;
  const session = started.find((e) => (e.metadata as any).sessionId === id)!;
  t.regex(String((session.metadata as any).who), /^token:tok_/);
  t.is((session.metadata as any).device, enrolled.body.enrollment.id);
  t.false(JSON.stringify(started).includes('svc_xcap_'), 'capabilities never reach an event');
  t.false(JSON.stringify(started).includes(ADMIN_TOKEN), 'tokens never reach an event');

  // The CLI does the same with --device-key (one-shot needs only the scope; checked here end to end).
  const keyFile = path.join(tempDir(t), 'device.pem');
  fs.writeFileSync(keyFile, privateKey.export({ type: 'pkcs8', format: 'pem' }).toString(), { mode: 0o600 });
  const cli = await runSvc(['exec', 'hello', '--device-key', keyFile, '--', 'echo', 'cli-ok'], {
    env: { SVC_API_URL: plane.url, SVC_API_TOKEN: execToken.authorization.slice(7) },
    timeoutMs: 120_000,
  });
  t.is(cli.code, 0, cli.stderr);
  t.is(cli.stdout, 'cli-ok\n');
});
