// tier: full
/**
 * Audit receipts (ADR 0187) with a real Ed25519 key and the receipt log on disk: a reservation is on
 * disk before the mutation runs, verify detects altered, removed and foreign receipts, and a receipt
 * log that cannot be written (on /dev/full, a real full device) stops the mutation.
 */
import fs from 'node:fs';
import path from 'node:path';
import { generateKeyPairSync, sign } from 'node:crypto';
import test, { type ExecutionContext } from 'ava';
import { AuditReceipts } from '../../controllers/audit/audit-receipts.js';
import { canonicalDigest } from '../../domain/canonical-json.js';
import type { AuditReceipt } from '../../domain/audit/audit-receipt.js';
import { auditKeyFile, ensureAuditKey } from '../../platform/audit/audit-key.js';
import { ReceiptFile, receiptFile } from '../../platform/audit/receipt-file.js';
import { runSvc } from '../helpers/cli.js';
import { tempDir } from '../helpers/temp-dir.js';

function setUp(t: ExecutionContext) {
  const dataDir = tempDir(t);
  const state = path.join(dataDir, 'state.json');
  fs.writeFileSync(state, '{"n":0}');
  const receipts = new AuditReceipts({
    file: new ReceiptFile(receiptFile(dataDir)),
    key: ensureAuditKey(dataDir),
    // The target's state is a real file the mutation changes.
    digest: (target) => (target === 'thing' ? canonicalDigest(fs.readFileSync(state, 'utf8')) : null),
  });
  const lines = () =>
    fs
      .readFileSync(receiptFile(dataDir), 'utf8')
      .split('\n')
      .filter(Boolean)
      .map((l) => JSON.parse(l) as AuditReceipt);
  return { dataDir, state, receipts, lines };
}

test('guard stores a signed reservation before the mutation runs and a completion with the digest after', async (t) => {
  const { dataDir, state, receipts, lines } = setUp(t);
  t.is(fs.statSync(auditKeyFile(dataDir)).mode & 0o777, 0o600);
  const before = canonicalDigest(fs.readFileSync(state, 'utf8'));
  let seenDuringRun: AuditReceipt[] = [];
  await receipts.guard({
    reservation: { actor: 'control-token', action: 'thing.bump', target: 'thing' },
    run: async () => {
      seenDuringRun = lines();
      fs.writeFileSync(state, '{"n":1}');
    },
  });
  t.is(seenDuringRun.length, 1);
  t.like(seenDuringRun[0], { seq: 1, phase: 'reserved', actor: 'control-token', beforeDigest: before });
  const [reserved, completed] = lines();
  t.like(completed, {
    seq: 2,
    phase: 'completed',
    receiptId: reserved!.receiptId,
    outcome: 'succeeded',
    afterDigest: canonicalDigest('{"n":1}'),
    prevSha256: reserved!.sha256,
  });
  t.not(completed!.afterDigest, reserved!.beforeDigest);
  t.deepEqual(receipts.verify(), {
    ok: true,
    receipts: 2,
    open: 0,
    problems: [],
    headSha256: completed!.sha256,
  });
  // A mutation that throws is completed as failed and the error still reaches the caller.
  await t.throwsAsync(
    receipts.guard({
      reservation: { actor: 'control-token', action: 'thing.bump', target: 'thing' },
      run: async () => {
        throw new Error('boom');
      },
    }),
    { message: 'boom' },
  );
  t.is(lines().at(-1)?.outcome, 'failed');
  t.is(receipts.list({ limit: 10, offset: 0, target: 'thing' }).length, 4);
  // The key is reused by the next start: receipts written before still verify.
  const again = new AuditReceipts({
    file: new ReceiptFile(receiptFile(dataDir)),
    key: ensureAuditKey(dataDir),
    digest: () => null,
  });
  t.true(again.verify().ok);
});

test('guards in flight share their writes and flushes and still chain every receipt in order', async (t) => {
  const { receipts, lines } = setUp(t);
  const reservedWhenRun = new Map<number, boolean>();
  await Promise.all(
    Array.from({ length: 40 }, (_, i) =>
      receipts.guard({
        reservation: { actor: 'a', action: 'thing.bump', target: `thing-${i}` },
        run: async () => {
          // The mutation starts only once its own reservation is in the log.
          reservedWhenRun.set(
            i,
            lines().some((r) => r.phase === 'reserved' && r.target === `thing-${i}`),
          );
          return i;
        },
      }),
    ),
  );
  t.is(reservedWhenRun.size, 40);
  t.true([...reservedWhenRun.values()].every(Boolean));
  const all = lines();
  t.is(all.length, 80);
  t.deepEqual(
    all.map((r) => r.seq),
    all.map((_, i) => i + 1),
  );
  for (let i = 0; i < 40; i++) {
    const mine = all.filter((r) => r.target === `thing-${i}`);
    t.deepEqual(
      mine.map((r) => r.phase),
      ['reserved', 'completed'],
    );
    t.is(mine[0]!.receiptId, mine[1]!.receiptId);
  }
  t.like(receipts.verify(), { ok: true, receipts: 80, open: 0, problems: [] });
});

test('verify names an altered receipt, a removed one and one signed with another key', async (t) => {
  const { receipts, dataDir } = setUp(t);
  for (let i = 0; i < 3; i += 1)
    await receipts.guard({ reservation: { actor: 'a', action: 'thing.bump', target: 'thing' }, run: async () => i });
  const file = receiptFile(dataDir);
  const original = fs.readFileSync(file, 'utf8');
  const rows = original.split('\n').filter(Boolean);

  fs.writeFileSync(file, rows.map((l, i) => (i === 2 ? l.replace('"actor":"a"', '"actor":"mallory"') : l)).join('\n'));
  const altered = receipts.verify();
  t.false(altered.ok);
  t.deepEqual(
    altered.problems.map((p) => [p.seq, p.problem]),
    [[3, 'hash']],
  );

  fs.writeFileSync(file, rows.filter((_, i) => i !== 3).join('\n'));
  const removed = receipts.verify();
  t.false(removed.ok);
  t.deepEqual(
    removed.problems.map((p) => [p.seq, p.problem]),
    [
      [5, 'sequence'],
      [5, 'chain'],
    ],
  );

  // A receipt re-hashed and signed with a key that is not the platform's.
  const stranger = generateKeyPairSync('ed25519').privateKey;
  const forged = JSON.parse(rows[5]!) as AuditReceipt & Record<string, unknown>;
  const { sha256: _sha, signature: _sig, ...body } = { ...forged, outcome: 'refused' as const };
  const sha256 = canonicalDigest(body);
  const signature = sign(null, Buffer.from(sha256), stranger).toString('base64');
  fs.writeFileSync(file, [...rows.slice(0, 5), JSON.stringify({ ...body, sha256, signature })].join('\n'));
  t.deepEqual(
    receipts.verify().problems.map((p) => [p.seq, p.problem]),
    [[6, 'signature']],
  );
  fs.writeFileSync(file, original);
  t.true(receipts.verify().ok);
});

test('a mutation whose receipt cannot be written does not run: the receipt log on a full device', async (t) => {
  const { receipts, dataDir, state } = setUp(t);
  await receipts.guard({ reservation: { actor: 'a', action: 'thing.bump', target: 'thing' }, run: async () => 0 });
  const file = receiptFile(dataDir);
  fs.renameSync(file, `${file}.kept`);
  // /dev/full answers every write with ENOSPC, as a full disk does.
  fs.symlinkSync('/dev/full', file);
  let ran = false;
  const error = await t.throwsAsync(
    receipts.guard({
      reservation: { actor: 'a', action: 'thing.bump', target: 'thing' },
      run: async () => {
        ran = true;
        fs.writeFileSync(state, '{"n":99}');
      },
    }),
  );
  t.false(ran);
  t.is((error as { code?: string }).code, 'audit_receipt_unavailable');
  t.regex(error.message, /ENOSPC/);
  t.is(fs.readFileSync(state, 'utf8'), '{"n":0}');
  fs.rmSync(file);
  fs.renameSync(`${file}.kept`, file);
  t.true(receipts.verify().ok);
  t.is(receipts.verify().receipts, 2);
});

test('svc secrets init-key reserves a host-key receipt in production and creates no key when it cannot', async (t) => {
  const dataDir = tempDir(t);
  const env = { SVC_PROFILE: 'production' };
  const blocked = tempDir(t);
  fs.mkdirSync(path.join(blocked, 'audit'), { recursive: true });
  fs.symlinkSync('/dev/full', receiptFile(blocked));
  const [made, refused] = await Promise.all([
    runSvc(['secrets', 'init-key', '--data-dir', dataDir], { env }),
    runSvc(['secrets', 'init-key', '--data-dir', blocked], { env }),
  ]);
  t.is(made.code, 0, made.stderr);
  const [reserved, completed] = fs
    .readFileSync(receiptFile(dataDir), 'utf8')
    .split('\n')
    .filter(Boolean)
    .map((l) => JSON.parse(l) as AuditReceipt);
  t.like(reserved, { phase: 'reserved', action: 'secrets.init-key', target: 'host-key' });
  t.regex(reserved!.actor, /^cli:/);
  t.like(completed, { phase: 'completed', outcome: 'succeeded' });
  t.not(completed!.afterDigest, reserved!.beforeDigest);
  // The private identity never reaches a receipt.
  const identity = fs.readFileSync(path.join(dataDir, 'keys', 'age-identity.txt'), 'utf8');
  const secretLine = identity.split('\n').find((l) => l.startsWith('AGE-SECRET-KEY-'))!;
  t.false(fs.readFileSync(receiptFile(dataDir), 'utf8').includes(secretLine));

  t.is(refused.code, 1);
  t.regex(refused.stderr, /audit receipt could not be written/);
  t.false(fs.existsSync(path.join(blocked, 'keys', 'age-identity.txt')));
});
