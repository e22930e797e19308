// `npm test` runs the tests compiled by its type check (dist/test, ADR 0158): a test file then loads
// without tsx's loader, half the CPU per file. `npx ava <file>` runs the TypeScript sources
// (package.json's "ava" settings).
import fs from 'node:fs';
import path from 'node:path';

const testRoot = path.resolve(import.meta.dirname, 'dist', 'test');
/** Each test file's span in seconds in a recorded run (ADR 0211; `scripts/slowest-tests.ts --weights`). */
const weights = JSON.parse(fs.readFileSync(path.join(import.meta.dirname, 'test', 'file-weights.json'), 'utf8'));
/** A file's recorded span; a file the record does not know (a new one) counts as short. */
function weightOf(file) {
  return weights[path.relative(testRoot, file).replace(/\.test\.js$/, '')] ?? 0;
}

export default {
  files: ['dist/test/**/*.test.js'],
  // As package.json's settings do for the sources: each worker removes the app users it created (ADR
  // 0191) and names its test file to the processes it starts (ADR 0226).
  nodeArguments: [
    '--import=./dist/test/helpers/remove-created-app-users.js',
    '--import=./dist/test/helpers/test-file-env.js',
  ],
  timeout: '120s',
  workerThreads: false,
  // The longest files start first, so that no long file starts last and runs alone at the end (ADR 0211).
  sortTestFiles: (a, b) => weightOf(b) - weightOf(a) || a.localeCompare(b),
};
