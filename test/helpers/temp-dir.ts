/**
 * Temporary folders removed when the test ends.
 */
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import type { ExecutionContext } from 'ava';

/**
 * Creates a fresh folder under the OS temp dir, removed in `t.teardown`. It can be entered by
 * anyone (0711, not listed): as root, apps run as their own users and must reach their folders
 * below it, as on a host whose data folder lies below enterable folders.
 */
export function tempDir(t: ExecutionContext, prefix = 'svc-test-'): string {
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), prefix));
  fs.chmodSync(dir, 0o711);
  // The runner's ledger of test folders names the test of a process left running in one (ADR 0226).
  const ledger = process.env.SVC_TEST_LEDGER;
  if (ledger !== undefined) fs.appendFileSync(ledger, `${dir}\t${process.env.SVC_TEST_FILE ?? '?'}\n`);
  t.teardown(() => fs.rmSync(dir, { recursive: true, force: true }));
  return dir;
}
