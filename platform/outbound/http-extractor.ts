/**
 * The HTTP claim extractor of `POST /ingest` (the {@link Extractor} port). It speaks the OpenAI-compatible chat
 * protocol: `POST {url}/chat/completions` with `{model, temperature: 0, response_format:
 * {type: "json_object"}, messages: [{role: "system", content: EXTRACTION_INSTRUCTIONS}, {role:
 * "user", content: <text>}]}` (and `Authorization: Bearer <key>` when a key is configured),
 * answering `{choices: [{message: {content: "<JSON text>"}}]}` whose JSON text is `{claims:
 * [{content, subject?, predicate?, object?, confidence?, labels?}]}` (docs/adr/0035).
 */
import { UnavailableError } from '../../domain/errors.js';
import { compileValidator } from '../../domain/json-schema.js';
import type { ExtractedClaim, Extractor } from '../../domain/knowledge/model-ports.js';
import { postModelJson } from './model-endpoint.js';

/** Options of {@link HttpExtractor}. */
export interface HttpExtractorOptions {
  /** Base URL; `/chat/completions` is appended. */
  readonly url: string;
  readonly model: string;
  /** Sent as `Authorization: Bearer <apiKey>`; never logged or returned. */
  readonly apiKey?: string | undefined;
  /** Per-request timeout. @default 30000 */
  readonly timeoutMs?: number;
}

/** The system message sent with every extraction. */
export const EXTRACTION_INSTRUCTIONS = [
  'Extract the factual claims stated in the user text.',
  'Answer only a JSON object {"claims": [...]}; each claim has "content" (one self-contained sentence),',
  'and when the claim relates a subject to a value also "subject", "predicate" and "object";',
  'optionally "confidence" (0 to 1, how clearly the text states it) and "labels" (short topic words).',
  'Do not invent facts that the text does not state.',
].join(' ');

const validateClaims = compileValidator<{ claims: ExtractedClaim[] }>(
  {
    type: 'object',
    required: ['claims'],
    properties: {
      claims: {
        type: 'array',
        items: {
          type: 'object',
          required: ['content'],
          properties: {
            content: { type: 'string', minLength: 1, maxLength: 20_000 },
            subject: { type: 'string', minLength: 1, maxLength: 1000 },
            predicate: { type: 'string', minLength: 1, maxLength: 1000 },
            object: { type: 'string', maxLength: 20_000 },
            confidence: { type: 'number', minimum: 0, maximum: 1 },
            labels: { type: 'array', maxItems: 20, items: { type: 'string', minLength: 1, maxLength: 128 } },
          },
        },
      },
    },
  },
  'extractor answer',
);

/** OpenAI-compatible chat-completions extractor. */
export class HttpExtractor implements Extractor {
  readonly kind = 'openai-compatible';
  readonly model: string;
  readonly #options: HttpExtractorOptions;

  constructor(options: HttpExtractorOptions) {
    this.#options = options;
    this.model = options.model;
  }

  async extract(text: string, maxClaims: number): Promise<ExtractedClaim[]> {
    const body = {
      model: this.model,
      temperature: 0,
      response_format: { type: 'json_object' },
      messages: [
        { role: 'system', content: `${EXTRACTION_INSTRUCTIONS} Return at most ${maxClaims} claims.` },
        { role: 'user', content: text },
      ],
    };
    const answer = await postModelJson(
      {
        name: 'extractor',
        url: `${this.#options.url.replace(/\/+$/, '')}/chat/completions`,
        ...(this.#options.apiKey ? { apiKey: this.#options.apiKey } : {}),
        timeoutMs: this.#options.timeoutMs ?? 30_000,
      },
      body,
    );
    const content = (answer as { choices?: { message?: { content?: unknown } }[] } | null)?.choices?.[0]?.message
      ?.content;
    if (typeof content !== 'string')
      throw new UnavailableError('extractor answer has no choices[0].message.content text', {
        code: 'extractor_failed',
      });
    let parsed: unknown;
    try {
      parsed = JSON.parse(content);
    } catch (cause) {
      throw new UnavailableError('extractor message content is not a JSON object', { code: 'extractor_failed', cause });
    }
    const problems = validateClaims.check(parsed);
    if (problems.length > 0) {
      throw new UnavailableError(
        `extractor claims break the contract: ${problems
          .slice(0, 3)
          .map((p) => p.message)
          .join('; ')}`,
        { code: 'extractor_failed' },
      );
    }
    return (parsed as { claims: ExtractedClaim[] }).claims.slice(0, maxClaims);
  }
}
