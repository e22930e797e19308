/**
 * The thesaurus port of lexical retrieval: words related to a query word, so that a question about
 * a "dog someone purchased" also finds "bought a puppy" (docs/adr/0023-lexical-retrieval.md).
 */

/** How an expansion relates to the query word; it sets the expansion's weight. */
export const ExpansionRelation = {
  /** Another form of the same word (`flew` for `fly`, `bought` for `buy`). */
  inflection: 'inflection',
  /** A word of the same sense (`purchase` and `buy`). */
  synonym: 'synonym',
  /** A more specific word (`puppy` for `dog`). */
  narrower: 'narrower',
} as const;
export type ExpansionRelation = (typeof ExpansionRelation)[keyof typeof ExpansionRelation];

/** Weight of an expansion term relative to the query word it came from. */
export const EXPANSION_WEIGHT: Readonly<Record<ExpansionRelation, number>> = {
  inflection: 1,
  synonym: 0.5,
  narrower: 0.35,
};

/** One related word (a single lower-case token). */
export interface Expansion {
  readonly word: string;
  readonly relation: ExpansionRelation;
  /** Which sense of the query word it comes from: 0 for the most frequent. @default 0 */
  readonly sense?: number;
}

/** The weight of an expansion: by relation, halved for the second sense, a third for the third. */
export function expansionWeight(expansion: Expansion): number {
  return EXPANSION_WEIGHT[expansion.relation] / (1 + (expansion.sense ?? 0));
}

/** Looks up words related to a query word. */
export interface Thesaurus {
  /** The thesaurus's name for `/v1/backends` (for example `wordnet-3.1`). */
  readonly name: string;
  /** Words related to `word` (lower case), without `word` itself; empty when it is unknown. */
  expand(word: string): readonly Expansion[];
}
