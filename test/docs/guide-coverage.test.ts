// tier: quick
/**
 * Guide pages that list what the code has: the benchmark table has a row for every bench, and the
 * troubleshooting page explains every check `svc doctor` can report.
 */
import fs from 'node:fs';
import path from 'node:path';
import test from 'ava';
import { REPO_ROOT } from '../helpers/repo.js';

const read = (file: string) => fs.readFileSync(path.join(REPO_ROOT, file), 'utf8');

test('docs/benchmarks.md has a row for every bench in bench/', (t) => {
  const page = read('docs/benchmarks.md');
  const benches = fs
    .readdirSync(path.join(REPO_ROOT, 'bench'))
    .filter((name) => name.endsWith('.ts'))
    .map((name) => name.replace(/\.ts$/, ''));
  t.true(benches.length > 10);
  t.deepEqual(
    benches.filter((bench) => !new RegExp(`^\\| \`${bench}\`( \\([a-z]+\\))? \\|`, 'm').test(page)),
    [],
  );
});

test('docs/troubleshooting.md explains every check svc doctor reports', (t) => {
  const sources = [
    ...fs.readdirSync(path.join(REPO_ROOT, 'controllers', 'doctor')).map((name) => `controllers/doctor/${name}`),
    'platform/containers/engine-probe.ts',
    'cli/commands/doctor.ts',
  ].filter((file) => file.endsWith('.ts'));
  const ids = new Set<string>();
  for (const file of sources) {
    for (const match of read(file).matchAll(/\b(?:id: |const ID = )'([a-z][a-z0-9._-]*)'/g)) ids.add(match[1]!);
  }
  t.true(ids.size > 20, [...ids].join(', '));
  const page = read('docs/troubleshooting.md');
  const rows = new Set([...page.matchAll(/^\| ([^|]+) \|/gm)].flatMap((row) => row[1]!.match(/`[^`]+`/g) ?? []));
  t.deepEqual(
    [...ids].filter((id) => !rows.has(`\`${id}\``)),
    [],
  );
});
