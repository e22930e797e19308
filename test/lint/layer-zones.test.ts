// tier: full
/**
 * The layer zones of eslint.config.js, run through ESLint itself: each forbidden import fails
 * `npm run lint` with the zone's message, and the allowed directions pass.
 */
import test from 'ava';
import path from 'node:path';
import { ESLint } from 'eslint';
import { REPO_ROOT } from '../helpers/repo.js';

const root = REPO_ROOT;
// eslint.config.js as `npm run lint` reads it, running only the zone rule and without type
// information: the zones need none, and building the TypeScript program took 20 s of the suite.
const eslint = new ESLint({
  cwd: root,
  ruleFilter: ({ ruleId }) => ruleId === 'import-x/no-restricted-paths',
  overrideConfig: { languageOptions: { parserOptions: { projectService: false, project: null } } },
});

/** The no-restricted-paths messages of `source` linted as if it were the file at `file`. */
async function zoneErrors(file: string, source: string): Promise<string[]> {
  const [result] = await eslint.lintText(source, { filePath: path.join(root, file) });
  return (result?.messages ?? []).filter((m) => m.ruleId === 'import-x/no-restricted-paths').map((m) => m.message);
}

// Each case lints a stand-in text under the path of a real file of the layer, so the TypeScript
// project knows it; the text is only linted, never written.
const forbidden: readonly { from: string; file: string; spec: string; zone: string }[] = [
  { from: 'api', file: 'api/http/listen.ts', spec: '../../store/open-stores.js', zone: 'api/ may not import' },
  { from: 'api', file: 'api/http/listen.ts', spec: '../../platform/build-info.js', zone: 'api/ may not import' },
  { from: 'api', file: 'api/http/listen.ts', spec: '../../wiring/control-plane.js', zone: 'api/ may not import' },
  {
    from: 'platform',
    file: 'platform/build-info.ts',
    spec: '../store/open-stores.js',
    zone: 'platform/ may not import store/',
  },
  {
    from: 'controllers',
    file: 'controllers/cron/cron-service.ts',
    spec: '../../knowledge/index.js',
    zone: 'controllers/ may not import',
  },
  {
    from: 'controllers',
    file: 'controllers/cron/cron-service.ts',
    spec: '../../wiring/control-plane.js',
    zone: 'controllers/ may not import',
  },
  {
    from: 'knowledge',
    file: 'knowledge/index.ts',
    spec: '../controllers/cron/cron-service.js',
    zone: 'knowledge/ may not import',
  },
  {
    from: 'knowledge',
    file: 'knowledge/index.ts',
    spec: '../platform/build-info.js',
    zone: 'knowledge/ may not import',
  },
  { from: 'domain', file: 'domain/canonical-json.ts', spec: '../store/open-stores.js', zone: 'domain/ may not import' },
  { from: 'web', file: 'web/shared/api.ts', spec: '../../domain/errors.js', zone: 'web/ may not import' },
  { from: 'api', file: 'api/http/listen.ts', spec: '../../web/shared/api.js', zone: 'api/ may not import web/' },
];

for (const c of forbidden) {
  test(`the lint zones fail ${c.from}/ importing ${c.spec.replace(/^(\.\.\/)+/, '')}`, async (t) => {
    const errors = await zoneErrors(c.file, `export * from '${c.spec}';\n`);
    t.is(errors.length, 1);
    t.true(errors[0]!.includes(c.zone), errors[0]);
  });
}

test('the lint zones let cli/ import wiring/ and api/ import controllers/ and domain/', async (t) => {
  t.deepEqual(await zoneErrors('cli/commands/serve.ts', "export * from '../../wiring/control-plane.js';\n"), []);
  t.deepEqual(
    await zoneErrors(
      'api/http/listen.ts',
      "export * from '../../controllers/routing/routing.js';\nexport * from '../../domain/logger.js';\n",
    ),
    [],
  );
});
