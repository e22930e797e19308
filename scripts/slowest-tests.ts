// Prints the ten slowest tests of an ava run from its output (read from the file named as the first
// argument): ava prints each test with its duration, e.g. "✔ cli › exit-codes › title (1m 8.2s)".
import fs from 'node:fs';

const text = fs.readFileSync(process.argv[2] ?? '/dev/stdin', 'utf8');
const tests: { title: string; seconds: number }[] = [];
for (const line of text.split('\n')) {
  const match = /^\s*[✔✘]\s+(?:\[[a-z]+\]:\s+)?(.*?)\s+\((?:(\d+)m\s*)?(?:([\d.]+)s|(\d+)ms)\)\s*$/.exec(line);
  if (!match) continue;
  const seconds = Number(match[2] ?? 0) * 60 + (match[3] !== undefined ? Number(match[3]) : Number(match[4]) / 1000);
  tests.push({ title: match[1] ?? '', seconds });
}
tests.sort((a, b) => b.seconds - a.seconds);
console.log('== ten slowest tests');
for (const { title, seconds } of tests.slice(0, 10)) console.log(`${seconds.toFixed(1).padStart(7)} s  ${title}`);
