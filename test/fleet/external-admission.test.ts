// tier: full
import test from 'ava';
import type { Db } from '../../store/database.js';
import { request } from '../helpers/http-request.js';
import { SAMPLE, startRestrictedFixture, type RestrictedFixture } from '../helpers/fleet/restricted-fixture.js';
import { admission, exchangeIdentity, startTestRestrictedPlane } from '../helpers/fleet/restricted-plane.js';
import { sampleIdentity, sampleReceipt, sha256 } from '../helpers/fleet/receipts.js';

let fixture: RestrictedFixture;
test.before(async () => {
  fixture = await startRestrictedFixture();
});
test.after.always(async () => {
  await fixture?.stop();
});

const env = () => ({ ...fixture.env, SVC_DATA_DIR: fixture.dataDir() });
const ADMIN = () => ({ authorization: `Bearer ${fixture.adminToken}` });
const count = (db: Db, sql: string, ...args: unknown[]) => (db.prepare(sql).get(...args) as { n: number }).n;

test('each external admission transition answers through HTTP: begin, exact retries, admit with Location, context, absence proof, cleanup', async (t) => {
  const { url, plane, logs } = await startTestRestrictedPlane(t, env());
  const idToken = await fixture.identity('9001');
  const token = await exchangeIdentity(url, idToken);
  t.regex(token, /^svc_wit_[a-z2-7]{32}$/);
  const identity = sampleIdentity();

  // Only the exchanged workload token reaches the routes; the key is required.
  const asAdmin = await request(`${url}/api/v1/apps/sample/external-deployments/begin`, {
    method: 'POST',
    headers: { ...ADMIN(), 'idempotency-key': 'k1' },
    json: identity,
  });
  t.is(asAdmin.status, 403);
  t.is(asAdmin.body.error.code, 'insufficient_scope');
  t.is(asAdmin.headers.get('cache-control'), 'no-store');
  t.is(
    (await admission(url, 'sample', 'begin', { token, json: identity })).body.error.code,
    'idempotency_key_required',
  );

  // none -> registered: 201 with the one-time nonce; only its hash went to the evidence service first.
  const begun = await admission(url, 'sample', 'begin', { token, key: 'deploy-1', json: identity });
  t.is(begun.status, 201, begun.text);
  t.is(begun.headers.get('cache-control'), 'no-store');
  t.is(begun.headers.get('pragma'), 'no-cache');
  const nonce = begun.body.nonce as string;
  const admissionId = begun.body.admissionId as string;
  t.regex(nonce, /^[A-Za-z0-9_-]{43}$/);
  t.regex(admissionId, /^adm_[0-9a-f]{20}$/);
  t.like(begun.body, { state: 'registered', nonceGeneration: 1, app: 'sample', operation: null, commitPending: false });
  const registration = fixture.evidence.received.find((r) => r.method === 'PUT' && r.path.includes(admissionId))!;
  t.is(JSON.parse(registration.body).nonceSha256, sha256(nonce));
  t.deepEqual(JSON.parse(registration.body).logicalIdentity, identity);

  // A begin retry while registered must resume (the nonce was shown once); another identity under the key is refused.
  const retryRegistered = await admission(url, 'sample', 'begin', { token, key: 'deploy-1', json: identity });
  t.is(retryRegistered.status, 409);
  t.is(retryRegistered.body.error.code, 'admission_requires_resume');
  const reused = await admission(url, 'sample', 'begin', {
    token,
    key: 'deploy-1',
    json: sampleIdentity({ rootAttemptId: 'other-root' }),
  });
  t.is(reused.status, 422);
  t.is(reused.body.error.code, 'idempotency_key_reused');

  // registered -> committed: 201 with the operation's Location.
  const receipt = sampleReceipt(identity, { admissionId, generation: 1, nonce });
  const admitted = await admission(url, 'sample', 'admit', { token, key: 'deploy-1', json: { receipt } });
  t.is(admitted.status, 201, admitted.text);
  const operationId = admitted.body.operation.id as string;
  t.is(admitted.headers.get('location'), `/api/v1/operations/${operationId}`);
  t.like(admitted.body, { state: 'committed', commitPending: false, checkpointRefs: [{ kind: 'external_admission' }] });
  const operation = await request(`${url}/api/v1/operations/${operationId}`, { headers: ADMIN() });
  t.like(operation.body, {
    id: operationId,
    kind: 'app.deploy',
    status: 'succeeded',
    app: 'sample',
    ref: SAMPLE.sha,
    attempts: 1,
    maxAttempts: 1,
  });
  t.is(
    count(plane.db, "SELECT COUNT(*) AS n FROM deployment_regions WHERE region = 'eu-west' AND status = 'succeeded'"),
    1,
  );
  const record = fixture.evidence.records.get(admissionId)!;
  t.is(record.state, 'committed');
  t.is(record.commit!.operationId, operationId);
  t.is(record.commit!.operationDigest, admitted.body.operation.digest);

  // Exact retries of admit (receipt or receipt-free) and of begin: 200, no second operation or nonce.
  const again = await admission(url, 'sample', 'admit', { token, key: 'deploy-1', json: { receipt } });
  t.is(again.status, 200);
  t.is(again.body.operation.id, operationId);
  const replay = await admission(url, 'sample', 'admit', { token, key: 'deploy-1', json: { admissionId } });
  t.is(replay.status, 200);
  t.is((await admission(url, 'sample', 'admit', { token, key: 'other-key', json: { admissionId } })).status, 422);
  const beginAgain = await admission(url, 'sample', 'begin', { token, key: 'deploy-1', json: identity });
  t.is(beginAgain.status, 200);
  t.is(beginAgain.body.nonce, undefined);
  t.is(count(plane.db, "SELECT COUNT(*) AS n FROM operations WHERE kind = 'app.deploy'"), 1);
  t.is(count(plane.db, 'SELECT COUNT(*) AS n FROM external_admission_nonces'), 1);
  t.is(fixture.evidence.records.get(admissionId)!.registrations.length, 1);

  // committed -> cleanup_ready only once the evidence service adds the absence proof.
  const context = `context/${admissionId}`;
  t.like((await admission(url, 'sample', context, { token, method: 'GET' })).body, {
    state: 'committed',
    cleanup: { state: 'not_ready', checkpoint: null },
  });
  const bindings = {
    admissionId,
    operationId,
    receiptSha256: admitted.body.receiptSha256,
    cleanupIntentSha256: admitted.body.cleanup.intentDigest,
    absenceProofSha256: sha256('absence proof'),
  };
  const early = await admission(url, 'sample', 'cleanup', { token, key: 'cleanup-1', json: bindings });
  t.is(early.status, 409);
  t.is(early.body.error.code, 'cleanup_not_ready');
  fixture.evidence.addAbsenceProof(admissionId, sha256('absence proof'));
  const ready = await admission(url, 'sample', context, { token, method: 'GET' });
  t.like(ready.body, {
    state: 'cleanup_ready',
    cleanup: {
      state: 'ready',
      absenceProofDigest: sha256('absence proof'),
      checkpoint: { kind: 'external_cleanup', evidenceDigest: sha256('absence proof'), written: false },
    },
  });
  t.is(ready.headers.get('cache-control'), 'no-store');

  // cleanup refuses when any persisted binding differs, and changes nothing.
  for (const name of ['operationId', 'receiptSha256', 'cleanupIntentSha256', 'absenceProofSha256'] as const) {
    const refused = await admission(url, 'sample', 'cleanup', {
      token,
      key: `cleanup-${name}`,
      json: { ...bindings, [name]: name === 'operationId' ? 'op_00000000000000000000' : sha256(name) },
    });
    t.is(refused.status, 409, name);
    t.is(refused.body.error.code, 'cleanup_binding_mismatch');
    t.deepEqual(refused.body.error.details.differing, [name]);
  }
  t.is((await admission(url, 'sample', context, { token, method: 'GET' })).body.state, 'cleanup_ready');
  const cleaned = await admission(url, 'sample', 'cleanup', { token, key: 'cleanup-1', json: bindings });
  t.is(cleaned.status, 200, cleaned.text);
  t.like(cleaned.body, { state: 'complete', cleanup: { state: 'complete', checkpoint: { written: true } } });
  t.deepEqual(
    cleaned.body.checkpointRefs.map((c: { kind: string }) => c.kind),
    ['external_admission', 'external_cleanup'],
  );
  t.is(cleaned.body.checkpointRefs[1].evidenceDigest, sha256('absence proof'));
  t.is((await admission(url, 'sample', 'cleanup', { token, key: 'cleanup-1', json: bindings })).status, 200);

  // The raw nonce and the credentials were never logged, sent on, nor answered again.
  const everything = [
    ...logs,
    ...fixture.evidence.received.map((r) => r.body),
    ...fixture.gitHost.received.map((r) => r.body),
    JSON.stringify(again.body),
    JSON.stringify(ready.body),
    JSON.stringify(cleaned.body),
  ].join('\n');
  for (const secret of [
    nonce,
    token,
    idToken,
    fixture.adminToken,
    fixture.evidence.verifierToken,
    fixture.evidence.registrationToken,
  ])
    t.false(everything.includes(secret));
  const audit = await request(`${url}/api/v1/audit`, { headers: ADMIN() });
  t.true(audit.body.verified);
  for (const secret of [nonce, token, idToken]) t.false(audit.text.includes(secret));
  t.deepEqual(audit.body.entries.map((e: { action: string }) => e.action).reverse(), [
    'workload_token.exchanged',
    'external_admission.begin',
    'external_admission.claimed',
    'external_admission.committed',
    'external_admission.cleanup',
  ]);
  t.true(
    logs.some((line) => line.includes(admissionId)),
    'the admission is logged by id',
  );
});

test('resume returns a replacement nonce for the same logical deployment, and a receipt of the replaced nonce is refused', async (t) => {
  const { url, plane } = await startTestRestrictedPlane(t, env());
  const token = await exchangeIdentity(url, await fixture.identity('9002'));
  const identity = sampleIdentity({ rootAttemptId: 'attempt-resume' });
  const begun = await admission(url, 'sample', 'begin', { token, key: 'resume-1', json: identity });
  const admissionId = begun.body.admissionId as string;
  const changed = await admission(url, 'sample', 'resume', {
    token,
    key: 'resume-1',
    json: { admissionId, logicalIdentity: sampleIdentity({ rootAttemptId: 'attempt-other' }) },
  });
  t.is(changed.status, 409);
  t.is(changed.body.error.code, 'logical_identity_mismatch');
  const resumed = await admission(url, 'sample', 'resume', {
    token,
    key: 'resume-1',
    json: { admissionId, logicalIdentity: identity },
  });
  t.is(resumed.status, 201, resumed.text);
  t.like(resumed.body, { admissionId, state: 'registered', nonceGeneration: 2 });
  t.not(resumed.body.nonce, begun.body.nonce);
  t.is(fixture.evidence.records.get(admissionId)!.generation, 2);
  const stale = await admission(url, 'sample', 'admit', {
    token,
    key: 'resume-1',
    json: { receipt: sampleReceipt(identity, { admissionId, generation: 1, nonce: begun.body.nonce }) },
  });
  t.is(stale.status, 422);
  t.is(stale.body.error.code, 'receipt_mismatch');
  const admitted = await admission(url, 'sample', 'admit', {
    token,
    key: 'resume-1',
    json: { receipt: sampleReceipt(identity, { admissionId, generation: 2, nonce: resumed.body.nonce }) },
  });
  t.is(admitted.status, 201, admitted.text);
  t.is(admitted.body.retryLineage.length, 2);
  const existing = await admission(url, 'sample', 'resume', {
    token,
    key: 'resume-1',
    json: { admissionId, logicalIdentity: identity },
  });
  t.is(existing.status, 200);
  t.is(existing.body.nonce, undefined);
  t.is(count(plane.db, 'SELECT COUNT(*) AS n FROM operations'), 1);
});

test('at most three unconsumed nonces exist per protected run, each run has its own budget, and inadmissible identities are refused with a 4xx', async (t) => {
  const { url } = await startTestRestrictedPlane(t, env());
  const token = await exchangeIdentity(url, await fixture.identity('9003'));
  for (const n of [1, 2, 3])
    t.is(
      (
        await admission(url, 'sample', 'begin', {
          token,
          key: `n-${n}`,
          json: sampleIdentity({ rootAttemptId: `root-${n}` }),
        })
      ).status,
      201,
    );
  const fourth = await admission(url, 'sample', 'begin', {
    token,
    key: 'n-4',
    json: sampleIdentity({ rootAttemptId: 'root-4' }),
  });
  t.is(fourth.status, 409);
  t.is(fourth.body.error.code, 'nonce_limit_reached');
  t.is(fourth.headers.get('retry-after'), '60');
  // Another run of the same workflow has its own budget.
  const other = await exchangeIdentity(url, await fixture.identity('9004'));
  const begun = await admission(url, 'sample', 'begin', {
    token: other,
    key: 'n-4',
    json: sampleIdentity({ rootAttemptId: 'root-4' }),
  });
  t.is(begun.status, 201);
  t.is(
    (await admission(url, 'sample', `context/${begun.body.admissionId}`, { token, method: 'GET' })).status,
    200,
    'same repository',
  );
  // Refusals of bad input are 4xx and record nothing.
  t.is(
    (await admission(url, 'sample', 'begin', { token: other, key: 'bad', json: { ...sampleIdentity(), extra: true } }))
      .status,
    400,
  );
  const notAllowed = await admission(url, 'sample', 'begin', {
    token: other,
    key: 'bad',
    json: sampleIdentity({ artifact: { image: `other@sha256:${'f'.repeat(64)}` } }),
  });
  t.is(notAllowed.status, 422);
  t.is(notAllowed.body.error.code, 'admission_not_allowed');
  t.is((await admission(url, 'other-app', 'begin', { token: other, key: 'bad', json: sampleIdentity() })).status, 404);
});

test('the fleet:external-admission scope comes only from a workflow identity that matches every binding', async (t) => {
  const { url } = await startTestRestrictedPlane(t, env());
  const exchange = async (idToken: string) =>
    request(`${url}/api/v1/fleet/external-admission/token`, { method: 'POST', json: { idToken } });
  const wrongWorkflow = await exchange(
    await fixture.identity('1', {
      job_workflow_ref: `${SAMPLE.fleetRepository}/.github/workflows/other.yml@refs/heads/main`,
      ref: 'refs/heads/dev',
    }),
  );
  t.is(wrongWorkflow.status, 403);
  t.deepEqual(wrongWorkflow.body.error.details.bindings, ['workflow', 'ref']);
  t.is(
    (await exchange(await fixture.identity('1', {}, { audience: 'svc:staging:deploy' }))).status,
    401,
    'the intent is part of the audience',
  );
  t.is(
    (await exchange(await fixture.identity('1', {}, { foreignKey: true }))).status,
    401,
    'signed by a key outside the issuer key set',
  );
  t.is((await exchange('not-a-jwt')).status, 401);
  const token = await exchangeIdentity(url, await fixture.identity('1'));
  // The workload token reaches only the admission routes.
  t.is((await request(`${url}/api/v1/fleet/inventory`, { headers: { authorization: `Bearer ${token}` } })).status, 403);
  t.is((await request(`${url}/api/v1/audit`, { headers: { authorization: `Bearer ${token}` } })).status, 403);
  t.is(
    (
      await request(`${url}/api/v1/apps/sample/external-deployments/begin`, {
        method: 'POST',
        headers: { 'idempotency-key': 'x' },
        json: sampleIdentity(),
      })
    ).status,
    401,
  );
});

test('without a configured verifier every admission call answers external_deployment_verifier_unavailable and records nothing', async (t) => {
  const withoutBridge = Object.fromEntries(
    Object.entries(env()).filter(([name]) => !name.startsWith('SVC_EXTERNAL_FLEET_')),
  );
  const { url, plane } = await startTestRestrictedPlane(t, withoutBridge);
  t.false(plane.bridge);
  const token = await exchangeIdentity(url, await fixture.identity('9005'));
  for (const step of ['begin', 'admit', 'resume', 'reconcile', 'cleanup']) {
    const answer = await admission(url, 'sample', step, { token, key: 'k', json: sampleIdentity() });
    t.is(answer.status, 503, step);
    t.is(answer.body.error.code, 'external_deployment_verifier_unavailable');
    t.is(answer.headers.get('cache-control'), 'no-store');
  }
  t.is((await admission(url, 'sample', 'context/adm_00000000000000000000', { token, method: 'GET' })).status, 503);
  t.false(
    fixture.evidence.received.some((r) => r.body.includes('"runId":"9005"')),
    'nothing reached the evidence service',
  );
  t.is(count(plane.db, 'SELECT COUNT(*) AS n FROM external_admissions'), 0);
  t.is(count(plane.db, 'SELECT COUNT(*) AS n FROM external_admission_nonces'), 0);
  const capabilities = await request(`${url}/api/v1/capabilities`, { headers: ADMIN() });
  t.false(capabilities.text.includes('external-deployments'));
});

test('the deprecated alias delegates to the v4 admit and refuses the legacy nonce-issuance and v3 forms', async (t) => {
  const { url } = await startTestRestrictedPlane(t, env());
  const token = await exchangeIdentity(url, await fixture.identity('9006'));
  const identity = sampleIdentity({ rootAttemptId: 'alias-root' });
  const legacy = await admission(url, 'sample', '', { token, key: 'alias', json: { app: 'sample' } });
  t.is(legacy.status, 400);
  t.is(legacy.body.error.code, 'legacy_form_refused');
  const begun = await admission(url, 'sample', 'begin', { token, key: 'alias', json: identity });
  const receipt = sampleReceipt(identity, {
    admissionId: begun.body.admissionId,
    generation: 1,
    nonce: begun.body.nonce,
  });
  const v3 = await admission(url, 'sample', '', {
    token,
    key: 'alias',
    json: { receipt: { ...receipt, schemaVersion: 'v3' } },
  });
  t.is(v3.status, 400);
  t.is(v3.body.error.code, 'unsupported_receipt_version');
  const admitted = await admission(url, 'sample', '', { token, key: 'alias', json: { receipt } });
  t.is(admitted.status, 201, admitted.text);
  t.is(admitted.headers.get('deprecation'), 'true');
});

test('a claim whose answer was lost leaves the nonce consumed; resume registers against the revision the evidence service reports', async (t) => {
  const { url, plane } = await startTestRestrictedPlane(t, env());
  const token = await exchangeIdentity(url, await fixture.identity('9007'));
  const identity = sampleIdentity({ rootAttemptId: 'lost-claim-root' });
  const begun = await admission(url, 'sample', 'begin', { token, key: 'lost-claim', json: identity });
  const admissionId = begun.body.admissionId as string;
  const receipt = sampleReceipt(identity, { admissionId, generation: 1, nonce: begun.body.nonce });
  fixture.evidence.loseNextClaimAnswer(admissionId);
  const lost = await admission(url, 'sample', 'admit', { token, key: 'lost-claim', json: { receipt } });
  t.is(lost.status, 503);
  t.is(lost.body.error.code, 'evidence_service_unavailable');
  t.is(fixture.evidence.records.get(admissionId)!.state, 'claimed', 'the claim landed');
  const retry = await admission(url, 'sample', 'admit', { token, key: 'lost-claim', json: { receipt } });
  t.is(retry.status, 409);
  t.is(retry.body.error.code, 'nonce_not_available');
  const resumed = await admission(url, 'sample', 'resume', {
    token,
    key: 'lost-claim',
    json: { admissionId, logicalIdentity: identity },
  });
  t.is(resumed.status, 201, resumed.text);
  const admitted = await admission(url, 'sample', 'admit', {
    token,
    key: 'lost-claim',
    json: { receipt: sampleReceipt(identity, { admissionId, generation: 2, nonce: resumed.body.nonce }) },
  });
  t.is(admitted.status, 201, admitted.text);
  t.is(count(plane.db, 'SELECT COUNT(*) AS n FROM operations'), 1);
});
