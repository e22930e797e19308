// tier: quick
/**
 * The tier check (scripts/test-tiers.ts, ADR 0226): every test file declares its tier, and a quick
 * file starts no platform, directly, through a test module it imports, or by running a program.
 */
import test from 'ava';
import fs from 'node:fs';
import path from 'node:path';
import { checkTiers } from '../../scripts/test-tiers.js';
import { tempDir } from '../helpers/temp-dir.js';

function tree(root: string, files: Record<string, string>): void {
  for (const [file, text] of Object.entries(files)) {
    fs.mkdirSync(path.dirname(path.join(root, file)), { recursive: true });
    fs.writeFileSync(path.join(root, file), text);
  }
}

test('every test file of the repository declares its tier, and no quick one starts a platform', (t) => {
  t.deepEqual(checkTiers(), []);
});

test('the check names a file without a tier, and the import chain or program by which a quick file starts a platform', (t) => {
  const root = tempDir(t);
  tree(root, {
    'test/helpers/cli.ts': 'export const run = () => 0;\n',
    'test/helpers/temp-dir.ts': 'export const tempDir = () => "";\n',
    'test/x/local-harness.ts': "import { startControlPlane } from '../../wiring/control-plane.js';\n",
    'test/x/unit.test.ts': "// tier: quick\nimport { tempDir } from '../helpers/temp-dir.js';\n",
    'test/x/undeclared.test.ts': "import test from 'ava';\n",
    'test/x/cli.test.ts': "// tier: quick\nimport { run } from '../helpers/cli.js';\n",
    'test/x/harness.test.ts': "// tier: quick\nimport { h } from './local-harness.js';\n",
    // Written in two parts, or this very file would run podman in the check's eyes.
    'test/x/podman.test.ts': `// tier: quick\n${'spawn'}Sync('podman', ['ps']);\n`,
    'test/x/e2e.test.ts': "// tier: full\nimport { run } from '../helpers/cli.js';\n",
  });
  const problems = checkTiers(root);
  t.is(problems.length, 4, problems.join('\n'));
  t.true(problems.some((p) => p.startsWith('test/x/undeclared.test.ts: no tier')));
  t.true(problems.some((p) => p.startsWith('test/x/cli.test.ts:') && p.includes('test/helpers/cli (starts svc')));
  t.true(
    problems.some(
      (p) => p.startsWith('test/x/harness.test.ts:') && p.includes('test/x/local-harness -> wiring/control-plane'),
    ),
  );
  t.true(problems.some((p) => p.startsWith('test/x/podman.test.ts:') && /runs `spawn\w*\('podman/.test(p)));
});
