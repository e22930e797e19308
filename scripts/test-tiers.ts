/**
 * Test tiers (ADR 0226). Every test file declares its tier on its first line: `// tier: quick` for unit
 * and in-process tests, `// tier: full` for the rest. `npm run test:quick` runs the quick files, the
 * inner loop; `npm test` runs every file. A quick file must not start a platform: neither it nor a
 * test module it imports, directly or through others, may import a module that starts one (the
 * control plane, the host agent, the CLI as a process, PostgreSQL, a container engine, the
 * registry, a browser, a release artifact).
 *
 *   node --import tsx scripts/test-tiers.ts            checks every declaration (part of `npm run lint`)
 *   node --import tsx scripts/test-tiers.ts --list quick   prints the quick files
 */
import fs from 'node:fs';
import path from 'node:path';
import { fileURLToPath } from 'node:url';

export const ROOT = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '..');
export const TIERS = ['quick', 'full'] as const;
export type Tier = (typeof TIERS)[number];

/** Modules (paths from the repository root, without extension) that start a platform or its parts. */
const STARTS_A_PLATFORM: readonly { module: RegExp; why: string }[] = [
  { module: /^wiring\/(control-plane|host-agent|serve)$/, why: 'starts the control plane or the host agent' },
  { module: /^test\/helpers\/(cli|plane-with-apps|servers|stop-apps)$/, why: 'starts svc or its apps' },
  {
    module: /^test\/helpers\/(postgres|managed-postgres)$|^test\/helpers\/fleet\/postgres-tls$/,
    why: 'starts PostgreSQL',
  },
  { module: /^test\/helpers\/(containers|registry-images|host-root)$/, why: 'starts containers or the registry' },
  {
    module: /^test\/helpers\/(browser|lsp-client|shared-artifact)$/,
    why: 'starts a browser, the language server or a release',
  },
  { module: /^test\/platform-lane\/lane-harness$/, why: 'starts platforms from release checkouts' },
  { module: /^platform\/postgres\/managed-postgres(-cluster)?$/, why: 'starts PostgreSQL' },
  { module: /^platform\/containers\/(podman|managed-registry|image-builder)$/, why: 'runs podman or the registry' },
  { module: /^test\/helpers\/s3-server$/, why: 'starts an S3 server' },
  { module: /^bench\//, why: 'runs a benchmark harness' },
];

/** A program a platform is made of, started by a test module itself. */
const STARTS_A_PROGRAM =
  /\b(?:spawn|spawnSync|execFile|execFileSync|fork)\(\s*[^,)]*?\b(?:svc|svc\.js|bin|podman|docker|dockerd|postgres|pg_ctl|initdb|chromium|registry|minio|promtool)\b/;

/** The declared tier of a test file, or undefined. */
export function declaredTier(file: string): Tier | undefined {
  const first = fs.readFileSync(file, 'utf8').split('\n', 1)[0] ?? '';
  const match = /^\/\/ tier: (\w+)\s*$/.exec(first);
  return match && (TIERS as readonly string[]).includes(match[1]!) ? (match[1] as Tier) : undefined;
}

/** Every test file, as paths from the repository root. */
export function testFiles(root = ROOT, dir = path.join(root, 'test')): string[] {
  const out: string[] = [];
  for (const entry of fs.readdirSync(dir, { withFileTypes: true })) {
    const full = path.join(dir, entry.name);
    if (entry.isDirectory()) out.push(...testFiles(root, full));
    else if (entry.name.endsWith('.test.ts')) out.push(path.relative(root, full));
  }
  return out.sort();
}

/** The relative modules `file` imports, as paths from the root without extension. */
function importsOf(file: string, root: string): string[] {
  const text = fs.readFileSync(path.join(root, file), 'utf8');
  const found: string[] = [];
  // Import and export statements (from the start of a line) and dynamic imports.
  const statements =
    /^\s*(?:import|export)\b[^;]*?from\s*'(\.{1,2}\/[^']+)'|^\s*import\s*'(\.{1,2}\/[^']+)'|\bimport\(\s*'(\.{1,2}\/[^']+)'\s*\)/gm;
  for (const match of text.matchAll(statements)) {
    const specifier = match[1] ?? match[2] ?? match[3]!;
    const target = path.normalize(path.join(path.dirname(file), specifier));
    found.push(target.replace(/\.(js|ts|mjs)$/, ''));
  }
  return found;
}

/** Why `file` starts a platform: the chain of imports to the first module that does, or undefined. */
export function startsAPlatform(file: string, root = ROOT): string | undefined {
  const seen = new Set<string>();
  const queue: { module: string; chain: string[] }[] = [{ module: file.replace(/\.ts$/, ''), chain: [] }];
  while (queue.length > 0) {
    const { module, chain } = queue.shift()!;
    const program = STARTS_A_PROGRAM.exec(fs.readFileSync(path.join(root, `${module}.ts`), 'utf8'));
    if (program)
      return chain.length === 0
        ? `runs \`${program[0]}...\``
        : `imports ${chain.join(' -> ')}, which runs \`${program[0]}...\``;
    for (const target of importsOf(`${module}.ts`, root)) {
      if (seen.has(target)) continue;
      seen.add(target);
      const rule = STARTS_A_PLATFORM.find((r) => r.module.test(target));
      if (rule) return `imports ${[...chain, target].join(' -> ')} (${rule.why})`;
      // Only test modules are followed: the product's own modules are what the tests exercise.
      if (target.startsWith('test/') && fs.existsSync(path.join(root, `${target}.ts`)))
        queue.push({ module: target, chain: [...chain, target] });
    }
  }
  return undefined;
}

/** Problems with the files' declarations. */
export function checkTiers(root = ROOT): string[] {
  const problems: string[] = [];
  for (const file of testFiles(root)) {
    const tier = declaredTier(path.join(root, file));
    if (tier === undefined) problems.push(`${file}: no tier on its first line (// tier: quick, or // tier: full)`);
    else if (tier === 'quick') {
      const why = startsAPlatform(file, root);
      if (why !== undefined) problems.push(`${file}: a quick file must not start a platform: it ${why}`);
    }
  }
  return problems;
}

if (process.argv[1] !== undefined && path.resolve(process.argv[1]) === fileURLToPath(import.meta.url)) {
  const list = process.argv.indexOf('--list');
  if (list > 0) {
    const tier = process.argv[list + 1];
    for (const file of testFiles()) if (declaredTier(path.join(ROOT, file)) === tier) console.log(file);
  } else {
    const problems = checkTiers();
    for (const p of problems) console.error(p);
    if (problems.length > 0) process.exitCode = 1;
  }
}
