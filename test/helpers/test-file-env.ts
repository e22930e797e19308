/**
 * Loaded into every test worker (package.json `ava.nodeArguments`, ava.compiled.config.mjs): names
 * the worker's test file in `SVC_TEST_FILE` (a path from the repository root, `test/...test.ts`) as
 * soon as ava sends the worker its options, before the file loads. Every process a test starts with
 * the worker's environment carries it, so the runner's check for processes left running
 * (scripts/leftover-processes.ts, ADR 0226) names the file that started one. A test folder made by
 * `tempDir` is recorded beside it for processes started with an environment of their own.
 */
import path from 'node:path';

const ROOT = path.resolve(import.meta.dirname, '..', '..');

/** The source path of a test file, whether ava runs the source or its compiled copy in dist/. */
export function testSourcePath(file: string): string {
  const relative = path.relative(ROOT.endsWith(`${path.sep}dist`) ? path.dirname(ROOT) : ROOT, file);
  return relative.replace(/^dist\//, '').replace(/\.js$/, '.ts');
}

const onMessage = (message: unknown) => {
  const ava = (message as { ava?: { type?: string; options?: { file?: string } } } | null)?.ava;
  if (ava?.type !== 'options' || typeof ava.options?.file !== 'string') return;
  const file = ava.options.file.startsWith('file:') ? new URL(ava.options.file).pathname : ava.options.file;
  process.env.SVC_TEST_FILE = testSourcePath(file);
  // A 'message' listener keeps the IPC channel referenced: once named, it goes.
  process.off('message', onMessage);
};
if (process.send !== undefined) process.on('message', onMessage);
