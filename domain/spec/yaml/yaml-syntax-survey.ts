/**
 * The survey of a YAML document's concrete syntax tree before it is composed: nesting depth, syntax
 * errors and where the first document ends, found without recursion (see parse-yaml-document.ts).
 */
import type { CST } from 'yaml';

/** Token types that never hold other tokens or errors (skipped by the survey). */
const sourceTokenTypes: ReadonlySet<string> = new Set([
  'byte-order-mark',
  'doc-mode',
  'doc-start',
  'space',
  'comment',
  'newline',
  'directive-line',
  'anchor',
  'tag',
  'seq-item-ind',
  'explicit-key-ind',
  'map-value-ind',
  'flow-map-start',
  'flow-map-end',
  'flow-seq-start',
  'flow-seq-end',
  'flow-error-end',
  'comma',
  'block-scalar-header',
  'directive',
]);

/** What the concrete syntax tree says before composing: nesting, syntax errors, where the first document ends. */
export interface SyntaxSurvey {
  /** The first collection nested deeper than the limit. */
  readonly tooDeep: { readonly depth: number; readonly offset: number } | null;
  /** Syntax error tokens in source order (at most `maxErrors + 1` are kept). */
  readonly errors: ReadonlyArray<{ readonly offset: number; readonly message: string }>;
  /** Number of leading tokens worth composing: up to and including the second document, if any. */
  readonly composeLength: number;
}

/**
 * Surveys the concrete syntax tree without recursion, so that documents nested too deeply for the YAML
 * composer (which recurses) or full of syntax errors (each costly to compose) are stopped before composing.
 */
export function surveySyntax(tokens: readonly CST.Token[], maxDepth: number, maxErrors: number): SyntaxSurvey {
  let composeLength = tokens.length;
  let documents = 0;
  for (let index = 0; index < tokens.length; index += 1) {
    if (tokens[index]?.type === 'document' && (documents += 1) === 2) {
      composeLength = index + 1;
      break;
    }
  }
  const errors: Array<{ offset: number; message: string }> = [];
  const stack: Array<{ readonly token: CST.Token; readonly depth: number }> = [];
  // Children are pushed last-first so that tokens pop in source order (errors are met in order).
  const push = (token: unknown, depth: number): void => {
    if (Array.isArray(token)) {
      for (let index = token.length - 1; index >= 0; index -= 1) push(token[index], depth);
    } else if (token !== null && typeof token === 'object' && !sourceTokenTypes.has((token as CST.Token).type)) {
      stack.push({ token: token as CST.Token, depth });
    }
  };
  for (let index = composeLength - 1; index >= 0; index -= 1) push(tokens[index], 0);
  while (stack.length > 0) {
    const { token, depth } = stack.pop()!;
    switch (token.type) {
      case 'error':
        if (errors.length <= maxErrors) errors.push({ offset: token.offset, message: token.message });
        break;
      case 'document':
        push(token.end, depth);
        push(token.value, depth);
        push(token.start, depth);
        break;
      case 'block-map':
      case 'block-seq':
      case 'flow-collection': {
        const level = depth + 1;
        if (level > maxDepth) return { tooDeep: { depth: level, offset: token.offset }, errors, composeLength };
        if (token.type === 'flow-collection') push(token.end, level);
        for (let index = token.items.length - 1; index >= 0; index -= 1) {
          const item = token.items[index]!;
          push(item.value, level);
          push(item.sep, level);
          push(item.key, level);
          push(item.start, level);
        }
        break;
      }
      case 'block-scalar':
        push(token.props, depth);
        break;
      case 'alias':
      case 'scalar':
      case 'single-quoted-scalar':
      case 'double-quoted-scalar':
      case 'doc-end':
        push(token.end, depth);
        break;
      default:
        break;
    }
  }
  return { tooDeep: null, errors, composeLength };
}
