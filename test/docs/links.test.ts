// tier: quick
/**
 * The documents' links: every relative link in README.md and docs/ names a file or folder that exists
 * (and a heading of it, when the link names one), and the guide's index links every page of the guide.
 */
import fs from 'node:fs';
import path from 'node:path';
import test from 'ava';
import { REPO_ROOT } from '../helpers/repo.js';

const docsDir = path.join(REPO_ROOT, 'docs');

/** Every Markdown file under `dir`, as absolute paths. */
function markdownFiles(dir: string): string[] {
  return fs.readdirSync(dir, { withFileTypes: true }).flatMap((entry) => {
    const full = path.join(dir, entry.name);
    if (entry.isDirectory()) return markdownFiles(full);
    return entry.name.endsWith('.md') ? [full] : [];
  });
}

/** The link targets of a Markdown text, outside fenced code blocks and code spans. */
function linkTargets(markdown: string): string[] {
  const prose = markdown
    .replace(/^```[\s\S]*?^```/gm, '')
    .replace(/``[^`]*``/g, '')
    .replace(/`[^`\n]*`/g, '');
  const targets: string[] = [];
  for (const match of prose.matchAll(/!?\[[^\]]*\]\(\s*(?:<([^>]+)>|([^)\s]+))(?:\s+"[^"]*")?\s*\)/g))
    targets.push((match[1] ?? match[2])!);
  for (const match of prose.matchAll(/^\s*\[[^\]]+\]:\s*<?(\S+?)>?(?:\s+"[^"]*")?\s*$/gm)) targets.push(match[1]!);
  return targets;
}

/** The file a relative target names, relative to the checkout; undefined for a URL or an anchor in the page. */
function localTarget(file: string, target: string): string | undefined {
  if (/^[a-z][a-z0-9+.-]*:/i.test(target) || target.startsWith('#')) return undefined;
  const bare = decodeURIComponent(target.replace(/[#?].*$/, ''));
  if (bare === '') return undefined;
  return path.relative(REPO_ROOT, path.resolve(path.dirname(file), bare));
}

/** The anchors of a Markdown file's headings, as GitHub makes them (`## The test suite` → `the-test-suite`). */
function headingAnchors(markdown: string): Set<string> {
  const anchors = new Set<string>();
  const seen = new Map<string, number>();
  for (const match of markdown.replace(/^```[\s\S]*?^```/gm, '').matchAll(/^#{1,6}\s+(.*)$/gm)) {
    const slug = match[1]!
      .trim()
      .toLowerCase()
      .replace(/[^\p{L}\p{N}_\- ]/gu, '')
      .replace(/ /g, '-');
    const count = seen.get(slug) ?? 0;
    seen.set(slug, count + 1);
    anchors.add(count === 0 ? slug : `${slug}-${count}`);
  }
  return anchors;
}

const documents = [path.join(REPO_ROOT, 'README.md'), ...markdownFiles(docsDir)];

test('linkTargets finds inline, image and reference links, and skips code', (t) => {
  const text = [
    'See [a](a.md), ![b](img/b.png "title") and [c](<c d.md>).',
    '`[not](code.md)` and',
    '```sh',
    '[nor](fenced.md)',
    '```',
    '[ref]: ref.md',
  ].join('\n');
  t.deepEqual(linkTargets(text), ['a.md', 'img/b.png', 'c d.md', 'ref.md']);
});

test('every relative link in README.md and docs/ names a file that exists', (t) => {
  const broken: string[] = [];
  let checked = 0;
  for (const file of documents) {
    for (const target of linkTargets(fs.readFileSync(file, 'utf8'))) {
      const local = localTarget(file, target);
      if (local === undefined) continue;
      checked++;
      if (fs.existsSync(path.join(REPO_ROOT, local))) continue;
      broken.push(`${path.relative(REPO_ROOT, file)}: ${target}`);
    }
  }
  t.true(checked > 100, `only ${checked} relative links found`);
  t.deepEqual(broken, []);
});

test('every link to a heading of a document names a heading it has', (t) => {
  const broken: string[] = [];
  for (const file of documents) {
    for (const target of linkTargets(fs.readFileSync(file, 'utf8'))) {
      const hash = target.indexOf('#');
      if (hash === -1 || /^[a-z][a-z0-9+.-]*:/i.test(target)) continue;
      const local = hash === 0 ? path.relative(REPO_ROOT, file) : localTarget(file, target);
      if (local === undefined || !local.endsWith('.md') || !fs.existsSync(path.join(REPO_ROOT, local))) continue;
      const anchor = decodeURIComponent(target.slice(hash + 1));
      if (!headingAnchors(fs.readFileSync(path.join(REPO_ROOT, local), 'utf8')).has(anchor))
        broken.push(`${path.relative(REPO_ROOT, file)}: ${target}`);
    }
  }
  t.deepEqual(broken, []);
});

test('docs/index.md links every page of the guide', (t) => {
  const index = path.join(docsDir, 'index.md');
  const linked = new Set(
    linkTargets(fs.readFileSync(index, 'utf8'))
      .map((target) => localTarget(index, target))
      .filter((target) => target !== undefined),
  );
  const pages = fs
    .readdirSync(docsDir)
    .filter((name) => name.endsWith('.md') && name !== 'index.md')
    .map((name) => `docs/${name}`);
  t.true(pages.length > 10);
  t.deepEqual(
    pages.filter((page) => !linked.has(page)),
    [],
  );
});

test('README.md links the guide index and stays short enough to read in five minutes', (t) => {
  const readme = fs.readFileSync(path.join(REPO_ROOT, 'README.md'), 'utf8');
  const lines = readme.split('\n');
  t.true(lines.length <= 250, `${lines.length} lines`);
  t.deepEqual(
    lines.flatMap((line, i) => (line.length > 200 ? [`line ${i + 1}: ${line.length} characters`] : [])),
    [],
  );
  t.true(linkTargets(readme).includes('docs/index.md'));
});
