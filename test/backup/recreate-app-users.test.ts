// tier: quick
/**
 * A restore recreates the app users a backup recorded: with their recorded ids when those are free,
 * and with new ones when another user holds either id, including when it took the id after the
 * restore looked (system ids freed on a host are soon handed out again). Real `useradd`/`groupadd`.
 */
import { randomBytes } from 'node:crypto';
import { spawnSync } from 'node:child_process';
import fs from 'node:fs';
import test, { type ExecutionContext } from 'ava';
import { createAppUser, recreateAppUsers } from '../../platform/backup/app-users.js';

const asRoot = process.getuid?.() === 0;
const rootTest = asRoot ? test : test.skip;

interface Entry {
  readonly name: string;
  readonly id: number;
  readonly gid: number;
}

function entries(file: string): Entry[] {
  return fs
    .readFileSync(file, 'utf8')
    .split('\n')
    .filter(Boolean)
    .map((l) => l.split(':'))
    .map((f) => ({ name: f[0]!, id: Number(f[2]), gid: Number(f[3]) }));
}

const userOf = (name: string) => entries('/etc/passwd').find((e) => e.name === name);
const groupOf = (name: string) => entries('/etc/group').find((e) => e.name === name);

/** A uid and gid free on this host, above the ranges useradd hands out on its own (so no test takes them). */
function freeIds(): { uid: number; gid: number } {
  const taken = new Set([...entries('/etc/passwd').map((e) => e.id), ...entries('/etc/group').map((e) => e.id)]);
  for (;;) {
    const id = 50_000 + Math.floor(Math.random() * 9_000);
    if (!taken.has(id)) return { uid: id, gid: id };
  }
}

function newName(t: ExecutionContext): string {
  const name = `svc-app-ids-${randomBytes(3).toString('hex')}`;
  t.teardown(() => {
    spawnSync('userdel', [name], { stdio: 'ignore' });
    spawnSync('groupdel', [name], { stdio: 'ignore' });
  });
  return name;
}

rootTest('a missing app user comes back with its recorded uid and gid when both are free', (t) => {
  const name = newName(t);
  const ids = freeIds();
  t.deepEqual(recreateAppUsers([{ name, ...ids }]), [{ name, result: 'created' }]);
  t.deepEqual(userOf(name), { name, id: ids.uid, gid: ids.gid });
  t.is(groupOf(name)?.id, ids.gid);
  t.deepEqual(recreateAppUsers([{ name, ...ids }]), [{ name, result: 'exists' }], 'an existing user is left alone');
});

rootTest('a recorded uid another user holds gives the app user new ids', (t) => {
  const name = newName(t);
  const { gid } = freeIds();
  t.deepEqual(recreateAppUsers([{ name, uid: 0, gid }]), [{ name, result: 'created-with-new-id' }]);
  const user = userOf(name);
  t.truthy(user);
  t.not(user!.id, 0);
  t.is(groupOf(name)?.id, user!.gid, 'the user has a group of its own name');
  t.is(
    entries('/etc/group').find((e) => e.id === gid),
    undefined,
    'no group was left behind with the recorded gid',
  );
});

rootTest('ids taken after the restore looked (a race with another useradd) fall back to new ids', (t) => {
  // The uid is held (by root) though the caller saw it free: groupadd succeeds, useradd fails.
  const name = newName(t);
  const { gid } = freeIds();
  t.is(createAppUser({ name, uid: 0, gid }, true), 'created-with-new-id');
  t.not(userOf(name)?.id, 0);
  t.is(
    entries('/etc/group').find((e) => e.id === gid),
    undefined,
    'the group made with the recorded gid was removed again',
  );
  // The gid is held (root's group): groupadd itself fails.
  const other = newName(t);
  t.is(createAppUser({ name: other, uid: freeIds().uid, gid: 0 }, true), 'created-with-new-id');
  t.truthy(userOf(other));
  t.not(groupOf(other)?.id, 0);
});
