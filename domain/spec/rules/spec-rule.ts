/**
 * Rule ids of spec validation: the stable names findings carry, so callers, tests and docs can refer to
 * one broken rule without parsing messages. Schema violations use `schema.<ajv keyword>`
 * (`schema.type`, `schema.required`, `schema.additionalProperties`, ...).
 */

/** Rule ids of the document-level, semantic and cross-document checks. */
export const SpecRule = {
  /** The YAML text does not parse. */
  yamlSyntax: 'yaml.syntax',
  /** The YAML parser accepted the text but noted something suspicious (a warning). */
  yamlWarning: 'yaml.warning',
  /** The YAML text expands aliases beyond the allowed count (an alias bomb). */
  yamlAliases: 'yaml.aliases',
  /** The document is larger than the validation limit. */
  documentTooLarge: 'document.too_large',
  /** The document nests deeper than the validation limit. */
  documentTooDeep: 'document.too_deep',
  /** The document holds a value no spec can contain (binary data, a JavaScript Map, a Date...). */
  documentUnsupportedValue: 'document.unsupported_value',
  /** The document could not be read (for example a getter threw). */
  documentUnreadable: 'document.unreadable',
  /** Validation stopped on an unexpected internal error; the document is treated as invalid. */
  validatorInternal: 'validator.internal',
  /** Too many findings; the rest were dropped. */
  findingsTruncated: 'findings.truncated',

  /** A process sets fields of more than one process type (schedule with port or function, function with port). */
  processType: 'process.type',
  /** A multi-region spec with scheduled or singleton processes has no primaryRegion. */
  primaryRegionRequired: 'primaryRegion.required',
  /** primaryRegion names a region the spec does not declare. */
  primaryRegionKnown: 'primaryRegion.known',
  /** The only region of the spec has a trafficWeight strictly between 0 and 100: there is no other region for the rest. */
  trafficWeightSingleRegion: 'trafficWeight.singleRegion',
  /** A process lists a region the spec does not declare. */
  processRegionKnown: 'process.regionKnown',
  /** hostPort is combined with more than one allocation per region. */
  hostPortMultipleAllocations: 'hostPort.multipleAllocations',
  /** hostPort is set: a new allocation cannot start beside the old one, so each change has a gap (a warning). */
  hostPortNoOverlap: 'hostPort.noOverlap',
  /** hostPort is set on a process without a port. */
  hostPortRequiresPort: 'hostPort.requiresPort',
  /** health is set on a process without a port. */
  healthRequiresPort: 'health.requiresPort',
  /** An autoscaler following kafka_lag names no topic. */
  autoscaleKafkaTopic: 'autoscale.kafkaTopic',
  /** An autoscaler following a custom metric names no metric. */
  autoscaleCustomName: 'autoscale.customName',
  /** scaling.auto follows a metric the process or the platform has no source for (custom without a metrics endpoint). */
  autoscaleMetricSource: 'autoscale.metricSource',
  /** scaling.auto follows gateway requests on a process the wake gateway does not serve. */
  autoscaleRequestMetric: 'autoscale.requestMetric',
  /** scaling.auto on a scheduled or function process. */
  autoscaleLongRunning: 'autoscale.longRunning',
  /** scaling.auto without room above min, or scaling.max above min without scaling.auto (a warning). */
  autoscaleRange: 'autoscale.range',
  /** scaling.max is below scaling.min. */
  scalingRange: 'scaling.range',
  /** infrastructure.postgres.database is not a 1-63 character portable identifier. */
  postgresDatabaseName: 'postgres.databaseName',
  /** A bucket name is not DNS-compatible. */
  bucketDnsName: 'bucket.dnsName',
  /** placement.nodePool is not a DNS label. */
  placementNodePoolDns: 'placement.nodePoolDns',
  /** placement.nodePool is not a node pool of the supplied fleet document. */
  placementNodePoolExists: 'placement.nodePoolExists',
  /** schedulerVariables.uid is not a positive Unix identity. */
  schedulerVariablesUid: 'schedulerVariables.uid',
  /** schedulerVariables.gid is not a positive Unix identity. */
  schedulerVariablesGid: 'schedulerVariables.gid',
  /** A scheduler variable key is not an uppercase variable name. */
  schedulerVariablesKey: 'schedulerVariables.key',
  /** A scheduler variable destination is not exactly one safe filename. */
  schedulerVariablesDestination: 'schedulerVariables.destination',
  /** A duration field is not a non-negative Go duration. */
  durationGo: 'duration.go',
  /** A schedule is not a cron expression. */
  scheduleCron: 'schedule.cron',
  /** A schedule's time zone is not a known IANA zone (an error), or is set without a schedule (a warning). */
  scheduleTimeZone: 'schedule.timezone',
  /** An endpoint url written as an http(s) URL: routed as its hostname (a warning), or with an impossible port (an error). */
  endpointUrl: 'endpoint.url',
  /** A volume name is not a plain name (a path, `..`, odd characters). */
  volumeName: 'volume.name',
  /** A volume mount path escapes (`..`), is not normalized, is `/` or lies in /proc, /sys or /dev. */
  volumeMount: 'volume.mount',
  /** tuning.mode auto is reserved and behaves as advisory (a warning). */
  tuningModeReserved: 'tuning.modeReserved',

  /** regions.<r>.trafficWeight is set but the active driver does not split traffic between regions (a warning). */
  driverTrafficWeight: 'driver.trafficWeight',
  /** endpoints[].region is set but the active driver does not route a hostname to one region (a warning). */
  driverEndpointRegion: 'driver.endpointRegion',
  /** placement.nodePool is set on the local driver, whose one host is the only node (a warning). */
  driverNodePool: 'driver.nodePool',
  /** A field the active driver refuses at deploy (the swarm driver: volumes, cron and function processes; a warning). */
  driverUnsupported: 'driver.unsupported',
  /** A field that has no effect where it is written: legacy, reserved, or a setting of a feature that is off (a warning). */
  fieldInert: 'field.inert',

  /** A deploy group lists the same app twice. */
  deployGroupDuplicateApp: 'deployGroup.duplicateApp',
  /** A deploy group lists an app that is not known. */
  deployGroupAppExists: 'deployGroup.appExists',
  /** A fleet document declares the same node pool twice. */
  fleetDuplicateNodePool: 'fleet.duplicateNodePool',
} as const;
export type SpecRule = (typeof SpecRule)[keyof typeof SpecRule];

/** The rule id of a JSON Schema violation: `schema.<keyword>`. */
export function schemaRule(keyword: string): string {
  return `schema.${keyword}`;
}
