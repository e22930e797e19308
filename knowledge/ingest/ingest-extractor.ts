/**
 * The built-in claim extractor of `POST /ingest` (no network); the HTTP extractor is an adapter in
 * platform/outbound/http-extractor.ts (docs/adr/0035).
 */
import type { ExtractedClaim, Extractor } from '../../domain/knowledge/model-ports.js';
import { extractRuleClaims } from '../../domain/knowledge/rule-extraction.js';

/** The built-in rule-based extractor: sentences and clauses become claims (no network, deterministic). */
export class RuleExtractor implements Extractor {
  readonly kind = 'rules';
  readonly model = RULE_EXTRACTOR_MODEL;

  extract(text: string, maxClaims: number): Promise<ExtractedClaim[]> {
    return Promise.resolve(extractRuleClaims(text, maxClaims));
  }
}

/** Model name recorded on claims the rule-based extractor found. */
export const RULE_EXTRACTOR_MODEL = 'rules-v1';
