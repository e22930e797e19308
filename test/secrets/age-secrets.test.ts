// tier: quick
import fs from 'node:fs';
import path from 'node:path';
import test from 'ava';
import {
  decryptSecret,
  encryptSecret,
  ensureHostIdentity,
  isAgeCiphertext,
  readIdentities,
  rotateHostIdentity,
} from '../../platform/secrets/age-secrets.js';
import { tempDir } from '../helpers/temp-dir.js';

test('ensureHostIdentity creates one owner-only identity and keeps it on the next call', async (t) => {
  const file = path.join(tempDir(t), 'keys', 'age-identity.txt');
  const first = await ensureHostIdentity(file);
  t.true(first.created);
  t.regex(first.recipient, /^age1[0-9a-z]{58}$/);
  t.is(fs.statSync(file).mode & 0o777, 0o600);
  const second = await ensureHostIdentity(file);
  t.false(second.created);
  t.is(second.recipient, first.recipient);
  t.is(readIdentities(file).length, 1);
});

test('encryptSecret writes an armored age file only the host identity opens', async (t) => {
  const root = tempDir(t);
  const host = await ensureHostIdentity(path.join(root, 'host.txt'));
  await ensureHostIdentity(path.join(root, 'other.txt'));
  const armored = await encryptSecret([host.recipient], 's3cr3t-value');
  t.true(isAgeCiphertext(Buffer.from(armored)));
  t.false(armored.includes('s3cr3t-value'));
  t.false(isAgeCiphertext(Buffer.from('s3cr3t-value')));
  const opened = await decryptSecret(readIdentities(path.join(root, 'host.txt')), Buffer.from(armored));
  t.is(Buffer.from(opened).toString(), 's3cr3t-value');
  await t.throwsAsync(() => decryptSecret(readIdentities(path.join(root, 'other.txt')), Buffer.from(armored)));
});

test('rotateHostIdentity re-encrypts every file to a new key, keeps the previous one unless dropped, and stops whole on a foreign file', async (t) => {
  const root = tempDir(t);
  const identity = path.join(root, 'keys', 'age-identity.txt');
  const old = await ensureHostIdentity(identity);
  const a = path.join(root, 'a.age');
  const b = path.join(root, 'b.age');
  fs.writeFileSync(a, await encryptSecret([old.recipient], 'alpha'));
  fs.writeFileSync(b, await encryptSecret([old.recipient], 'beta'));
  const before = fs.readFileSync(a, 'utf8');

  const receipt = await rotateHostIdentity(identity, [a, b]);
  t.is(receipt.previousRecipient, old.recipient);
  t.not(receipt.recipient, old.recipient);
  t.deepEqual(receipt.reencrypted, [a, b]);
  const identities = readIdentities(identity);
  t.is(identities.length, 2, 'the previous identity is kept');
  const newest = identities.slice(0, 1);
  t.is(Buffer.from(await decryptSecret(newest, fs.readFileSync(a))).toString(), 'alpha');
  t.is(Buffer.from(await decryptSecret(newest, fs.readFileSync(b))).toString(), 'beta');
  t.is(
    Buffer.from(await decryptSecret(identities, Buffer.from(before))).toString(),
    'alpha',
    'a commit from before the rotation still deploys',
  );

  const foreign = path.join(root, 'foreign.age');
  const stranger = await ensureHostIdentity(path.join(root, 'stranger.txt'));
  fs.writeFileSync(foreign, await encryptSecret([stranger.recipient], 'x'));
  const aBefore = fs.readFileSync(a, 'utf8');
  await t.throwsAsync(() => rotateHostIdentity(identity, [a, foreign]), { message: /foreign\.age does not decrypt/ });
  t.is(fs.readFileSync(a, 'utf8'), aBefore, 'nothing was re-encrypted');
  t.deepEqual(readIdentities(identity), identities, 'the identity file is unchanged');

  await rotateHostIdentity(identity, [a], { dropPrevious: true });
  t.is(readIdentities(identity).length, 1);
  t.is(Buffer.from(await decryptSecret(readIdentities(identity), fs.readFileSync(a))).toString(), 'alpha');
});
