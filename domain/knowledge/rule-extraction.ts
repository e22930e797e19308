/**
 * Rule-based claim extraction: the default of `POST /ingest` when no LLM extractor is configured
 * (docs/adr/0037-rule-based-ingest.md). Pure and deterministic: the same text gives the same
 * claims in the same order.
 *
 * Rules:
 * 1. Sentences come from `Intl.Segmenter` (Unicode sentence boundaries), and line breaks and list
 *    bullets also end a sentence.
 * 2. A sentence splits into clauses at `;` and at `, and|, but|, while|, whereas` when each part
 *    still reads as a statement (it has at least three words).
 * 3. A clause is kept as a claim when it has 3-80 words, at least one letter, and is not a
 *    question; clauses are trimmed of list markers and trailing punctuation, then de-duplicated.
 * 4. A clause of the form `<subject> <copula or verb> <object>` with a copula or a modal/have verb
 *    (`is`, `are`, `was`, `were`, `has`, `have`, `uses`, `runs`, `requires`, ...) carries
 *    `subject`, `predicate` and `object`, so two sources stating different objects for the same
 *    subject and predicate are detected as conflicting claims.
 */

/** One claim found in a text. */
export interface RuleClaim {
  readonly content: string;
  readonly subject?: string;
  readonly predicate?: string;
  readonly object?: string;
}

const MIN_WORDS = 3;
const MAX_WORDS = 80;
// Bullets written as escapes: the release bundle must stay ASCII (ADR 0170).
const BULLET = /^\s*(?:[-*\u2022\u00b7]|\d{1,3}[.)]|[a-z][.)])\s+/i;
const CLAUSE_JOINERS = /\s*;\s*|,\s+(?:and|but|while|whereas)\s+/i;
const PREDICATES = [
  'is',
  'are',
  'was',
  'were',
  'has',
  'have',
  'had',
  'uses',
  'use',
  'runs',
  'run',
  'requires',
  'require',
  'supports',
  'support',
  'contains',
  'contain',
  'takes',
  'take',
  'equals',
  'means',
  'costs',
  'lasts',
  'returns',
  'allows',
  'limits',
];
const PREDICATE_PATTERN = new RegExp(`^(.{2,120}?)\\s+(${PREDICATES.join('|')})\\s+(not\\s+)?(.{1,400})$`, 'i');
const segmenter = new Intl.Segmenter('en', { granularity: 'sentence' });

function words(text: string): number {
  return text.split(/\s+/).filter((w) => w !== '').length;
}

/** Sentences of `text`: Unicode sentence boundaries, plus line breaks. */
export function sentencesOf(text: string): string[] {
  const out: string[] = [];
  for (const line of text.split(/\r?\n+/)) {
    const stripped = line.replace(BULLET, '').trim();
    if (stripped === '') continue;
    for (const { segment } of segmenter.segment(stripped)) {
      const sentence = segment.trim();
      if (sentence !== '') out.push(sentence);
    }
  }
  return out;
}

/** Clauses of one sentence (rule 2). */
export function clausesOf(sentence: string): string[] {
  const parts = sentence
    .split(CLAUSE_JOINERS)
    .map((p) => p.trim())
    .filter((p) => p !== '');
  return parts.length > 1 && parts.every((p) => words(p) >= MIN_WORDS) ? parts : [sentence];
}

function tidy(clause: string): string {
  return clause
    .replace(BULLET, '')
    .replace(/[\s.,;:!]+$/u, '')
    .replace(/\s+/g, ' ')
    .trim();
}

/** Subject, predicate and object of a simple statement (rule 4), or undefined. */
export function tripleOf(claim: string): Pick<RuleClaim, 'subject' | 'predicate' | 'object'> | undefined {
  const m = PREDICATE_PATTERN.exec(claim);
  if (!m) return undefined;
  const subject = m[1]!
    .replace(/^(?:the|a|an)\s+/i, '')
    .trim()
    .toLowerCase();
  const predicate = `${m[2]!.toLowerCase()}${m[3] !== undefined ? ' not' : ''}`;
  const object = m[4]!.trim();
  if (subject === '' || object === '' || words(subject) > 8) return undefined;
  return { subject, predicate, object };
}

/** Claims of `text` in order (rules 1-4), at most `maxClaims`. */
export function extractRuleClaims(text: string, maxClaims: number): RuleClaim[] {
  const seen = new Set<string>();
  const claims: RuleClaim[] = [];
  for (const sentence of sentencesOf(text)) {
    for (const raw of clausesOf(sentence)) {
      if (claims.length >= maxClaims) return claims;
      if (/\?\s*$/.test(raw)) continue;
      const content = tidy(raw);
      const n = words(content);
      if (n < MIN_WORDS || n > MAX_WORDS || !/\p{L}/u.test(content)) continue;
      const key = content.toLowerCase();
      if (seen.has(key)) continue;
      seen.add(key);
      claims.push({ content, ...tripleOf(content) });
    }
  }
  return claims;
}
