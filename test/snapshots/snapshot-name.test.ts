// tier: quick
import test from 'ava';
import { ValidationError } from '../../domain/errors.js';
import {
  compactTimestamp,
  formatSnapshotName,
  parseSnapshotName,
  planRetention,
  resolveSnapshotReference,
} from '../../domain/snapshots/index.js';

const at = new Date('2026-11-21T23:38:39.123Z');

test('formatSnapshotName builds <db>_<kind>_<commit>_<timestamp>.dump and parseSnapshotName reads it back', (t) => {
  const name = formatSnapshotName({
    database: 'ledger_main',
    kind: 'predeploy',
    commit: 'abcdef0123456789abcdef0123456789abcdef01',
    at,
  });
  t.is(name, 'ledger_main_predeploy_abcdef012345_20261121T233839.dump');
  t.deepEqual(parseSnapshotName(name), {
    database: 'ledger_main',
    kind: 'predeploy',
    commit: 'abcdef012345',
    timestamp: '20261121T233839',
    filename: name,
  });
  t.is(formatSnapshotName({ database: 'ledger', kind: 'manual', at }), 'ledger_manual_none_20261121T233839.dump');
  t.is(compactTimestamp(at), '20261121T233839');
});

test('parseSnapshotName refuses paths, traversal and malformed names', (t) => {
  for (const bad of [
    '../ledger_manual_none_20261121T233839.dump',
    'a/ledger_manual_none_20261121T233839.dump',
    'ledger_manual_none_20261321T233839.dump',
    'ledger_weekly_none_20261121T233839.dump',
    'ledger_manual_none_20261121T233839.dump.tmp',
    '.incoming-x.part',
    '9db_manual_none_20261121T233839.dump',
  ]) {
    t.is(parseSnapshotName(bad), undefined, bad);
  }
  t.throws(() => formatSnapshotName({ database: 'bad-name', kind: 'manual', at }), {
    instanceOf: ValidationError,
    message: /portable identifier/,
  });
});

test('planRetention keeps the newest per database and marks older would-prune', (t) => {
  const files = [
    'ledger_manual_none_20260101T000000.dump',
    'ledger_manual_none_20260103T000000.dump',
    'ledger_predeploy_none_20260102T000000.dump',
    'audit_manual_none_20250101T000000.dump',
    'junk.txt',
  ];
  const plan = planRetention(files, 2);
  t.deepEqual(
    plan.map((e) => [e.filename, e.action]),
    [
      ['ledger_manual_none_20260103T000000.dump', 'keep'],
      ['ledger_predeploy_none_20260102T000000.dump', 'keep'],
      ['ledger_manual_none_20260101T000000.dump', 'would-prune'],
      ['audit_manual_none_20250101T000000.dump', 'keep'],
    ],
  );
  t.throws(() => planRetention(files, -1), { instanceOf: ValidationError });
});

test('resolveSnapshotReference accepts a timestamp only when it names exactly one snapshot', (t) => {
  const files = [
    'ledger_manual_none_20260101T000000.dump',
    'ledger_prerestore_none_20260101T000000.dump',
    'ledger_manual_none_20260102T000000.dump',
  ];
  t.is(resolveSnapshotReference('20260102T000000', files), 'ledger_manual_none_20260102T000000.dump');
  t.is(
    resolveSnapshotReference('ledger_manual_none_20260101T000000.dump', files),
    'ledger_manual_none_20260101T000000.dump',
  );
  const ambiguous = t.throws(() => resolveSnapshotReference('20260101T000000', files), { instanceOf: ValidationError });
  t.is(ambiguous.code, 'ambiguous_snapshot_timestamp');
  t.is(t.throws<ValidationError>(() => resolveSnapshotReference('20300101T000000', files))?.code, 'snapshot_not_found');
  t.is(
    t.throws<ValidationError>(() => resolveSnapshotReference('../etc/passwd', files))?.code,
    'invalid_snapshot_reference',
  );
});
