// Reads an ava run's output as scripts/test.sh logs it (each line prefixed with the epoch seconds it
// was printed at and a tab; unprefixed lines are read too, without times) from the file named as the
// first argument. Prints the ten slowest tests (ava prints each with its duration, e.g.
// "✔ cli › exit-codes › title (1m 8.2s)") and the ten slowest test files (the span from the first
// test's start to the last test's end). With `--weights`, prints instead the JSON that
// test/file-weights.json holds: each file's span in seconds, which the suite uses to start the longest
// files first (ADR 0211).
import fs from 'node:fs';
import path from 'node:path';

const args = process.argv.slice(2);
const weightsOnly = args.includes('--weights');
const logFile = args.find((arg) => !arg.startsWith('--')) ?? '/dev/stdin';
const testRoot = path.join(import.meta.dirname, '..', 'test');

/** Test files as ava titles them: their path under test/ without `.test.ts`. */
function testFiles(dir: string, prefix = ''): Set<string> {
  const found = new Set<string>();
  for (const entry of fs.readdirSync(dir, { withFileTypes: true })) {
    const rel = prefix === '' ? entry.name : `${prefix}/${entry.name}`;
    if (entry.isDirectory()) for (const file of testFiles(path.join(dir, entry.name), rel)) found.add(file);
    else if (entry.name.endsWith('.test.ts')) found.add(rel.slice(0, -'.test.ts'.length));
  }
  return found;
}
const files = testFiles(testRoot);

/** The test file of a title "dir › file › test title": the longest leading run of parts naming a file. */
function fileOf(title: string): string | undefined {
  const parts = title.split(' › ');
  for (let n = parts.length - 1; n > 0; n--) {
    const candidate = parts.slice(0, n).join('/');
    if (files.has(candidate)) return candidate;
  }
  return undefined;
}

const tests: { title: string; seconds: number }[] = [];
const spans = new Map<string, { start: number; end: number }>();
for (const raw of fs.readFileSync(logFile, 'utf8').split('\n')) {
  // Bash prints $EPOCHREALTIME with the locale's decimal separator.
  const stamped = /^(\d+(?:[.,]\d+)?)\t(.*)$/.exec(raw);
  const at = stamped ? Number(stamped[1]!.replace(',', '.')) : undefined;
  const line = stamped ? stamped[2]! : raw;
  const match = /^\s*[✔✘]\s+(?:\[[a-z]+\]:\s+)?(.*?)\s+\((?:(\d+)m\s*)?(?:([\d.]+)s|(\d+)ms)\)\s*$/.exec(line);
  const title = match?.[1] ?? /^\s*[✔✘]\s+(?:\[[a-z]+\]:\s+)?(.*?)\s*$/.exec(line)?.[1];
  if (title === undefined) continue;
  const seconds = match
    ? Number(match[2] ?? 0) * 60 + (match[3] !== undefined ? Number(match[3]) : Number(match[4]) / 1000)
    : 0;
  if (match) tests.push({ title, seconds });
  const file = fileOf(title);
  if (at === undefined || file === undefined) continue;
  const span = spans.get(file) ?? { start: Number.POSITIVE_INFINITY, end: 0 };
  span.start = Math.min(span.start, at - seconds);
  span.end = Math.max(span.end, at);
  spans.set(file, span);
}
const byFile = [...spans]
  .map(([file, { start, end }]) => ({ file, seconds: end - start }))
  .sort((a, b) => b.seconds - a.seconds || a.file.localeCompare(b.file));

if (weightsOnly) {
  const weights = Object.fromEntries(byFile.map(({ file, seconds }) => [file, Math.round(seconds * 10) / 10]));
  console.log(JSON.stringify(weights, null, 2));
} else {
  tests.sort((a, b) => b.seconds - a.seconds);
  console.log('== ten slowest tests');
  for (const { title, seconds } of tests.slice(0, 10)) console.log(`${seconds.toFixed(1).padStart(7)} s  ${title}`);
  if (byFile.length > 0) {
    console.log('== ten slowest test files (first start to last end)');
    for (const { file, seconds } of byFile.slice(0, 10)) console.log(`${seconds.toFixed(1).padStart(7)} s  ${file}`);
  }
}
