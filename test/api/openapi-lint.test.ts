// tier: quick
import { execFile } from 'node:child_process';
import path from 'node:path';
import { promisify } from 'node:util';
import test from 'ava';
import { REPO_ROOT } from '../helpers/repo.js';

const run = promisify(execFile);

test('Redocly lints both committed OpenAPI documents without an error', async (t) => {
  const { stdout, stderr } = await run(
    path.join(REPO_ROOT, 'node_modules', '.bin', 'redocly'),
    ['lint', 'openapi/control-plane.json', 'openapi/knowledge-store.json', '--format', 'summary'],
    { cwd: REPO_ROOT, env: { ...process.env, REDOCLY_TELEMETRY: 'off', REDOCLY_SUPPRESS_UPDATE_NOTICE: 'true' } },
  ).catch((error: { stdout: string; stderr: string }) => {
    t.fail(`redocly lint failed:\n${error.stdout}\n${error.stderr}`);
    return { stdout: '', stderr: '' };
  });
  t.regex(stdout + stderr, /Your API descriptions? (is|are) valid/);
});
