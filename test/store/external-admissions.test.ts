// tier: full
import test from 'ava';
import { openControlStore } from '../../store/open-stores.js';
import {
  consumeNonce,
  countUnconsumedNonces,
  deleteExpiredNonces,
  getNonce,
  insertAdmission,
  replaceNonce,
} from '../../store/control/external-admissions.js';
import { sampleIdentity } from '../helpers/fleet/receipts.js';
import { tempDir } from '../helpers/temp-dir.js';

const now = new Date('2026-11-25T08:00:00Z');
const at = (minutes: number) => new Date(now.getTime() + minutes * 60_000).toISOString();

test('expired nonce rows are removed in bounded batches, oldest first, and live ones stay', (t) => {
  const { db } = openControlStore(tempDir(t));
  t.teardown(() => db.close());
  for (let i = 0; i < 250; i += 1) {
    insertAdmission(
      db,
      {
        id: `adm_${String(i).padStart(20, '0')}`,
        app: 'sample',
        idempotencyKey: `key-${i}`,
        requestDigest: 'd',
        identity: sampleIdentity(),
        repository: 'acme/fleet',
        runId: '1',
        revision: 1,
        nonce: {
          nonceSha256: `hash-${i}`,
          generation: 1,
          runKey: 'acme/fleet#1',
          issuedAt: at(-60),
          expiresAt: at(i < 240 ? -30 + i / 10 : 30),
        },
      },
      now,
    );
  }
  t.is(deleteExpiredNonces(db, now, 100), 100);
  t.is(getNonce(db, 'adm_00000000000000000000', 1), undefined, 'the oldest went first');
  t.truthy(getNonce(db, 'adm_00000000000000000100', 1));
  t.is(deleteExpiredNonces(db, now, 100), 100);
  t.is(deleteExpiredNonces(db, now, 100), 40);
  t.is(deleteExpiredNonces(db, now, 100), 0);
  t.is((db.prepare('SELECT COUNT(*) AS n FROM external_admission_nonces').get() as { n: number }).n, 10);
  t.is(countUnconsumedNonces(db, 'acme/fleet#1', now), 10);
});

test('a nonce is consumed once, and a replacement retires the older generation', (t) => {
  const { db } = openControlStore(tempDir(t));
  t.teardown(() => db.close());
  const id = 'adm_11111111111111111111';
  insertAdmission(
    db,
    {
      id,
      app: 'sample',
      idempotencyKey: 'k',
      requestDigest: 'd',
      identity: sampleIdentity(),
      repository: 'acme/fleet',
      runId: '1',
      revision: 1,
      nonce: { nonceSha256: 'h1', generation: 1, runKey: 'r', issuedAt: at(0), expiresAt: at(30) },
    },
    now,
  );
  const replaced = replaceNonce(
    db,
    id,
    { nonceSha256: 'h2', generation: 2, runKey: 'r', issuedAt: at(1), expiresAt: at(31) },
    2,
    now,
  );
  t.like(replaced, { generation: 2, evidenceRevision: 2 });
  t.false(consumeNonce(db, id, 1, now), 'the replaced generation cannot be consumed');
  t.true(consumeNonce(db, id, 2, now));
  t.false(consumeNonce(db, id, 2, now), 'only once');
  t.is(countUnconsumedNonces(db, 'r', now), 0);
});
