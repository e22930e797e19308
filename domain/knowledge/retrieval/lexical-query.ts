/**
 * Parses retrieval text into query terms, literal checks and FTS5 expressions.
 *
 * Quoted phrases and mixed letter-and-number identifiers (`ERR-4021`, `v2.3.1`, `sha256`) must
 * match literally: they become required FTS5 phrases and are re-checked as case-insensitive
 * substrings of the content, because the tokenizer splits `ERR-4021` into `err` and `4021`.
 * Other words are optional (OR) and ranked by bm25 over their Porter stems; English function words
 * (`what`, `did`, `the`) are dropped unless the query holds nothing else (docs/adr/0023).
 */
import { analyze, isStopword, stem, tokenize } from './text-analysis.js';

export { tokenize } from './text-analysis.js';

/** One optional query term: the token as typed (FTS5 stems it again on its side) and its stem. */
export interface QueryTerm {
  readonly token: string;
  readonly stem: string;
}

/** A parsed lexical query. */
export interface LexicalQuery {
  /** FTS5 MATCH expression over every term, or undefined when nothing is searchable. */
  readonly match: string | undefined;
  /** Lower-cased strings that the content must contain literally. */
  readonly literals: readonly string[];
  /** Required FTS5 phrases (one per literal). */
  readonly required: readonly string[];
  /** Optional terms, one per distinct stem, in query order. */
  readonly terms: readonly QueryTerm[];
  /** Stems of the whole query in order (literals' words included), for term proximity. */
  readonly sequence: readonly string[];
}

function phrase(tokens: readonly string[]): string {
  return `"${tokens.join(' ')}"`;
}

/** True for identifier-like tokens holding both letters and digits. */
export function isMixedIdentifier(token: string): boolean {
  return /\p{L}/u.test(token) && /\p{N}/u.test(token);
}

/** Parses free text into terms, literals and an FTS5 expression. */
export function parseLexicalQuery(text: string): LexicalQuery {
  const literals: string[] = [];
  const required: string[] = [];
  const all: QueryTerm[] = [];
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
      for (const part of parts) all.push({ token: part, stem: stem(part) });
    }
  }
  const content = all.filter((t) => !isStopword(t.token));
  // A query of function words only ("who is it") still searches them rather than nothing.
  const chosen = content.length > 0 || required.length > 0 ? content : all;
  const seen = new Set<string>();
  const terms = chosen.filter((t) => (seen.has(t.stem) ? false : (seen.add(t.stem), true)));
  const sequence = analyze(text).filter((s) => seen.has(s) || literals.some((l) => analyze(l).includes(s)));
  return { match: matchExpression({ required }, terms), literals, required, terms, sequence };
}

/**
 * The FTS5 expression for `query` restricted to the optional `terms` given: literals are required,
 * the terms are OR-ed. Every term is quoted, so FTS5 operators in user text are inert.
 */
export function matchExpression(
  query: Pick<LexicalQuery, 'required'>,
  terms: readonly QueryTerm[],
): string | undefined {
  const optionalExpr = terms.length === 0 ? undefined : terms.map((t) => `"${t.token}"`).join(' OR ');
  if (query.required.length === 0) return optionalExpr;
  const requiredExpr = query.required.join(' AND ');
  // Optional words only rank; requiring them would turn "ERR-4021 timeout" into an AND query.
  return optionalExpr === undefined ? requiredExpr : `${requiredExpr} AND (${optionalExpr} OR ${query.required[0]})`;
}

/** True when `content` contains every literal of the query (case-insensitive). */
export function satisfiesLiterals(content: string, literals: readonly string[]): boolean {
  if (literals.length === 0) return true;
  const lower = content.toLowerCase();
  return literals.every((l) => lower.includes(l));
}

/** Stems the query ranks on: its optional terms and the words of its literals. */
export function rankingStems(query: LexicalQuery): string[] {
  return [...new Set([...query.terms.map((t) => t.stem), ...query.literals.flatMap((l) => analyze(l))])];
}

/** Share of the query's ranking stems that appear among the content's stems (1 when there are none). */
export function termCoverage(content: string, query: LexicalQuery): number {
  const wanted = rankingStems(query);
  if (wanted.length === 0) return 1;
  const have = new Set(analyze(content));
  return wanted.filter((t) => have.has(t)).length / wanted.length;
}
