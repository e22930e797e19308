/**
 * The settings of the knowledge workers: the review evaluator webhook and the ingest extractor, part of {@link
 * VARIABLES} in config.ts.
 */
import { bool, httpUrl, optional, requestTimeoutMs, type VariableSpec } from './config-parsers.js';

/** Knowledge worker settings of {@link SvcConfig}. */
export interface KnowledgeWorkerConfig {
  /** Evaluator webhook of the knowledge review worker (`evaluator: webhook`); unset: only the rules evaluator. */
  readonly knowledgeReviewWebhookUrl: string | undefined;
  /** HMAC-SHA-256 key signing review worker evaluator requests; never logged. */
  readonly knowledgeReviewWebhookSecret: string | undefined;
  /** Allow knowledge webhook targets (handoffs, evaluator) on loopback, private and link-local addresses. @default false */
  readonly knowledgeAllowPrivateTargets: boolean;
  /** Base URL of an OpenAI-compatible chat endpoint for `POST /ingest` ({url}/chat/completions); unset: ingest answers 503. */
  readonly knowledgeExtractorUrl: string | undefined;
  /** Model sent to the extractor. @default gpt-4o-mini */
  readonly knowledgeExtractorModel: string;
  /** API key for the extractor (`Authorization: Bearer`); never logged. */
  readonly knowledgeExtractorApiKey: string | undefined;
  /** Per-request extractor timeout in milliseconds. @default 30000 */
  readonly knowledgeExtractorTimeoutMs: number;
}

export const KNOWLEDGE_WORKER_VARIABLES = {
  knowledgeReviewWebhookUrl: {
    name: 'SVC_KNOWLEDGE_REVIEW_WEBHOOK_URL',
    description: 'Evaluator webhook of the knowledge review worker (evaluator: webhook)',
    defaultText: '(none: rules only)',
    parse: httpUrl('SVC_KNOWLEDGE_REVIEW_WEBHOOK_URL'),
  },
  knowledgeReviewWebhookSecret: {
    name: 'SVC_KNOWLEDGE_REVIEW_WEBHOOK_SECRET',
    description: 'HMAC-SHA-256 key of review worker evaluator requests (x-svc-signature-256)',
    secret: true,
    defaultText: '(none)',
    parse: optional,
  },
  knowledgeAllowPrivateTargets: {
    name: 'SVC_KNOWLEDGE_ALLOW_PRIVATE_TARGETS',
    description: 'Allow knowledge webhook targets on loopback, private and link-local addresses',
    defaultText: 'false',
    parse: bool('SVC_KNOWLEDGE_ALLOW_PRIVATE_TARGETS', false),
  },
  knowledgeExtractorUrl: {
    name: 'SVC_KNOWLEDGE_EXTRACTOR_URL',
    description: 'OpenAI-compatible chat base URL of the ingest extractor ({url}/chat/completions); unset: no ingest',
    defaultText: '(none)',
    parse: httpUrl('SVC_KNOWLEDGE_EXTRACTOR_URL'),
  },
  knowledgeExtractorModel: {
    name: 'SVC_KNOWLEDGE_EXTRACTOR_MODEL',
    description: 'Chat model of the ingest extractor',
    defaultText: 'gpt-4o-mini',
    parse: (raw) => optional(raw) ?? 'gpt-4o-mini',
  },
  knowledgeExtractorApiKey: {
    name: 'SVC_KNOWLEDGE_EXTRACTOR_API_KEY',
    description: 'Ingest extractor API key',
    secret: true,
    defaultText: '(none)',
    parse: optional,
  },
  knowledgeExtractorTimeoutMs: {
    name: 'SVC_KNOWLEDGE_EXTRACTOR_TIMEOUT',
    description: 'Ingest extractor request timeout (e.g. 30s, 500ms)',
    defaultText: '30s',
    parse: requestTimeoutMs('SVC_KNOWLEDGE_EXTRACTOR_TIMEOUT', '30s'),
  },
} satisfies { [K in keyof KnowledgeWorkerConfig]: VariableSpec<KnowledgeWorkerConfig[K]> };
