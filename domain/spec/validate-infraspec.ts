/**
 * Validation of infraspec.yaml documents: read with positions, check schemas/infraspec.schema.json, apply
 * the semantic rules, and canonicalize a valid spec. This is the one entry point for the
 * `POST /api/v1/validate/infraspec` route, the app discovery controller and the CLI.
 */
import type { InfraSpec } from '../../schemas/types.generated.js';
import type { CanonicalAppSpec } from './canonical-app-spec.js';
import { canonicalizeInfraspec } from './canonicalize.js';
import { checkDocument, finishFindings, internalFailure } from './check-document.js';
import { hasNoErrors, type Finding } from './finding.js';
import type { DocumentLimits } from './yaml/parse-yaml-document.js';
import { infraspecSchemaValidator } from './schema-violations.js';
import { checkDriverRules, SchedulerDriver } from './rules/driver-rules.js';
import { checkInertFields } from './rules/inert-field-rules.js';
import { checkSemanticRules, type SemanticRuleContext } from './rules/semantic-rules.js';
import { validateFleetDocument } from './validate-fleet-document.js';

/** Options of {@link validateInfraspec}. */
export interface ValidateInfraspecOptions {
  /**
   * A fleet document (YAML text or an already-parsed value). When given, placement.nodePool must name one
   * of its node pools, and its own problems are reported under the path `fleetDocument`.
   */
  readonly fleetDocument?: unknown;
  /** Name of the spec's source, shown in messages (for example `apps/web/infraspec.yaml`). */
  readonly fileName?: string | undefined;
  /** Name of the fleet document's source, shown in its findings' messages. */
  readonly fleetFileName?: string | undefined;
  /**
   * The scheduler driver the spec is meant for: fields it does not honour are warned about (ADR 0197).
   * @default local
   */
  readonly driver?: SchedulerDriver | undefined;
  /**
   * Whether the control plane reads Kafka consumer lag (SVC_KAFKA_EXPORTER_URL): false refuses
   * `kafka_lag`; undefined (offline validation) does not judge it.
   */
  readonly kafkaLagSource?: boolean | undefined;
  /** Overrides of the reading limits (1 MiB, 64 levels, 100 aliases, 200000 values). */
  readonly limits?: Partial<DocumentLimits> | undefined;
}

/** Result of validating an infraspec. */
export interface InfraspecValidation {
  /** True when no finding is an error. */
  readonly valid: boolean;
  /** Every problem found: the spec's ordered by position, then the fleet document's. */
  readonly findings: Finding[];
  /** The canonical spec, present when valid. */
  readonly spec?: CanonicalAppSpec;
}

/**
 * Validates an infraspec: YAML text, or an already-parsed value (then findings have no line and column).
 * Never throws, whatever the input: every problem, including an internal failure, is a finding.
 */
export function validateInfraspec(input: unknown, options: ValidateInfraspecOptions = {}): InfraspecValidation {
  try {
    let fleetFindings: Finding[] = [];
    let context: SemanticRuleContext = {};
    if (options.fleetDocument !== undefined) {
      const fleet = validateFleetDocument(options.fleetDocument, {
        fileName: options.fleetFileName,
        pathPrefix: ['fleetDocument'],
        limits: options.limits,
      });
      fleetFindings = fleet.findings;
      context = { fleetNodePools: fleet.nodePools, fleetName: fleet.fleetName };
    }
    if (options.kafkaLagSource !== undefined) context = { ...context, kafkaLagSource: options.kafkaLagSource };
    const driver = options.driver ?? SchedulerDriver.local;
    const rules = (value: unknown) => [
      ...checkSemanticRules(value, context),
      ...checkInertFields(value),
      ...checkDriverRules(value, driver),
    ];
    const check = checkDocument(input, infraspecSchemaValidator, rules, {
      fileName: options.fileName,
      limits: options.limits,
    });
    // Spec findings first (ordered by position in the spec), then the fleet document's own.
    const finished = [...finishFindings(check.findings, check.unplaced), ...fleetFindings];
    if (!check.valid || !hasNoErrors(finished)) return { valid: false, findings: finished };
    return { valid: true, findings: finished, spec: canonicalizeInfraspec(check.value as InfraSpec) };
  } catch (error) {
    return { valid: false, findings: [internalFailure(error, options.fileName)] };
  }
}
