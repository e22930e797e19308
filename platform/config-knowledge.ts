/**
 * The settings of the knowledge store (tokens, embedder, reranker, thesaurus, deduplication), part of {@link
 * VARIABLES} in config.ts.
 */
import path from 'node:path';
import { ConfigError } from '../domain/errors.js';
import { bool, httpUrl, optional, requestTimeoutMs, type VariableSpec } from './config-parsers.js';

/** Knowledge store settings of {@link SvcConfig}. */
export interface KnowledgeConfig {
  /** Knowledge store tokens, `tenant:permissions:secret` separated by commas; never logged. */
  readonly knowledgeTokens: string | undefined;
  /** File of knowledge store tokens, one `tenant:permissions:secret` per line (`#` comments). */
  readonly knowledgeTokensFile: string | undefined;
  /** Base URL of an OpenAI-compatible embeddings endpoint; unset means no embedder. */
  readonly knowledgeEmbedderUrl: string | undefined;
  /** Embedding model name sent to the embedder. @default text-embedding-3-small */
  readonly knowledgeEmbedderModel: string;
  /** Requested embedding dimensions (sent as `dimensions`); unset lets the model decide. */
  readonly knowledgeEmbedderDimensions: number | undefined;
  /** API key for the embedder (`Authorization: Bearer`); never logged. */
  readonly knowledgeEmbedderApiKey: string | undefined;
  /** Per-request embedder timeout in milliseconds. @default 10000 */
  readonly knowledgeEmbedderTimeoutMs: number;
  /** Most texts per embedder request. @default 64 */
  readonly knowledgeEmbedderBatchSize: number;
  /** Base URL of an optional reranker (`POST {url}/rerank`); unset: fused scores stand. */
  readonly knowledgeRerankerUrl: string | undefined;
  /** Rerank model name. @default rerank-v1 */
  readonly knowledgeRerankerModel: string;
  /** API key for the reranker (`Authorization: Bearer`); never logged. */
  readonly knowledgeRerankerApiKey: string | undefined;
  /** Per-request reranker timeout in milliseconds. @default 5000 */
  readonly knowledgeRerankerTimeoutMs: number;
  /** Thesaurus of lexical query expansion: `wordnet` (WordNet 3.1, bundled) or `off`. @default wordnet */
  readonly knowledgeThesaurus: 'wordnet' | 'off';
  /** Deduplicate writes by content fingerprint unless a write says skip_dedup. @default false */
  readonly knowledgeDedupDefault: boolean;
}

export const KNOWLEDGE_VARIABLES = {
  knowledgeTokens: {
    name: 'SVC_KNOWLEDGE_TOKENS',
    description: 'Knowledge store tokens tenant:permissions:secret, comma separated',
    secret: true,
    defaultText: '(none: open)',
    parse: optional,
  },
  knowledgeTokensFile: {
    name: 'SVC_KNOWLEDGE_TOKENS_FILE',
    description: 'File of knowledge store tokens, one tenant:permissions:secret per line',
    defaultText: '(none)',
    parse: (raw) => {
      const value = optional(raw);
      return value === undefined ? undefined : path.resolve(value);
    },
  },
  knowledgeEmbedderUrl: {
    name: 'SVC_KNOWLEDGE_EMBEDDER_URL',
    description: 'OpenAI-compatible embeddings base URL ({url}/embeddings); unset: no embedder',
    defaultText: '(none)',
    parse: httpUrl('SVC_KNOWLEDGE_EMBEDDER_URL'),
  },
  knowledgeEmbedderModel: {
    name: 'SVC_KNOWLEDGE_EMBEDDER_MODEL',
    description: 'Embedding model name',
    defaultText: 'text-embedding-3-small',
    parse: (raw) => optional(raw) ?? 'text-embedding-3-small',
  },
  knowledgeEmbedderDimensions: {
    name: 'SVC_KNOWLEDGE_EMBEDDER_DIMENSIONS',
    description: 'Requested embedding dimensions',
    defaultText: '(model default)',
    parse: (raw) => {
      const value = optional(raw);
      if (value === undefined) return undefined;
      if (!/^\d+$/.test(value) || Number(value) < 1 || Number(value) > 4096)
        throw new ConfigError('SVC_KNOWLEDGE_EMBEDDER_DIMENSIONS', `"${value}" is not a whole number in 1-4096`);
      return Number(value);
    },
  },
  knowledgeEmbedderApiKey: {
    name: 'SVC_KNOWLEDGE_EMBEDDER_API_KEY',
    description: 'Embedder API key',
    secret: true,
    defaultText: '(none)',
    parse: optional,
  },
  knowledgeEmbedderTimeoutMs: {
    name: 'SVC_KNOWLEDGE_EMBEDDER_TIMEOUT',
    description: 'Embedder request timeout (e.g. 10s, 500ms)',
    defaultText: '10s',
    parse: requestTimeoutMs('SVC_KNOWLEDGE_EMBEDDER_TIMEOUT', '10s'),
  },
  knowledgeEmbedderBatchSize: {
    name: 'SVC_KNOWLEDGE_EMBEDDER_BATCH_SIZE',
    description: 'Most texts per embedder request',
    defaultText: '64',
    parse: (raw) => {
      const value = optional(raw) ?? '64';
      if (!/^\d+$/.test(value) || Number(value) < 1 || Number(value) > 2048)
        throw new ConfigError('SVC_KNOWLEDGE_EMBEDDER_BATCH_SIZE', `"${value}" is not a whole number in 1-2048`);
      return Number(value);
    },
  },
  knowledgeRerankerUrl: {
    name: 'SVC_KNOWLEDGE_RERANKER_URL',
    description: 'Reranker base URL (POST {url}/rerank, the Cohere/Jina/vLLM protocol); unset: no reranking',
    defaultText: '(none)',
    parse: httpUrl('SVC_KNOWLEDGE_RERANKER_URL'),
  },
  knowledgeRerankerModel: {
    name: 'SVC_KNOWLEDGE_RERANKER_MODEL',
    description: 'Rerank model name',
    defaultText: 'rerank-v1',
    parse: (raw) => optional(raw) ?? 'rerank-v1',
  },
  knowledgeRerankerApiKey: {
    name: 'SVC_KNOWLEDGE_RERANKER_API_KEY',
    description: 'Reranker API key',
    secret: true,
    defaultText: '(none)',
    parse: optional,
  },
  knowledgeRerankerTimeoutMs: {
    name: 'SVC_KNOWLEDGE_RERANKER_TIMEOUT',
    description: 'Reranker request timeout (e.g. 5s, 800ms); a slower answer leaves the fused order',
    defaultText: '5s',
    parse: requestTimeoutMs('SVC_KNOWLEDGE_RERANKER_TIMEOUT', '5s'),
  },
  knowledgeThesaurus: {
    name: 'SVC_KNOWLEDGE_THESAURUS',
    description: 'Thesaurus that expands text queries with related words: wordnet or off',
    defaultText: 'wordnet',
    parse: (raw) => {
      const value = optional(raw) ?? 'wordnet';
      if (value !== 'wordnet' && value !== 'off')
        throw new ConfigError('SVC_KNOWLEDGE_THESAURUS', `"${value}" is not wordnet or off`);
      return value;
    },
  },
  knowledgeDedupDefault: {
    name: 'SVC_KNOWLEDGE_DEDUP_DEFAULT',
    description: 'Deduplicate knowledge writes by content fingerprint unless skip_dedup',
    defaultText: 'false',
    parse: bool('SVC_KNOWLEDGE_DEDUP_DEFAULT', false),
  },
} satisfies { [K in keyof KnowledgeConfig]: VariableSpec<KnowledgeConfig[K]> };
