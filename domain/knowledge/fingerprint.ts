/**
 * Content fingerprint normalization: what "the same content" means for deduplication.
 */

/** Only code points below 128: text that NFKC leaves exactly as it is. */
const ASCII = /^[\x00-\x7f]*$/;

/** Canonical text for fingerprinting: NFKC, lower case, whitespace collapsed, trimmed. */
export function canonicalContent(content: string): string {
  // ASCII is unchanged by every Unicode normalisation form; the test is cheaper than `normalize`.
  const normal = ASCII.test(content) ? content : content.normalize('NFKC');
  return normal.toLowerCase().replace(/\s+/g, ' ').trim();
}
