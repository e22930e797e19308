// `npm test` runs the tests compiled by its type check (dist/test, ADR 0158): a test file then loads
// without tsx's loader, half the CPU per file. `npx ava <file>` runs the TypeScript sources
// (package.json's "ava" settings).
export default {
  files: ['dist/test/**/*.test.js'],
  timeout: '120s',
  workerThreads: false,
};
