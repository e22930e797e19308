// tier: full
/**
 * The sockets accept the edge access identity the HTTP routes accept: an operator signed in through
 * the edge creates an exec session over HTTP and attaches to it over the socket with the same
 * assertion; another identity cannot attach to it, and an assertion that does not verify is refused.
 * The event stream (`/api/v1/events` and `/ws`) takes the identity the same way.
 */
import { generateKeyPairSync, sign } from 'node:crypto';
import { once } from 'node:events';
import test from 'ava';
import { generateKeyPair } from 'jose';
import { WebSocket } from 'ws';
import { request } from '../helpers/http-request.js';
import { rawUpgrade } from '../helpers/raw-upgrade.js';
import { assertion, AUD, keyServer, TEAM } from '../auth/edge-access-stand-in.js';
import { attachSession, startExecPlane } from './exec-harness.js';

const ADMIN_TOKEN = 'admin-token-for-edge-exec-tests-0123456789';

test('an operator signed in through the edge attaches to the exec session they created and reads the event stream; another identity cannot attach', async (t) => {
  const keys = await keyServer(t);
  const { plane } = await startExecPlane(t, {
    SVC_API_TOKEN: ADMIN_TOKEN,
    SVC_EDGE_ACCESS_TEAM_DOMAIN: TEAM,
    SVC_EDGE_ACCESS_AUD: AUD,
    SVC_EDGE_ACCESS_CERTS_URL: keys.url,
  });
  const operator = { 'edge-access-jwt-assertion': await assertion(keys.key, { email: 'ops@example.test' }) };
  const colleague = {
    'cf-access-jwt-assertion': await assertion(keys.key, { sub: 'user-2', email: 'other@example.test' }),
  };
  const post = (p: string, json: unknown, headers: Record<string, string>) =>
    request(`${plane.url}${p}`, { method: 'POST', json, headers });

  // The operator's device key, enrolled and approved, proves the step-up for the session.
  const { publicKey, privateKey } = generateKeyPairSync('ed25519');
  const pem = publicKey.export({ type: 'spki', format: 'pem' }).toString();
  const enrolled = await post('/api/v1/fleet/devices/enroll', { name: 'laptop', publicKey: pem }, {});
  t.is(enrolled.status, 201, enrolled.text);
  const approved = await post(`/api/v1/fleet/devices/enrollments/${enrolled.body.enrollment.id}/approve`, {}, operator);
  t.is(approved.status, 200, approved.text);
  const challenge = await post('/api/v1/exec-sessions/step-up/challenge', { app: 'hello' }, operator);
  t.is(challenge.status, 201, challenge.text);
  const signature = sign(null, Buffer.from(challenge.body.message), privateKey).toString('base64');
  const granted = await post(
    '/api/v1/exec-sessions/step-up',
    { nonce: challenge.body.nonce, publicKey: pem, signature },
    operator,
  );
  t.is(granted.status, 201, granted.text);
  const created = await post('/api/v1/exec-sessions', { app: 'hello', stepUp: granted.body.capability }, operator);
  t.is(created.status, 201, created.text);
  const id = created.body.session.id as string;
  const attachPath = `/api/v1/exec-sessions/${id}/attach`;

  // Refused: no credential, an assertion signed by another key, and another edge identity.
  t.regex(await (await rawUpgrade(plane.url, attachPath)).ended, /^HTTP\/1\.1 401 /);
  const forged = await assertion((await generateKeyPair('RS256')).privateKey);
  const badAnswer = await (
    await rawUpgrade(plane.url, attachPath, { headers: { 'Edge-Access-Jwt-Assertion': forged } })
  ).ended;
  t.regex(badAnswer, /^HTTP\/1\.1 401 /);
  t.true(badAnswer.includes('"code":"invalid_credentials"'), badAnswer);
  const other = await (await rawUpgrade(plane.url, attachPath, { headers: colleague })).ended;
  t.regex(other, /^HTTP\/1\.1 403 /, 'another identity is not the session creator');
  t.true(other.includes('"code":"session_not_yours"'), other);

  // The creator attaches with the same assertion and runs a command.
  const client = await attachSession(plane.url, id, { headers: operator });
  client.send('echo "edge=$((40 + 2))"; exit 0\r');
  await client.waitFor(/edge=42/);
  t.is((await client.exited).exitCode, 0);
  const started = plane.eventServices.events.list({ type: 'exec.session.started', limit: 10, offset: 0 }).events;
  t.is((started.find((e) => (e.metadata as any).sessionId === id)?.metadata as any)?.who, 'edge:ops@example.test');

  // The event stream, at both paths, takes the identity too; a forged one is refused.
  for (const path of ['/api/v1/events', '/ws']) {
    const ws = new WebSocket(`${plane.url.replace(/^http/, 'ws')}${path}`, { headers: operator });
    const [first] = (await once(ws, 'message')) as [Buffer];
    t.deepEqual(JSON.parse(first.toString()), { kind: 'ready' }, path);
    ws.close();
    await once(ws, 'close');
    const refused = await (
      await rawUpgrade(plane.url, path, { headers: { 'Edge-Access-Jwt-Assertion': forged } })
    ).ended;
    t.regex(refused, /^HTTP\/1\.1 401 /, path);
  }
});
