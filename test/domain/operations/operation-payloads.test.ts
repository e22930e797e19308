// tier: quick
import test from 'ava';
import { readDeployPayload, readSnapshotRestorePayload } from '../../../domain/operations/index.js';

test('readDeployPayload returns the well-typed fields of a stored deploy payload', (t) => {
  t.deepEqual(readDeployPayload({ deploymentId: 'dep_1', trigger: 'api', targetDeploymentId: 'dep_0' }), {
    deploymentId: 'dep_1',
    trigger: 'api',
    targetDeploymentId: 'dep_0',
  });
  t.deepEqual(readDeployPayload({ deploymentId: 'dep_1', trigger: 'auto', failedDeploymentId: 'dep_2', extra: 1 }), {
    deploymentId: 'dep_1',
    trigger: 'auto',
    failedDeploymentId: 'dep_2',
  });
});

test('readDeployPayload reads a field of the wrong type or an empty one as absent', (t) => {
  t.deepEqual(readDeployPayload({ deploymentId: 42, trigger: '', targetDeploymentId: null }), {});
  t.is(readDeployPayload({}).deploymentId, undefined);
});

test('readSnapshotRestorePayload needs a file name and keeps preRestore only when it is a boolean', (t) => {
  t.deepEqual(readSnapshotRestorePayload({ filename: 'a.dump', preRestore: false }), {
    filename: 'a.dump',
    preRestore: false,
  });
  t.deepEqual(readSnapshotRestorePayload({ filename: 'a.dump', preRestore: 'yes' }), { filename: 'a.dump' });
  t.is(readSnapshotRestorePayload({ preRestore: true }), undefined);
  t.is(readSnapshotRestorePayload({ filename: 7 }), undefined);
});
