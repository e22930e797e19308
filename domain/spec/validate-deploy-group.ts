/**
 * Validation of deploy group files (deploy-groups/*.yaml): apps deployed together, in order, each optionally
 * waiting for the previous one to be ready.
 */
import type { DeployGroup } from '../../schemas/types.generated.js';
import { checkDocument, finishFindings, internalFailure, type CheckDocumentOptions } from './check-document.js';
import type { Finding } from './finding.js';
import type { RawFinding } from './raw-finding.js';
import { deployGroupSchemaValidator } from './schema-violations.js';
import { SpecRule } from './rules/spec-rule.js';
import { isRecord } from './raw-fields.js';

/** One app of a canonical deploy group, waitReady filled (default false). */
export interface CanonicalDeployGroupApp {
  readonly app: string;
  readonly waitReady: boolean;
}

/** A deploy group after canonicalization. */
export interface CanonicalDeployGroup {
  readonly name: string;
  readonly apps: readonly CanonicalDeployGroupApp[];
}

/** Options of {@link validateDeployGroup}. */
export interface ValidateDeployGroupOptions extends CheckDocumentOptions {
  /** Names of the known apps; when given, every listed app must be one of them. */
  readonly knownApps?: Iterable<string> | undefined;
}

/** Result of validating a deploy group file. */
export interface DeployGroupValidation {
  readonly valid: boolean;
  readonly findings: Finding[];
  /** The canonical deploy group, present when valid. */
  readonly group?: CanonicalDeployGroup;
}

function groupRules(value: unknown, knownApps: ReadonlySet<string> | undefined): RawFinding[] {
  if (!isRecord(value) || !Array.isArray(value.apps)) return [];
  const out: RawFinding[] = [];
  const seen = new Map<string, number>();
  value.apps.forEach((entry: unknown, index) => {
    if (!isRecord(entry) || typeof entry.app !== 'string') return;
    const first = seen.get(entry.app);
    if (first !== undefined) {
      out.push({
        path: ['apps', index, 'app'],
        rule: SpecRule.deployGroupDuplicateApp,
        detail: `${JSON.stringify(entry.app)} is already listed at apps[${first}]; an app is deployed once per group`,
      });
      return;
    }
    seen.set(entry.app, index);
    if (knownApps !== undefined && !knownApps.has(entry.app)) {
      out.push({
        path: ['apps', index, 'app'],
        rule: SpecRule.deployGroupAppExists,
        detail: `${JSON.stringify(entry.app)} is not a known app`,
      });
    }
  });
  return out;
}

/** Fills the defaults of a schema-valid deploy group. */
export function canonicalizeDeployGroup(group: DeployGroup): CanonicalDeployGroup {
  return {
    name: group.name,
    apps: group.apps.map((entry) => ({ app: entry.app, waitReady: entry.waitReady ?? false })),
  };
}

/**
 * Validates a deploy group file (YAML text or an already-parsed value) against
 * schemas/deploy-group.schema.json, rejects duplicate apps and, with `knownApps`, unknown ones. Never throws.
 */
export function validateDeployGroup(input: unknown, options: ValidateDeployGroupOptions = {}): DeployGroupValidation {
  try {
    const known = options.knownApps === undefined ? undefined : new Set(options.knownApps);
    const check = checkDocument(input, deployGroupSchemaValidator, (value) => groupRules(value, known), options);
    const findings = finishFindings(check.findings, check.unplaced);
    return check.valid
      ? { valid: true, findings, group: canonicalizeDeployGroup(check.value as DeployGroup) }
      : { valid: false, findings };
  } catch (error) {
    return { valid: false, findings: [internalFailure(error, options.fileName)] };
  }
}
