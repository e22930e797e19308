// tier: full
import { createHmac } from 'node:crypto';
import fs from 'node:fs';
import path from 'node:path';
import { createRequire } from 'node:module';
import test from 'ava';
import { request } from '../helpers/servers.js';
import { tempDir } from '../helpers/temp-dir.js';
import { DOCKERFILE, git, initAppsRepo, pipelineConfig, server, startPlane, waitForApp } from './pipeline-fixture.js';

interface Example {
  name: string;
  examples: Record<string, any>[];
}
const examples = createRequire(import.meta.url)('@octokit/webhooks-examples') as Example[];
const pushes = examples.find((e) => e.name === 'push')!.examples;
const branchPush = pushes.find((p) => p.ref === 'refs/heads/master' && !p.deleted)!;
const tagPush = pushes.find((p) => p.ref.startsWith('refs/tags/') && !p.deleted)!;
const ping = examples.find((e) => e.name === 'ping')!.examples[0]!;
const SECRET = 'test-webhook-secret';

function sign(body: string, secret = SECRET): string {
  return `sha256=${createHmac('sha256', secret).update(body).digest('hex')}`;
}

async function deliver(
  url: string,
  event: string,
  payload: unknown,
  options: { delivery: string; secret?: string; signature?: string | null },
) {
  const body = JSON.stringify(payload);
  const headers: Record<string, string> = {
    'content-type': 'application/json',
    'x-github-event': event,
    'x-github-delivery': options.delivery,
    'user-agent': 'GitHub-Hookshot/test',
  };
  const signature = options.signature === undefined ? sign(body, options.secret) : options.signature;
  if (signature !== null) headers['x-hub-signature-256'] = signature;
  return request(`${url}/api/webhooks/github`, { method: 'POST', body, headers });
}

function commitCode(repo: string, version: string, healthStatus: number): string {
  fs.writeFileSync(path.join(repo, 'Dockerfile'), DOCKERFILE);
  fs.writeFileSync(path.join(repo, 'server.mjs'), server(version, healthStatus));
  git(repo, 'add', '-A');
  git(repo, 'commit', '-q', '-m', version);
  return git(repo, 'rev-parse', 'HEAD');
}

test('a signed push deploys the pushed commit once; bad signatures, redeliveries, tags, pings and rolled-back commits are recorded and not deployed', async (t) => {
  // The real payloads name Codertocat/Hello-World on branch master: a local repository at a path
  // ending in that full name plays the git host.
  const repo = path.join(tempDir(t), 'Codertocat', 'Hello-World');
  fs.mkdirSync(repo, { recursive: true });
  git(repo, 'init', '-q', '-b', 'master');
  const first = commitCode(repo, 'v1', 200);
  const config = pipelineConfig(t);
  initAppsRepo(config);
  fs.mkdirSync(path.join(config.appsDir, 'hello-world'));
  fs.writeFileSync(
    path.join(config.appsDir, 'hello-world', 'infraspec.yaml'),
    `name: hello-world\ndeploy: true\nrepo:\n  url: ${repo}\n  branch: master\n  autoDeploy: true\nprocesses:\n  web:\n    port: 8080\n    health:\n      path: /healthz\n      interval: 100ms\n      timeout: 1s\n`,
  );
  git(config.appsDir, 'add', '-A');
  git(config.appsDir, 'commit', '-q', '-m', 'hello-world');
  const plane = await startPlane(t, config);
  await waitForApp(plane, 'hello-world');

  const badSignature = await deliver(
    plane.url,
    'push',
    { ...branchPush, after: first },
    { delivery: 'd-bad', secret: 'wrong-secret' },
  );
  t.is(badSignature.status, 401);
  t.is(badSignature.body.error.code, 'invalid_signature');
  const unsigned = await deliver(
    plane.url,
    'push',
    { ...branchPush, after: first },
    { delivery: 'd-unsigned', signature: null },
  );
  t.is(unsigned.status, 401);

  const pushed = await deliver(plane.url, 'push', { ...branchPush, after: first }, { delivery: 'd-1' });
  t.is(pushed.status, 202, pushed.text);
  t.is(pushed.body.delivery.status, 'deployed');
  t.is(pushed.body.delivery.matchedApp, 'hello-world');
  const operation = await plane.deploys.worker.waitFor(pushed.body.delivery.operationId, 20_000);
  t.is(operation.status, 'succeeded', operation.lastError ?? '');
  t.is(operation.ref, first);

  const again = await deliver(plane.url, 'push', { ...branchPush, after: first }, { delivery: 'd-1' });
  t.is(again.status, 200);
  t.is(again.body.delivery.status, 'duplicate');
  t.is((await request(`${plane.url}/api/v1/deployments?app=hello-world&kind=deploy`)).body.deployments.length, 1);

  const tag = await deliver(plane.url, 'push', tagPush, { delivery: 'd-tag' });
  t.is(tag.body.delivery.status, 'ignored');
  t.regex(tag.body.delivery.reason, /not a branch push/);
  const pinged = await deliver(plane.url, 'ping', ping, { delivery: 'd-ping' });
  t.is(pinged.body.delivery.status, 'ignored');
  t.regex(pinged.body.delivery.reason, /event ping is not a push/);

  // A pushed commit that fails its health gate is rolled back and never re-applied by a later push.
  const broken = commitCode(repo, 'v2', 500);
  const bad = await deliver(plane.url, 'push', { ...branchPush, after: broken }, { delivery: 'd-2' });
  t.is(bad.body.delivery.status, 'deployed');
  t.is((await plane.deploys.worker.waitFor(bad.body.delivery.operationId, 20_000)).status, 'failed');
  const rollback = (await request(`${plane.url}/api/v1/deployments?app=hello-world&kind=rollback`)).body.deployments[0];
  t.is((await plane.deploys.worker.waitFor(rollback.operationId, 20_000)).status, 'succeeded');
  const replay = await deliver(plane.url, 'push', { ...branchPush, after: broken }, { delivery: 'd-3' });
  t.is(replay.body.delivery.status, 'ignored');
  t.regex(replay.body.delivery.reason, /was rolled back; auto-deploy does not re-apply it/);

  const inbox = (await request(`${plane.url}/api/webhooks/deliveries?limit=20`)).body.deliveries;
  t.is(inbox.length, 8);
  const rejected = inbox.find((d: { deliveryId: string }) => d.deliveryId === 'd-bad');
  t.like(rejected, {
    provider: 'github',
    event: 'push',
    status: 'rejected',
    reason: 'invalid signature',
    repository: 'Codertocat/Hello-World',
    ref: 'refs/heads/master',
    branch: 'master',
  });
  t.is(
    rejected.payload.repository.full_name,
    'Codertocat/Hello-World',
    'the delivery was persisted with its parsed payload',
  );
  t.is(inbox.find((d: { deliveryId: string }) => d.deliveryId === 'd-unsigned').reason, 'missing X-Hub-Signature-256');
  const deployed = inbox.find(
    (d: { deliveryId: string; status: string }) => d.deliveryId === 'd-1' && d.status === 'deployed',
  );
  t.like(deployed, { matchedApp: 'hello-world', sagaId: operation.sagaId, commit: first });
  t.false(JSON.stringify(inbox).includes(SECRET));
});

test('webhooks are refused (and still recorded) without SVC_WEBHOOK_SECRET, and the inbox needs the token when one is set', async (t) => {
  const config = pipelineConfig(t, { SVC_WEBHOOK_SECRET: '', SVC_API_TOKEN: 'control-token' });
  initAppsRepo(config);
  const plane = await startPlane(t, config);
  const refused = await deliver(plane.url, 'push', branchPush, { delivery: 'x-1' });
  t.is(refused.status, 503);
  t.is(refused.body.error.code, 'webhooks_disabled');
  const open = await request(`${plane.url}/api/webhooks/deliveries`);
  t.is(open.status, 401);
  const inbox = await request(`${plane.url}/api/webhooks/deliveries`, {
    headers: { authorization: 'Bearer control-token' },
  });
  t.is(inbox.body.deliveries[0].status, 'rejected');
  const unknown = await request(`${plane.url}/api/webhooks/gitea`, { method: 'POST', json: {} });
  t.is(unknown.status, 400);
  t.is(unknown.body.error.code, 'unsupported_provider');
});

test('the generic form is signed the same way and a push no app follows is recorded as ignored', async (t) => {
  const config = pipelineConfig(t);
  initAppsRepo(config);
  const plane = await startPlane(t, config);
  const body = JSON.stringify({
    repository: 'https://git.example.test/team/site.git',
    ref: 'refs/heads/main',
    after: 'b'.repeat(40),
  });
  const headers = { 'content-type': 'application/json', 'x-svc-delivery': 'g-1', 'x-svc-signature-256': sign(body) };
  const response = await request(`${plane.url}/api/webhooks/generic`, { method: 'POST', body, headers });
  t.is(response.status, 200, response.text);
  t.like(response.body.delivery, {
    provider: 'generic',
    event: 'push',
    status: 'ignored',
    branch: 'main',
    commit: 'b'.repeat(40),
  });
  t.regex(response.body.delivery.reason, /no app with repo.autoDeploy true follows/);
  const forged = await request(`${plane.url}/api/webhooks/generic`, {
    method: 'POST',
    body,
    headers: { ...headers, 'x-svc-signature-256': sign(body, 'nope') },
  });
  t.is(forged.status, 401);
});
