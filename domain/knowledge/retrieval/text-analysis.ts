/**
 * Text analysis shared by the text index and lexical ranking: the same tokens on both sides.
 *
 * The FTS5 index tokenizes with `porter unicode61 remove_diacritics 2`: Unicode letters and digits,
 * lower-cased, diacritics removed, then Porter-stemmed (tokens shorter than three characters are
 * kept as they are). `analyze` reproduces that in process with the `stemmer` package (the same
 * Porter 1980 algorithm), so bm25 computed here counts the tokens FTS5 matched. A test compares the
 * two over a word list through `fts5vocab`.
 */
import { stemmer } from 'stemmer';
import { eng } from 'stopword';

const utf8 = new TextEncoder();
const WORD = /[\p{L}\p{N}]+/gu;

/** Lower-cased alphanumeric tokens of `text` with diacritics removed, as unicode61 sees them (not stemmed). */
export function tokenize(text: string): string[] {
  return text.normalize('NFKD').replace(/\p{M}/gu, '').toLowerCase().match(WORD) ?? [];
}

const STEM_CACHE_LIMIT = 100_000;
const stems = new Map<string, string>();

/** The Porter stem of one unicode61 token, as FTS5's porter tokenizer would index it. */
export function stem(token: string): string {
  let cached = stems.get(token);
  if (cached === undefined) {
    if (stems.size >= STEM_CACHE_LIMIT) stems.clear();
    cached = porter(token);
    stems.set(token, cached);
  }
  return cached;
}

function porter(token: string): string {
  // FTS5 passes through tokens below three or above 64 bytes (UTF-8), and stems the rest byte by byte.
  const bytes = /^[\x00-\x7f]*$/.test(token) ? token.length : utf8.encode(token).length;
  if (bytes < 3 || bytes > 64) return token;
  // A token of one or two characters that is three bytes or more (`μs`): the stemmer package leaves
  // words under three characters alone, SQLite's porter counts bytes. Of Porter's rules only step 1a
  // (a final `s` dropped, `ss` kept) can apply to so short a word.
  if (token.length < 3) return /[^s]s$/.test(token) ? token.slice(0, -1) : token;
  return stemmer(token);
}

/** Stemmed tokens of `text`, in order: what the text index holds for it. */
export function analyze(text: string): string[] {
  return tokenize(text).map(stem);
}

const STOPWORDS: ReadonlySet<string> = new Set([
  ...eng,
  // Question words and auxiliaries of natural-language questions that the list above lacks.
  'when',
  'does',
  'doing',
  'done',
  'will',
  'shall',
  'not',
  'no',
  'so',
  'she',
  'its',
  'us',
  'our',
  'ours',
  'yours',
  'whom',
  'whose',
  'why',
  'just',
  'than',
  'also',
  'kind',
  'sort',
  'ever',
]);

/** True for an English function word that carries no topic (`the`, `what`, `did`, ...). */
export function isStopword(token: string): boolean {
  return STOPWORDS.has(token);
}

const STOP_STEMS: ReadonlySet<string> = new Set([...STOPWORDS].map((w) => stem(w)));

/** True for the stem of a function word (for terms taken from documents, which are stems already). */
export function isStopStem(value: string): boolean {
  return STOP_STEMS.has(value);
}
