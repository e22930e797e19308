// Lint rules: type-aware TypeScript checks, and the layer direction of ADR 0001:
// wiring -> api -> controllers | knowledge -> domain <- platform | store. Only cli/ (and test/, bench/,
// scripts/) imports wiring/, the composition root that builds adapters and hands them their ports.
import tseslint from 'typescript-eslint';
import importX from 'eslint-plugin-import-x';
import { createTypeScriptImportResolver } from 'eslint-import-resolver-typescript';

const IO_MODULES = [
  'fs',
  'fs/promises',
  'child_process',
  'net',
  'http',
  'https',
  'dgram',
  'dns',
  'tls',
  'worker_threads',
  'cluster',
  'inspector',
].flatMap((m) => [m, `node:${m}`]);
const IO_PACKAGES = [
  'better-sqlite3',
  'sqlite-vec',
  'koa',
  '@koa/router',
  '@koa/bodyparser',
  'chokidar',
  'pino',
  'prom-client',
  'undici',
  'ws',
  'commander',
];

// Each zone: files under `target` may not import from `from` (except the files in `except`, relative to
// the zone's own folder: the exception must say why it exists).
const zone = (target, from, except) => ({
  target: `./${target}`,
  from: from.map((f) => `./${f}`),
  ...(except ? { except } : {}),
  message: `layers point one way: ${target}/ may not import ${from.join(', ')}/ (ADR 0001)`,
});
export const LAYER_ZONES = [
  zone('domain', ['api', 'cli', 'controllers', 'knowledge', 'platform', 'store', 'wiring']),
  zone('store', ['api', 'cli', 'controllers', 'knowledge', 'platform', 'wiring']),
  zone('platform', ['api', 'cli', 'controllers', 'knowledge', 'wiring']),
  // Adapters get domain types, never store rows.
  zone('platform', ['store']),
  zone('controllers', ['api', 'cli', 'knowledge', 'wiring']),
  zone('knowledge', ['api', 'cli', 'controllers', 'platform', 'wiring']),
  zone('api', ['cli', 'store', 'platform', 'wiring']),
  zone('wiring', ['cli']),
  // The published API description and its generated types: read by api/, cli/ and web/, importing none of them.
  zone('openapi', ['api', 'cli', 'controllers', 'knowledge', 'domain', 'platform', 'store', 'wiring', 'web']),
  // Browser code (ADR 0130): the pages talk to the services over HTTP only, never import them.
  zone('web', [
    'api',
    'cli',
    'controllers',
    'knowledge',
    'domain',
    'platform',
    'store',
    'wiring',
    'schemas',
    'fixtures',
    'test',
    'bench',
    'scripts',
  ]),
  // ... and no server code imports the pages.
  ...['api', 'cli', 'controllers', 'knowledge', 'domain', 'platform', 'store', 'wiring'].map((layer) =>
    zone(layer, ['web']),
  ),
];

export default tseslint.config(
  {
    ignores: [
      'dist/**',
      'node_modules/**',
      'fixtures/**',
      '.scratch/**',
      'bin/**',
      'schemas/types.generated.ts',
      'openapi/*.types.ts',
      'schemas/validators.generated.ts',
      'eslint.config.js',
      'ava.compiled.config.mjs',
    ],
  },
  ...tseslint.configs.recommendedTypeChecked,
  {
    languageOptions: { parserOptions: { projectService: true, tsconfigRootDir: import.meta.dirname } },
    plugins: { 'import-x': importX },
    settings: {
      'import-x/resolver-next': [createTypeScriptImportResolver({ alwaysTryTypes: true, project: './tsconfig.json' })],
      'import-x/parsers': { '@typescript-eslint/parser': ['.ts'] },
      'import-x/extensions': ['.ts', '.js'],
    },
    rules: {
      '@typescript-eslint/no-floating-promises': 'error',
      '@typescript-eslint/no-misused-promises': ['error', { checksVoidReturn: { arguments: false } }],
      '@typescript-eslint/no-unused-vars': ['error', { argsIgnorePattern: '^_', varsIgnorePattern: '^_' }],
      '@typescript-eslint/consistent-type-imports': ['error', { fixStyle: 'inline-type-imports' }],
      '@typescript-eslint/no-explicit-any': 'off',
      '@typescript-eslint/no-unsafe-assignment': 'off',
      '@typescript-eslint/no-unsafe-member-access': 'off',
      '@typescript-eslint/no-unsafe-argument': 'off',
      '@typescript-eslint/no-unsafe-return': 'off',
      '@typescript-eslint/no-unsafe-call': 'off',
      '@typescript-eslint/restrict-template-expressions': 'off',
      '@typescript-eslint/require-await': 'off',
      '@typescript-eslint/only-throw-error': 'error',
      'no-restricted-syntax': [
        'error',
        { selector: 'TSEnumDeclaration', message: 'no TypeScript enum: use a const object and a derived union type' },
        { selector: 'ExportDefaultDeclaration', message: 'named exports only' },
      ],
    },
  },
  {
    files: ['domain/**/*.ts'],
    rules: {
      'no-restricted-imports': [
        'error',
        {
          paths: [...IO_MODULES, ...IO_PACKAGES].map((name) => ({ name, message: 'domain/ is pure: no I/O modules' })),
        },
      ],
    },
  },
  {
    files: ['**/*.ts'],
    rules: { 'import-x/no-restricted-paths': ['error', { zones: LAYER_ZONES }] },
  },
  {
    // The release bundle's stand-ins replace CommonJS packages and are CommonJS themselves (ADR 0140).
    files: ['scripts/package/*.cts'],
    rules: { '@typescript-eslint/no-require-imports': 'off' },
  },
  {
    // Browser code: no Node built-ins (it is bundled for the browser by scripts/build-web.ts).
    files: ['web/**/*.ts'],
    rules: {
      'no-restricted-imports': [
        'error',
        {
          patterns: [
            {
              group: ['node:*', ...IO_MODULES.filter((m) => !m.startsWith('node:')), ...IO_PACKAGES],
              message: 'web/ is browser code: no Node modules or server packages',
            },
          ],
        },
      ],
    },
  },
  {
    files: ['test/**/*.ts', 'bench/**/*.ts', 'scripts/**/*.ts'],
    rules: {
      '@typescript-eslint/no-floating-promises': 'error',
      '@typescript-eslint/unbound-method': 'off',
    },
  },
);
