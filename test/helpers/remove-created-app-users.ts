/**
 * Loaded into every test worker (package.json `ava.nodeArguments`): when the worker ends, it
 * removes the app system users (`svc-app-*`, ADR 0047) that this worker created, so the suite
 * leaves none behind (ADR 0191). Users that already existed are left alone. `userdel` refuses while
 * a process still runs as the user (a drain just ending): it is asked again for up to 3 seconds.
 * It also removes the hosted folders (ADR 0157) whose data folder is gone: a test's data folder is a
 * temporary folder removed at its end, and its hosted folder in /var/lib/svc-hosted would stay.
 *
 * Under the whole suite (`scripts/test.sh` sets SVC_TEST_RUNNER_REMOVES_APP_USERS=1) workers leave
 * the users alone and the runner removes every user the run made once all tests have ended: users are
 * host-wide, and a worker that ends while another file runs an app of the same name would remove the
 * user under it (a process started with the looked-up uid then has no name; CI saw `I have no name!`).
 */
import { spawnSync } from 'node:child_process';
import fs from 'node:fs';
import { appUsersCreatedHere } from '../../platform/local-scheduler/isolation/app-identity.js';
import { orphanedHostedFolders } from '../../platform/files/hosted-folder.js';

/** Removes the users this process created; returns those it could not remove. */
export function removeCreatedAppUsers(deadlineMs = 3000): string[] {
  if (process.getuid?.() !== 0) return [];
  const deadline = Date.now() + deadlineMs;
  const left: string[] = [];
  for (const name of appUsersCreatedHere()) {
    for (;;) {
      const result = spawnSync('userdel', [name], { stdio: 'ignore' });
      // 0 removed; 6 no such user (removed meanwhile); 8 a process still runs as the user.
      if (result.status === 0 || result.status === 6) break;
      if (result.status !== 8 || Date.now() >= deadline) {
        left.push(name);
        break;
      }
      spawnSync('sleep', ['0.1']);
    }
  }
  return left;
}

process.once('exit', () => {
  if (process.getuid?.() === 0)
    for (const folder of orphanedHostedFolders()) fs.rmSync(folder, { recursive: true, force: true });
  if (process.env.SVC_TEST_RUNNER_REMOVES_APP_USERS === '1') return;
  const left = removeCreatedAppUsers();
  if (left.length > 0) process.stderr.write(`test worker: app users not removed (still in use): ${left.join(', ')}\n`);
});
