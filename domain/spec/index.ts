/**
 * App spec documents (infraspec.yaml, deploy groups, fleet documents): reading with positions, validation
 * against the JSON Schemas and the semantic rules, and canonicalization.
 */
export type {
  CanonicalAppSpec,
  CanonicalBucket,
  CanonicalBuild,
  CanonicalDeployPolicy,
  CanonicalDrain,
  CanonicalEnvironment,
  CanonicalHealth,
  CanonicalInfrastructure,
  CanonicalLegacyFunction,
  CanonicalMetrics,
  CanonicalObjectStorage,
  CanonicalProcess,
  CanonicalRegionTarget,
  CanonicalRepo,
  CanonicalResources,
  CanonicalScaling,
  CanonicalSnapshotPolicy,
  CanonicalTuningPolicy,
  CanonicalVolume,
  WithDefaults,
} from './canonical-app-spec.js';
export { SpecForm } from './canonical-app-spec.js';
export {
  bucketEnvAlias,
  canonicalizeInfraspec,
  InfraspecDefaults,
  legacyFunctionProcessName,
  legacyMemoryToMegabytes,
} from './canonicalize.js';
export { checkDriverRules, isSchedulerDriver, SchedulerDriver } from './rules/driver-rules.js';
export { maxFindingsPerDocument } from './check-document.js';
export type { EndpointUrl } from './endpoint-url.js';
export { endpointHostname, parseEndpointUrl } from './endpoint-url.js';
export type { Finding, PathSegment, SourcePosition } from './finding.js';
export { FindingSeverity, formatPath, hasNoErrors } from './finding.js';
export type { GoDurationParse, GoDurationValue } from './go-duration.js';
export { parseGoDuration, secondsToGoDuration, tryParseGoDuration } from './go-duration.js';
export type { DocumentLimits, ParsedYamlDocument, ParseYamlDocumentOptions } from './yaml/parse-yaml-document.js';
export { defaultDocumentLimits, parseYamlDocument } from './yaml/parse-yaml-document.js';
export type { Locate } from './yaml/yaml-locator.js';
export { LocateTarget } from './yaml/yaml-locator.js';
export type { ProcessTypeFields } from './process-type.js';
export { conflictingProcessTypeFields, inferProcessType, ProcessType } from './process-type.js';
export { schemaRule, SpecRule } from './rules/spec-rule.js';
export { SPEC_SCHEMAS } from './spec-schemas.js';
export { canonicalTimeZone, isKnownTimeZone } from './time-zone.js';
export type {
  CanonicalDeployGroup,
  CanonicalDeployGroupApp,
  DeployGroupValidation,
  ValidateDeployGroupOptions,
} from './validate-deploy-group.js';
export { canonicalizeDeployGroup, validateDeployGroup } from './validate-deploy-group.js';
export type { FleetDocumentValidation, ValidateFleetDocumentOptions } from './validate-fleet-document.js';
export { validateFleetDocument } from './validate-fleet-document.js';
export type { InfraspecValidation, ValidateInfraspecOptions } from './validate-infraspec.js';
export { validateInfraspec } from './validate-infraspec.js';
