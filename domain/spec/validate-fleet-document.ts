/**
 * Validation of fleet documents: the node pools an environment offers, against which app placement is checked.
 */
import type { FleetDocument } from '../../schemas/types.generated.js';
import { checkDocument, finishFindings, internalFailure, type CheckDocumentOptions } from './check-document.js';
import type { Finding } from './finding.js';
import type { RawFinding } from './raw-finding.js';
import { fleetSchemaValidator } from './schema-violations.js';
import { SpecRule } from './rules/spec-rule.js';
import { isRecord } from './raw-fields.js';

/** Options of {@link validateFleetDocument}. */
export type ValidateFleetDocumentOptions = CheckDocumentOptions;

/** Result of validating a fleet document. */
export interface FleetDocumentValidation {
  readonly valid: boolean;
  readonly findings: Finding[];
  /** The fleet document, present when valid. */
  readonly fleet?: FleetDocument;
  /** Names of the node pools found, also when the document is invalid (best effort; empty when unreadable). */
  readonly nodePools: ReadonlySet<string>;
  /** metadata.name when it is a string. */
  readonly fleetName?: string;
}

function nodePoolEntries(value: unknown): Array<{ index: number; name: string }> {
  if (!isRecord(value) || !Array.isArray(value.nodePools)) return [];
  const out: Array<{ index: number; name: string }> = [];
  value.nodePools.forEach((pool: unknown, index) => {
    if (isRecord(pool) && typeof pool.name === 'string') out.push({ index, name: pool.name });
  });
  return out;
}

function fleetRules(value: unknown): RawFinding[] {
  const seen = new Map<string, number>();
  const out: RawFinding[] = [];
  for (const { index, name } of nodePoolEntries(value)) {
    const first = seen.get(name);
    if (first === undefined) seen.set(name, index);
    else {
      out.push({
        path: ['nodePools', index, 'name'],
        rule: SpecRule.fleetDuplicateNodePool,
        detail: `${JSON.stringify(name)} is already declared by nodePools[${first}]`,
      });
    }
  }
  return out;
}

/**
 * Validates a fleet document (YAML text or an already-parsed value) against schemas/fleet.schema.json and
 * checks that node pool names are unique. Never throws.
 */
export function validateFleetDocument(
  input: unknown,
  options: ValidateFleetDocumentOptions = {},
): FleetDocumentValidation {
  try {
    const check = checkDocument(input, fleetSchemaValidator, fleetRules, options);
    const nodePools = new Set(nodePoolEntries(check.value).map((entry) => entry.name));
    const metadata = isRecord(check.value) ? check.value.metadata : undefined;
    const fleetName = isRecord(metadata) && typeof metadata.name === 'string' ? metadata.name : undefined;
    return {
      valid: check.valid,
      findings: finishFindings(check.findings, check.unplaced),
      nodePools,
      ...(fleetName !== undefined ? { fleetName } : {}),
      ...(check.valid ? { fleet: check.value as FleetDocument } : {}),
    };
  } catch (error) {
    return { valid: false, findings: [internalFailure(error, options.fileName)], nodePools: new Set() };
  }
}
