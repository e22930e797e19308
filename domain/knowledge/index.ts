export { NamespaceMode, NAMESPACE_MODES, MemType, MEM_TYPES, DEFAULT_WEIGHTS, RECENCY_ALPHA, NEAR_DUPLICATE_COSINE, CREDIBILITY_FLOOR, DEFAULT_SOURCE_CREDIBILITY, DEFAULT_CONFIDENCE, defaultCandidateK, type ScoreWeights } from './modes.js';
export { clamp01, recencyScore, corroboration, confidenceScore, scoreCandidate, mergeWeights, type ScoreComponents, type Score } from './scoring.js';
export { RRF_K, fuseLists, type PathList, type FusedCandidate } from './fusion.js';
export { normalize, dot, cosine, signCode, POPCOUNT16 } from './vector-math.js';
export { tokenize, isMixedIdentifier, parseLexicalQuery, satisfiesLiterals, termCoverage, idf, bm25, BM25_K1, BM25_B, type LexicalQuery } from './lexical-query.js';
export { matchesFilter, type FilterableNode, type SearchFilter } from './search-filter.js';
export { canonicalContent } from './fingerprint.js';
