/**
 * Temporary folders removed when the test ends.
 */
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import type { ExecutionContext } from 'ava';

/** Creates a fresh folder under the OS temp dir, removed in `t.teardown`. */
export function tempDir(t: ExecutionContext, prefix = 'svc-test-'): string {
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), prefix));
  t.teardown(() => fs.rmSync(dir, { recursive: true, force: true }));
  return dir;
}
