/**
 * Reading a spec document: YAML text (or an already-parsed value) becomes a plain JavaScript value plus a
 * way to find where any field path sits in the text, so findings can name a line and column.
 *
 * Reading is defensive: the size, nesting depth, alias expansion and node count of a document are capped,
 * and every problem becomes a finding instead of an exception.
 */
import { CST, Composer, Lexer, LineCounter, Parser, YAMLParseError, type Document } from 'yaml';
import { createFinding, FindingSeverity, noPosition, type Finding, type PathSegment } from '../finding.js';
import { SpecRule } from '../rules/spec-rule.js';
import { cloneWithinLimits } from '../clone-within-limits.js';
import { surveySyntax } from './yaml-syntax-survey.js';
import { locatorFor, positionOf, type Locate } from './yaml-locator.js';
import { duplicateKeys, firstAliasOffset, firstCollectionKeyOffset } from './yaml-document-scans.js';

/** Caps on the work spent reading one document. */
export interface DocumentLimits {
  /**
   * Largest accepted YAML text, in UTF-8 bytes.
   * @default 1048576 (1 MiB)
   */
  readonly maxBytes: number;
  /**
   * Deepest accepted nesting of maps and lists (the document's root map is level 1).
   * @default 64
   */
  readonly maxDepth: number;
  /**
   * Largest alias expansion accepted by the YAML reader (guards against alias bombs).
   * @default 100
   */
  readonly maxAliasCount: number;
  /**
   * Most values (maps, lists and scalars) accepted in one document.
   * @default 200000
   */
  readonly maxNodes: number;
}

/** The default {@link DocumentLimits}. */
export const defaultDocumentLimits: DocumentLimits = Object.freeze({
  maxBytes: 1024 * 1024,
  maxDepth: 64,
  maxAliasCount: 100,
  maxNodes: 200_000,
});

/** A read document: its value, the problems met while reading it, and positions of its fields. */
export interface ParsedYamlDocument {
  /** The plain value of the document; `undefined` when it could not be read at all. */
  readonly value: unknown;
  /** True when `value` is usable (no reading error). */
  readonly readable: boolean;
  /** Reading problems: YAML syntax errors, limits exceeded, unsupported values; YAML warnings. */
  readonly findings: readonly Finding[];
  readonly locate: Locate;
}

/** Options of {@link parseYamlDocument}. */
export interface ParseYamlDocumentOptions {
  /** Name of the source, shown in finding messages (for example `apps/web/infraspec.yaml`). */
  readonly fileName?: string | undefined;
  /** Overrides of {@link defaultDocumentLimits}. */
  readonly limits?: Partial<DocumentLimits> | undefined;
  /** Segments put before the path of every reading finding (for example `fleetDocument`). */
  readonly pathPrefix?: readonly PathSegment[] | undefined;
}

const maxYamlFindings = 20;

/** Beyond this many syntax errors the text is not composed (composing each error is costly). */
const maxComposedSyntaxErrors = 100;

/** UTF-8 length of `text` without allocating; stops counting once past `cap`. */
function utf8Length(text: string, cap: number): number {
  if (text.length > cap) return text.length; // every UTF-16 unit is at least one byte
  let bytes = 0;
  for (let i = 0; i < text.length && bytes <= cap; i += 1) {
    const code = text.charCodeAt(i);
    if (code < 0x80) bytes += 1;
    else if (code < 0x800) bytes += 2;
    else if (code >= 0xd800 && code <= 0xdbff) {
      bytes += 4;
      i += 1;
    } else bytes += 3;
  }
  return bytes;
}

/**
 * Composes the first YAML document of a token stream (YAML 1.2 core schema); a second document is an
 * error, as in `parseDocument`. Duplicate keys are found by {@link duplicateKeys}.
 */
function composeSingleDocument(tokens: readonly CST.Token[], length: number): Document {
  // logLevel error: the YAML library must not write warnings to the process; they become findings here.
  // uniqueKeys false: the library's duplicate check is quadratic in the size of a map; see duplicateKeys.
  const composer = new Composer({ prettyErrors: false, uniqueKeys: false, keepSourceTokens: false, logLevel: 'error' });
  let first: Document | undefined;
  for (const doc of composer.compose(tokens, true, length)) {
    if (first === undefined) first = doc;
    else {
      first.errors.push(
        new YAMLParseError([doc.range[0], doc.range[1]], 'MULTIPLE_DOCS', 'Source contains multiple documents'),
      );
      break;
    }
  }
  // compose(..., forceDoc = true) always yields at least one document.
  return first!;
}

const nowhere: Locate = () => noPosition;

/** Flow collection indicators, by the lexer's token type: +1 opens one, -1 closes one. */
const flowNesting: Readonly<Record<string, number>> = {
  'flow-map-start': 1,
  'flow-seq-start': 1,
  'flow-map-end': -1,
  'flow-seq-end': -1,
};

/**
 * The concrete syntax tree of `text`, read up to the point where flow collections (`[`, `{`) alone
 * are nested more than `maxDepth` deep (`cut`: only that prefix was read). The YAML parser spends
 * about 25 µs per nested flow collection, so a megabyte of `[` took half a minute to reject; the
 * lexer finds the depth as it goes, and the part read holds the first collection too deep.
 */
function parseSyntax(text: string, maxDepth: number): { lineCounter: LineCounter; tokens: CST.Token[]; cut: boolean } {
  const lineCounter = new LineCounter();
  const parser = new Parser(lineCounter.addNewLine);
  const tokens: CST.Token[] = [];
  // As Parser.parse does before its first token.
  lineCounter.addNewLine(0);
  let depth = 0;
  let offset = 0;
  let scalarNext = false;
  for (const lexeme of new Lexer().lex(text)) {
    for (const token of parser.next(lexeme)) tokens.push(token);
    // A scalar's source follows its marker; markers of mode changes take no source.
    if (scalarNext) scalarNext = false;
    else {
      const type = CST.tokenType(lexeme);
      if (type === 'scalar') {
        scalarNext = true;
        continue;
      }
      if (type === 'doc-mode' || type === 'flow-error-end') {
        depth = 0;
        continue;
      }
      depth = Math.max(0, depth + (flowNesting[type ?? ''] ?? 0));
    }
    offset += lexeme.length;
    if (depth > maxDepth && offset < text.length) {
      for (const token of parser.end()) tokens.push(token);
      return { lineCounter, tokens, cut: true };
    }
  }
  for (const token of parser.end()) tokens.push(token);
  return { lineCounter, tokens, cut: false };
}

/**
 * Reads a spec document. A string is parsed as YAML (one document, YAML 1.2 core schema, duplicate keys
 * rejected) with positions; any other input is taken as an already-parsed value (positions are null).
 * Never throws: every problem is returned as a finding.
 */
export function parseYamlDocument(input: unknown, options: ParseYamlDocumentOptions = {}): ParsedYamlDocument {
  const limits: DocumentLimits = { ...defaultDocumentLimits, ...options.limits };
  const fileName = options.fileName;
  const prefix = options.pathPrefix ?? [];
  if (typeof input !== 'string') {
    const cloned = cloneWithinLimits(input, limits);
    const findings = cloned.problems.map((problem) =>
      createFinding({
        path: [...prefix, ...problem.path],
        rule: problem.rule,
        detail: problem.detail,
        position: noPosition,
        fileName,
      }),
    );
    return { value: cloned.value, readable: cloned.readable, findings, locate: nowhere };
  }

  const bytes = utf8Length(input, limits.maxBytes);
  if (bytes > limits.maxBytes) {
    const detail = `the document is larger than ${limits.maxBytes} bytes; split it or remove unused content`;
    const finding = createFinding({
      path: prefix,
      rule: SpecRule.documentTooLarge,
      detail,
      position: noPosition,
      fileName,
    });
    return { value: undefined, readable: false, findings: [finding], locate: nowhere };
  }

  // Parse to concrete syntax once: the depth check walks it, then the same tokens are composed.
  const read = parseSyntax(input, limits.maxDepth);
  let { lineCounter, tokens } = read;
  let survey = surveySyntax(tokens, limits.maxDepth, maxComposedSyntaxErrors);
  if (read.cut && survey.tooDeep === null) {
    // A safety net: the parser nests every collection the lexer opens, so the part read shows it too deep.
    ({ lineCounter, tokens } = parseSyntax(input, Infinity));
    survey = surveySyntax(tokens, limits.maxDepth, maxComposedSyntaxErrors);
  }
  const deep = survey.tooDeep;
  if (deep !== null) {
    const detail = `maps and lists are nested more than ${limits.maxDepth} levels deep`;
    const finding = createFinding({
      path: prefix,
      rule: SpecRule.documentTooDeep,
      detail,
      position: positionOf(lineCounter, deep.offset),
      fileName,
    });
    return { value: undefined, readable: false, findings: [finding], locate: nowhere };
  }

  if (survey.errors.length > maxComposedSyntaxErrors) {
    const findings = survey.errors.slice(0, maxYamlFindings).map((error) =>
      createFinding({
        path: prefix,
        rule: SpecRule.yamlSyntax,
        detail: `YAML syntax error: ${error.message}`,
        position: positionOf(lineCounter, error.offset),
        fileName,
      }),
    );
    return { value: undefined, readable: false, findings, locate: nowhere };
  }

  const doc = composeSingleDocument(tokens.slice(0, survey.composeLength), input.length);
  const locate = locatorFor(doc, lineCounter);
  const findings: Finding[] = [];
  for (const error of doc.errors.slice(0, maxYamlFindings)) {
    findings.push(
      createFinding({
        path: prefix,
        rule: SpecRule.yamlSyntax,
        detail: `YAML syntax error: ${error.message}`,
        position: positionOf(lineCounter, error.pos[0]),
        fileName,
      }),
    );
  }
  for (const warning of doc.warnings.slice(0, maxYamlFindings)) {
    findings.push(
      createFinding({
        path: prefix,
        rule: SpecRule.yamlWarning,
        detail: `YAML warning: ${warning.message}`,
        position: positionOf(lineCounter, warning.pos[0]),
        severity: FindingSeverity.warning,
        fileName,
      }),
    );
  }
  for (const duplicate of duplicateKeys(doc, maxYamlFindings)) {
    const first = positionOf(lineCounter, duplicate.firstOffset);
    findings.push(
      createFinding({
        path: prefix,
        rule: SpecRule.yamlSyntax,
        detail: `YAML syntax error: Map keys must be unique; ${JSON.stringify(duplicate.key)} is already set on line ${first.line ?? '?'}`,
        position: positionOf(lineCounter, duplicate.offset),
        fileName,
      }),
    );
  }
  const collectionKey = firstCollectionKeyOffset(doc);
  if (collectionKey !== undefined) {
    findings.push(
      createFinding({
        path: prefix,
        rule: SpecRule.documentUnsupportedValue,
        detail: 'a map or list is used as a key; spec keys are plain names',
        position: positionOf(lineCounter, collectionKey),
        fileName,
      }),
    );
  }
  if (findings.some((finding) => finding.severity === FindingSeverity.error))
    return { value: undefined, readable: false, findings, locate };

  let plain: unknown;
  try {
    plain = doc.toJS({ maxAliasCount: limits.maxAliasCount });
  } catch (error) {
    const tooManyAliases = error instanceof ReferenceError;
    findings.push(
      createFinding({
        path: prefix,
        rule: tooManyAliases ? SpecRule.yamlAliases : SpecRule.documentUnreadable,
        detail: tooManyAliases
          ? `aliases expand to more than ${limits.maxAliasCount} copies; write the values out or use fewer aliases`
          : `the document could not be read: ${error instanceof Error ? error.message : String(error)}`,
        position: positionOf(lineCounter, tooManyAliases ? firstAliasOffset(doc) : 0),
        fileName,
      }),
    );
    return { value: undefined, readable: false, findings, locate };
  }

  const cloned = cloneWithinLimits(plain, limits);
  for (const problem of cloned.problems) {
    findings.push(
      createFinding({
        path: [...prefix, ...problem.path],
        rule: problem.rule,
        detail: problem.detail,
        position: locate(problem.path),
        fileName,
      }),
    );
  }
  return { value: cloned.value, readable: cloned.readable, findings, locate };
}
