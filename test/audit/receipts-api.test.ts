// tier: full
/**
 * Audit receipts on a production control plane (ADR 0187): mutating API requests and the operations
 * the worker runs reserve signed receipts, `svc audit` lists and verifies them, and with the receipt
 * log on a full device (/dev/full) neither a token nor a deploy happens.
 */
import fs from 'node:fs';
import path from 'node:path';
import test from 'ava';
import { receiptFile } from '../../platform/audit/receipt-file.js';
import { listAccessTokens } from '../../store/control/scoped-tokens.js';
import { listSteps } from '../../store/control/deployments.js';
import { runSvc } from '../helpers/cli.js';
import { request } from '../helpers/servers.js';
import { git, initAppsRepo, pipelineConfig, startPlane, waitForApp } from '../pipeline/pipeline-fixture.js';

const auth = { authorization: 'Bearer tok' };

test('a production plane reserves receipts before mutations, lists and verifies them, and refuses to mutate without one', async (t) => {
  const config = pipelineConfig(t, {
    SVC_PROFILE: 'production',
    SVC_RELEASE_SIGNATURE_POLICY: 'none',
    SVC_REQUIRE_EXPLICIT_AUTH: 'true',
    SVC_API_TOKEN: 'tok',
  });
  initAppsRepo(config);
  fs.mkdirSync(path.join(config.appsDir, 'shop'));
  // No digest-pinned image: the deploy's production admission refuses it quickly, after its receipt.
  fs.writeFileSync(
    path.join(config.appsDir, 'shop', 'infraspec.yaml'),
    'name: shop\ndeploy: true\nprocesses:\n  web:\n    port: 8080\n',
  );
  git(config.appsDir, 'add', '-A');
  git(config.appsDir, 'commit', '-q', '-m', 'shop');
  const plane = await startPlane(t, config);
  await waitForApp(plane, 'shop');

  // A token issued over the API: reserved before, completed after with a different tokens digest.
  const issued = await request(`${plane.url}/api/access/tokens`, {
    method: 'POST',
    headers: auth,
    json: { name: 'scraper', scopes: ['metrics:read'] },
  });
  t.is(issued.status, 201, issued.text);
  const secret = issued.body.token.token as string;
  // An operation the worker runs: the deploy reserves its own receipt before the pipeline starts.
  const deploy = plane.deploys.deploys.deploy('shop');
  const finished = await plane.deploys.worker.waitFor(deploy.operation.id, 30_000);
  t.is(finished.status, 'failed');
  t.regex(finished.lastError ?? '', /digest-pinned/);
  t.true(
    listSteps(plane.db, deploy.deploymentId).some((s) => s.step === 'clone'),
    'a deploy with its receipt runs its steps',
  );

  const listed = await request(`${plane.url}/api/v1/audit/receipts?limit=20`, { headers: auth });
  t.is(listed.status, 200, listed.text);
  const receipts = [...listed.body.receipts].reverse();
  t.like(receipts[0], {
    phase: 'reserved',
    actor: 'control-token',
    action: 'POST /api/access/tokens',
    target: 'tokens',
  });
  t.like(receipts[1], { phase: 'completed', outcome: 'succeeded', receipt_id: receipts[0].receipt_id });
  t.not(receipts[1].after_digest, receipts[0].before_digest);
  t.like(receipts[1].refs, { status: '201' });
  t.like(receipts[2], { phase: 'reserved', actor: 'operation-worker', action: 'app.deploy', target: 'app:shop' });
  t.is(receipts[2].refs.operation, deploy.operation.id);
  // Production admission refused the deploy: the completion says so.
  t.like(receipts[3], { phase: 'completed', outcome: 'refused', receipt_id: receipts[2].receipt_id });
  t.regex(receipts[2].before_digest, /^[0-9a-f]{64}$/);
  t.false(listed.text.includes(secret), 'a token secret never reaches a receipt');
  t.false(fs.readFileSync(receiptFile(config.dataDir), 'utf8').includes(secret));

  // A scoped token may not read receipts; the CLI verifies them with the control token.
  const scoped = await request(`${plane.url}/api/v1/audit/receipts`, {
    headers: { authorization: `Bearer ${secret}` },
  });
  t.is(scoped.status, 403);
  const verified = await runSvc(['audit', 'verify', '--api', plane.url], { env: { SVC_API_TOKEN: 'tok' } });
  t.is(verified.code, 0, verified.stderr);
  t.regex(verified.stdout, /^ok: 4 receipt\(s\), 0 open/);
  const table = await runSvc(['audit', 'receipts', '--target', 'app:shop', '--api', plane.url], {
    env: { SVC_API_TOKEN: 'tok' },
  });
  t.is(table.code, 0, table.stderr);
  t.regex(table.stdout, /operation-worker\s+app\.deploy\s+app:shop/);

  // The receipt log on a full device: nothing is written, so nothing happens.
  const file = receiptFile(config.dataDir);
  fs.renameSync(file, `${file}.kept`);
  fs.symlinkSync('/dev/full', file);
  const tokensBefore = listAccessTokens(plane.db).length;
  const refused = await request(`${plane.url}/api/access/tokens`, {
    method: 'POST',
    headers: auth,
    json: { name: 'second', scopes: ['metrics:read'] },
  });
  t.is(refused.status, 503, refused.text);
  t.is(refused.body.error.code, 'audit_receipt_unavailable');
  t.is(listAccessTokens(plane.db).length, tokensBefore);
  const blocked = plane.deploys.deploys.deploy('shop');
  const blockedOp = await plane.deploys.worker.waitFor(blocked.operation.id, 30_000);
  t.is(blockedOp.status, 'failed');
  t.regex(blockedOp.lastError ?? '', /audit receipt could not be written/);
  t.deepEqual(listSteps(plane.db, blocked.deploymentId), [], 'no pipeline step ran');

  // Back on a writable log, the chain still verifies: the refused mutations left no receipt.
  fs.rmSync(file);
  fs.renameSync(`${file}.kept`, file);
  const after = await request(`${plane.url}/api/v1/audit/verify`, { headers: auth });
  t.like(after.body, { ok: true, receipts: 4, open: 0 });
  // Tampering shows in the CLI's exit code.
  fs.writeFileSync(file, fs.readFileSync(file, 'utf8').replace('"actor":"control-token"', '"actor":"someone-else"'));
  const tampered = await runSvc(['audit', 'verify', '--api', plane.url], { env: { SVC_API_TOKEN: 'tok' } });
  t.is(tampered.code, 1);
  t.regex(tampered.stdout, /FAILED: 4 receipt\(s\)[\s\S]*#1 hash/);
});
