// tier: full
import { once } from 'node:events';
import test from 'ava';
import { openControlStore } from '../../store/open-stores.js';
import { runSvc, startSvc } from '../helpers/cli.js';
import { startRestrictedFixture, type RestrictedFixture } from '../helpers/fleet/restricted-fixture.js';
import { admission, exchangeIdentity } from '../helpers/fleet/restricted-plane.js';
import { sampleIdentity, sampleReceipt } from '../helpers/fleet/receipts.js';

let fixture: RestrictedFixture;
test.before(async () => {
  fixture = await startRestrictedFixture();
});
test.after.always(async () => {
  await fixture?.stop();
});

/** `svc serve` in restricted mode, resolved when it listens. */
async function serve(env: Record<string, string>) {
  const started = await startSvc(['serve'], (line) => line.msg === 'restricted control plane listening', {
    env: { ...env, SVC_LOG_LEVEL: 'info' },
  });
  return { child: started.child, url: started.line.url as string, output: started.output };
}

test.serial(
  'reconcile completes an evidence commit interrupted by SIGKILL, rebuilding the commit intent from stored state',
  async (t) => {
    const env = { ...fixture.env, SVC_DATA_DIR: fixture.dataDir() };
    const first = await serve(env);
    const token = await exchangeIdentity(first.url, await fixture.identity('7001'));
    const identity = sampleIdentity({ rootAttemptId: 'crash-root' });
    const begun = await admission(first.url, 'sample', 'begin', { token, key: 'crash-1', json: identity });
    t.is(begun.status, 201, begun.text);
    const admissionId = begun.body.admissionId as string;
    const receipt = sampleReceipt(identity, { admissionId, generation: 1, nonce: begun.body.nonce });

    // The platform commits locally, then sends the evidence commit: kill it while that request is in flight.
    const held = fixture.evidence.holdNextCommit();
    const lost = admission(first.url, 'sample', 'admit', { token, key: 'crash-1', json: { receipt } }).catch(
      (error: unknown) => error,
    );
    await held;
    const exited = once(first.child, 'exit');
    first.child.kill('SIGKILL');
    const [, signal] = await exited;
    t.is(signal, 'SIGKILL');
    t.true((await lost) instanceof Error, 'the caller lost the response');
    t.is(fixture.evidence.records.get(admissionId)!.state, 'claimed', 'the evidence service never recorded the commit');

    // What the killed process left: the operation and the committed state, with the evidence commit pending.
    const store = openControlStore(env.SVC_DATA_DIR);
    const row = store.db
      .prepare('SELECT state, commit_pending, operation_id FROM external_admissions WHERE id = ?')
      .get(admissionId) as { state: string; commit_pending: number; operation_id: string };
    t.like(row, { state: 'committed', commit_pending: 1 });
    t.is(
      (store.db.prepare('SELECT status FROM operations WHERE id = ?').get(row.operation_id) as { status: string })
        .status,
      'succeeded',
    );
    store.db.close();

    // A new process: the caller reads the context instead of inferring from the lost response, then reconciles.
    const second = await serve(env);
    t.teardown(() => void second.child.kill('SIGTERM'));
    const context = await admission(second.url, 'sample', `context/${admissionId}`, { token, method: 'GET' });
    t.like(context.body, { state: 'committed', commitPending: true, operation: { id: row.operation_id } });
    const reconciled = await admission(second.url, 'sample', 'reconcile', {
      token,
      key: 'reconcile-1',
      json: { admissionId },
    });
    t.is(reconciled.status, 200, reconciled.text);
    t.like(reconciled.body, { state: 'committed', commitPending: false, operation: { id: row.operation_id } });
    const record = fixture.evidence.records.get(admissionId)!;
    t.is(record.state, 'committed');
    t.like(record.commit, {
      operationId: row.operation_id,
      operationDigest: context.body.operation.digest,
      snapshotDigest: context.body.snapshotDigest,
      receiptSha256: context.body.receiptSha256,
      cleanupIntentDigest: context.body.cleanup.intentDigest,
    });
    // Safe to retry: a second reconcile and an exact admit retry change nothing.
    t.is(
      (await admission(second.url, 'sample', 'reconcile', { token, key: 'reconcile-2', json: { admissionId } })).status,
      200,
    );
    const retry = await admission(second.url, 'sample', 'admit', { token, key: 'crash-1', json: { receipt } });
    t.is(retry.status, 200);
    t.is(retry.body.operation.id, row.operation_id);
    t.is(record.revision, fixture.evidence.records.get(admissionId)!.revision);
    const exitedSecond = once(second.child, 'exit');
    second.child.kill('SIGTERM');
    await exitedSecond;
    const after = openControlStore(env.SVC_DATA_DIR);
    t.is(
      (after.db.prepare("SELECT COUNT(*) AS n FROM operations WHERE kind = 'app.deploy'").get() as { n: number }).n,
      1,
    );
    after.db.close();
  },
);

test.serial(
  'reconcile acknowledges an evidence commit that landed but whose answer was lost to SIGKILL, without committing twice',
  async (t) => {
    const env = { ...fixture.env, SVC_DATA_DIR: fixture.dataDir() };
    const first = await serve(env);
    const token = await exchangeIdentity(first.url, await fixture.identity('7002'));
    const identity = sampleIdentity({ rootAttemptId: 'landed-root' });
    const begun = await admission(first.url, 'sample', 'begin', { token, key: 'landed-1', json: identity });
    const admissionId = begun.body.admissionId as string;
    const held = fixture.evidence.holdNextCommit({ record: true });
    const lost = admission(first.url, 'sample', 'admit', {
      token,
      key: 'landed-1',
      json: { receipt: sampleReceipt(identity, { admissionId, generation: 1, nonce: begun.body.nonce }) },
    }).catch((error: unknown) => error);
    await held;
    const exited = once(first.child, 'exit');
    first.child.kill('SIGKILL');
    await exited;
    await lost;
    const record = fixture.evidence.records.get(admissionId)!;
    t.is(record.state, 'committed', 'the evidence service recorded the commit');
    const revision = record.revision;

    const second = await serve(env);
    t.teardown(() => void second.child.kill('SIGTERM'));
    t.true(
      (await admission(second.url, 'sample', `context/${admissionId}`, { token, method: 'GET' })).body.commitPending,
    );
    // The resent commit meets a moved revision; the status shows this snapshot committed: acknowledged.
    const reconciled = await admission(second.url, 'sample', 'reconcile', {
      token,
      key: 'reconcile-landed',
      json: { admissionId },
    });
    t.is(reconciled.status, 200, reconciled.text);
    t.like(reconciled.body, { state: 'committed', commitPending: false, evidenceRevision: revision });
    t.is(fixture.evidence.records.get(admissionId)!.revision, revision, 'nothing was committed twice');
    const exitedSecond = once(second.child, 'exit');
    second.child.kill('SIGTERM');
    await exitedSecond;
  },
);

test('svc serve in restricted mode with partial bridge settings stops with a message naming every missing setting', async (t) => {
  const partial = Object.fromEntries(
    Object.entries(fixture.env).filter(
      ([name]) =>
        ![
          'SVC_EXTERNAL_FLEET_NAMESPACE',
          'SVC_EXTERNAL_FLEET_VERIFIER_TOKEN_FILE',
          'SVC_EXTERNAL_FLEET_GITHUB_CLI_PATH',
        ].includes(name),
    ),
  );
  const result = await runSvc(['serve'], { env: { ...partial, SVC_DATA_DIR: fixture.dataDir() } });
  t.is(result.code, 1, result.stderr);
  for (const name of [
    'SVC_EXTERNAL_FLEET_NAMESPACE is missing',
    'SVC_EXTERNAL_FLEET_VERIFIER_TOKEN_FILE is missing',
    'SVC_EXTERNAL_FLEET_GITHUB_CLI_PATH is missing',
  ])
    t.true(result.stderr.includes(name), `${name} in ${result.stderr}`);
  t.false(result.stderr.includes(fixture.evidence.registrationToken));
});
