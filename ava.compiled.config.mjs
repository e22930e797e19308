// `npm test` runs the tests compiled by its type check (dist/test, ADR 0158): a test file then loads
// without tsx's loader, half the CPU per file. `npx ava <file>` runs the TypeScript sources
// (package.json's "ava" settings).
export default {
  files: ['dist/test/**/*.test.js'],
  // As package.json's settings do for the sources: each worker removes the app users it created (ADR 0191).
  nodeArguments: ['--import=./dist/test/helpers/remove-created-app-users.js'],
  timeout: '120s',
  workerThreads: false,
};
