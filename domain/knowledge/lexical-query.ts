/**
 * Parses retrieval text into an FTS5 query plus literal checks.
 *
 * Quoted phrases and mixed letter-and-number identifiers (`ERR-4021`, `v2.3.1`, `sha256`) must
 * match literally: they become required FTS5 phrases and are re-checked as case-insensitive
 * substrings of the content, because the tokenizer splits `ERR-4021` into `err` and `4021`.
 * Other words are optional (OR) and ranked by bm25.
 */

/** A parsed lexical query. */
export interface LexicalQuery {
  /** FTS5 MATCH expression over the content column, or undefined when nothing is searchable. */
  readonly match: string | undefined;
  /** Lower-cased strings that the content must contain literally. */
  readonly literals: readonly string[];
  /** Lower-cased plain terms, used for term coverage. */
  readonly terms: readonly string[];
}

const WORD = /[\p{L}\p{N}]+/gu;

/** Lower-cased alphanumeric tokens of `text`, as the unicode61 tokenizer sees them. */
export function tokenize(text: string): string[] {
  return (text.normalize('NFKD').replace(/\p{M}/gu, '').toLowerCase().match(WORD) ?? []);
}

function phrase(tokens: readonly string[]): string {
  return `"${tokens.join(' ')}"`;
}

/** True for identifier-like tokens holding both letters and digits. */
export function isMixedIdentifier(token: string): boolean {
  return /\p{L}/u.test(token) && /\p{N}/u.test(token);
}

/** Parses free text into an FTS5 expression and literal checks. */
export function parseLexicalQuery(text: string): LexicalQuery {
  const literals: string[] = [];
  const required: string[] = [];
  const optional = new Set<string>();
  const rest = text.replace(/"([^"]*)"/g, (_whole, inner: string) => {
    const tokens = tokenize(inner);
    if (tokens.length > 0) {
      required.push(phrase(tokens));
      literals.push(inner.trim().toLowerCase());
    }
    return ' ';
  });
  for (const raw of rest.split(/\s+/)) {
    const token = raw.replace(/^[^\p{L}\p{N}]+|[^\p{L}\p{N}]+$/gu, '');
    if (token === '') continue;
    const parts = tokenize(token);
    if (parts.length === 0) continue;
    if (isMixedIdentifier(token)) {
      required.push(phrase(parts));
      literals.push(token.toLowerCase());
    } else {
      for (const part of parts) optional.add(part);
    }
  }
  const terms = [...optional];
  const optionalExpr = terms.length === 0 ? undefined : terms.map((t) => `"${t}"`).join(' OR ');
  let match: string | undefined;
  if (required.length > 0) {
    match = required.join(' AND ');
    // Optional words only rank; requiring them would turn "ERR-4021 timeout" into an AND query.
    if (optionalExpr !== undefined) match = `${match} AND (${optionalExpr} OR ${required[0]})`;
  } else {
    match = optionalExpr;
  }
  return { match, literals, terms };
}

/** True when `content` contains every literal of the query (case-insensitive). */
export function satisfiesLiterals(content: string, literals: readonly string[]): boolean {
  if (literals.length === 0) return true;
  const lower = content.toLowerCase();
  return literals.every((l) => lower.includes(l));
}

/** Share of the query's plain terms that appear among the content's tokens (1 when there are none). */
export function termCoverage(content: string, query: LexicalQuery): number {
  const wanted = [...query.terms, ...query.literals.flatMap((l) => tokenize(l))];
  if (wanted.length === 0) return 1;
  const have = new Set(tokenize(content));
  return wanted.filter((t) => have.has(t)).length / wanted.length;
}

/** BM25 parameters (the usual defaults). */
export const BM25_K1 = 1.2;
export const BM25_B = 0.75;

/** Okapi IDF of a term found in `df` of `n` documents (never negative). */
export function idf(df: number, n: number): number {
  return Math.log(1 + (Math.max(n, df) - df + 0.5) / (df + 0.5));
}

/**
 * BM25 of a document (its tokens) for the query terms, with `idfOf` giving each term's IDF and
 * `avgLength` the average document length in tokens.
 */
export function bm25(docTokens: readonly string[], terms: readonly string[], idfOf: (term: string) => number, avgLength: number): number {
  const counts = new Map<string, number>();
  for (const t of docTokens) counts.set(t, (counts.get(t) ?? 0) + 1);
  const norm = BM25_K1 * (1 - BM25_B + BM25_B * (docTokens.length / Math.max(1, avgLength)));
  let score = 0;
  for (const term of new Set(terms)) {
    const tf = counts.get(term) ?? 0;
    if (tf > 0) score += idfOf(term) * ((tf * (BM25_K1 + 1)) / (tf + norm));
  }
  return score;
}
