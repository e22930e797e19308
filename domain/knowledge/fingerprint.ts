/**
 * Content fingerprint normalization: what "the same content" means for deduplication.
 */

/** Canonical text for fingerprinting: NFKC, lower case, whitespace collapsed, trimmed. */
export function canonicalContent(content: string): string {
  return content.normalize('NFKC').toLowerCase().replace(/\s+/g, ' ').trim();
}
