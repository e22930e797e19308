/**
 * Semantic rules of an app spec: the rules JSON Schema cannot say (or says without a helpful message),
 * each reported under its own rule id (see {@link SpecRule}).
 *
 * The rules run best-effort on any document, also one that breaks the schema: each rule looks only at
 * fields of the expected type and leaves wrongly typed fields to the schema findings.
 */
import { CronPattern } from 'croner';
import { describeValue, FindingSeverity, type PathSegment } from '../finding.js';
import { parseEndpointUrl } from '../endpoint-url.js';
import { tryParseGoDuration } from '../go-duration.js';
import { isKnownTimeZone } from '../time-zone.js';
import {
  bucketNameProblem,
  dnsLabelProblem,
  postgresDatabaseNameProblem,
  safeFilenameProblem,
  variableKeyProblem,
  volumeMountProblem,
  volumeNameProblem,
} from './name-rules.js';
import { LocateTarget } from '../yaml/yaml-locator.js';
import { conflictingProcessTypeFields, inferProcessType } from '../process-type.js';
import type { RawFinding } from '../raw-finding.js';
import { SpecRule } from './spec-rule.js';
import { checkAutoscaling } from './autoscale-rules.js';
import { type Fields, isInteger, isRecord, recordAt } from '../raw-fields.js';

/** What semantic rules know beyond the spec itself. */
export interface SemanticRuleContext {
  /** Node pools of the supplied fleet document; undefined when no fleet document was supplied. */
  readonly fleetNodePools?: ReadonlySet<string> | undefined;
  /** Name of the supplied fleet document, for messages. */
  readonly fleetName?: string | undefined;
  /** False when the control plane has no Kafka exporter to read lag from; undefined when not known (offline). */
  readonly kafkaLagSource?: boolean | undefined;
}

function list(names: readonly string[]): string {
  return names.length === 0 ? 'none' : names.join(', ');
}

/** Duration fields of a process, relative to the process. */
function durationFields(process: Fields): Array<{ path: PathSegment[]; value: unknown }> {
  const fields: Array<{ path: PathSegment[]; value: unknown }> = [];
  const add = (parent: string, field: string): void => {
    const owner = recordAt(process, parent);
    if (owner !== undefined && owner[field] !== undefined) fields.push({ path: [parent, field], value: owner[field] });
  };
  add('health', 'interval');
  add('health', 'timeout');
  add('drain', 'timeout');
  add('canary', 'evaluateAfter');
  add('function', 'timeout');
  add('tuning', 'cooldown');
  const signals = recordAt(process, 'tuning')?.signals;
  if (Array.isArray(signals)) {
    signals.forEach((signal: unknown, index) => {
      if (isRecord(signal) && signal.window !== undefined)
        fields.push({ path: ['tuning', 'signals', index, 'window'], value: signal.window });
    });
  }
  return fields;
}

function checkDurations(at: PathSegment[], process: Fields, out: RawFinding[]): void {
  for (const field of durationFields(process)) {
    if (typeof field.value !== 'string') continue;
    const parsed = tryParseGoDuration(field.value);
    const path = [...at, ...field.path];
    if (!parsed.ok) {
      out.push({
        path,
        rule: SpecRule.durationGo,
        detail: `${describeValue(field.value)} is not a Go duration: ${parsed.reason}`,
      });
    } else if (parsed.value.nanoseconds < 0n) {
      out.push({
        path,
        rule: SpecRule.durationGo,
        detail: `${describeValue(field.value)} is negative; durations here must be zero or more`,
      });
    }
  }
}

function checkSchedulerVariables(at: PathSegment[], variables: Fields, out: RawFinding[]): void {
  for (const [field, rule, what] of [
    ['uid', SpecRule.schedulerVariablesUid, 'user'],
    ['gid', SpecRule.schedulerVariablesGid, 'group'],
  ] as const) {
    const id = variables[field];
    if (isInteger(id) && id <= 0) {
      out.push({
        path: [...at, field],
        rule,
        detail: `${id} is not a positive Unix ${what} id; ${field === 'uid' && id === 0 ? 'root (0) is not allowed' : 'use a positive integer'}`,
      });
    }
  }
  const files = variables.files;
  if (!Array.isArray(files)) return;
  files.forEach((file: unknown, index) => {
    if (!isRecord(file)) return;
    if (typeof file.key === 'string') {
      const problem = variableKeyProblem(file.key);
      if (problem !== undefined)
        out.push({ path: [...at, 'files', index, 'key'], rule: SpecRule.schedulerVariablesKey, detail: problem });
    }
    if (typeof file.destination === 'string') {
      const problem = safeFilenameProblem(file.destination);
      if (problem !== undefined)
        out.push({
          path: [...at, 'files', index, 'destination'],
          rule: SpecRule.schedulerVariablesDestination,
          detail: problem,
        });
    }
  });
}

function checkHostPort(at: PathSegment[], process: Fields, out: RawFinding[]): void {
  if (process.hostPort === undefined) return;
  if (process.port === undefined) {
    out.push({
      path: [...at, 'hostPort'],
      rule: SpecRule.hostPortRequiresPort,
      detail: 'a fixed host port needs a port to map to; set port or remove hostPort',
    });
    return;
  }
  const scaling = recordAt(process, 'scaling');
  const canary = recordAt(process, 'canary');
  const reasons: string[] = [];
  if (isInteger(scaling?.min) && scaling.min > 1) reasons.push(`scaling.min is ${scaling.min}`);
  if (isInteger(scaling?.max) && scaling.max > 1) reasons.push(`scaling.max is ${scaling.max}`);
  if (isInteger(scaling?.per_region) && scaling.per_region > 1)
    reasons.push(`scaling.per_region is ${scaling.per_region}`);
  if (isInteger(canary?.count) && canary.count > 0) reasons.push(`canary.count is ${canary.count}`);
  if (reasons.length > 0) {
    out.push({
      path: [...at, 'hostPort'],
      rule: SpecRule.hostPortMultipleAllocations,
      detail: `a fixed host port allows only one allocation per region, but ${reasons.join(' and ')}`,
    });
    return;
  }
  out.push({
    path: [...at, 'hostPort'],
    rule: SpecRule.hostPortNoOverlap,
    severity: FindingSeverity.warning,
    detail: `a fixed host port cannot be held by two processes: every deploy, spec change or rollback stops the old process before the new one starts, so requests to port ${describeValue(process.hostPort)} fail for that gap; without hostPort the new process starts beside the old one and no request is dropped`,
  });
}

function checkScaling(at: PathSegment[], process: Fields, out: RawFinding[]): void {
  const scaling = recordAt(process, 'scaling');
  if (scaling === undefined) return;
  if (isInteger(scaling.min) && isInteger(scaling.max) && scaling.max < scaling.min) {
    out.push({
      path: [...at, 'scaling', 'max'],
      rule: SpecRule.scalingRange,
      detail: `${scaling.max} is below scaling.min (${scaling.min})`,
    });
  }
  const auto = recordAt(scaling, 'auto');
  if (auto?.metric === 'kafka_lag' && auto.topic === undefined) {
    out.push({
      path: [...at, 'scaling', 'auto', 'topic'],
      rule: SpecRule.autoscaleKafkaTopic,
      detail: 'is required when scaling.auto.metric is kafka_lag (name the topic whose consumer lag is followed)',
    });
  }
}

function checkProcess(name: string, process: Fields, regionNames: readonly string[], out: RawFinding[]): void {
  const at: PathSegment[] = ['processes', name];
  const conflicts = conflictingProcessTypeFields(process);
  if (conflicts.length > 0) {
    out.push({
      path: at,
      rule: SpecRule.processType,
      detail: `sets ${conflicts.join(' and ')} together; a process is either a service (port), a periodic job (schedule) or a function (function)`,
      target: LocateTarget.key,
    });
  }
  if (process.health !== undefined && process.port === undefined) {
    out.push({
      path: [...at, 'health'],
      rule: SpecRule.healthRequiresPort,
      detail: `health checks need a port, and this ${inferProcessType(process)} process has none; set port or remove health`,
      target: LocateTarget.key,
    });
  }
  checkHostPort(at, process, out);
  checkScaling(at, process, out);
  if (typeof process.schedule === 'string') {
    try {
      new CronPattern(process.schedule);
    } catch (error) {
      const reason = error instanceof Error ? error.message.replace(/^CronPattern: /, '') : 'invalid';
      out.push({
        path: [...at, 'schedule'],
        rule: SpecRule.scheduleCron,
        detail: `${describeValue(process.schedule)} is not a cron expression: ${reason}`,
      });
    }
  }
  checkTimeZone(at, process, out);
  if (Array.isArray(process.regions)) {
    process.regions.forEach((region: unknown, index) => {
      if (typeof region === 'string' && !regionNames.includes(region)) {
        const known = regionNames.length === 0 ? 'the app declares no regions' : `regions: ${list(regionNames)}`;
        out.push({
          path: [...at, 'regions', index],
          rule: SpecRule.processRegionKnown,
          detail: `${describeValue(region)} is not a region of this app (${known})`,
        });
      }
    });
  }
  const variables = recordAt(process, 'schedulerVariables');
  if (variables !== undefined) checkSchedulerVariables([...at, 'schedulerVariables'], variables, out);
  if (recordAt(process, 'tuning')?.mode === 'auto') {
    out.push({
      path: [...at, 'tuning', 'mode'],
      rule: SpecRule.tuningModeReserved,
      detail: '"auto" is reserved for future guarded application; tuning stays advisory (reports only)',
      severity: FindingSeverity.warning,
    });
  }
  checkDurations(at, process, out);
}

function checkRegions(
  spec: Fields,
  processes: ReadonlyArray<[string, Fields]>,
  regionNames: readonly string[],
  out: RawFinding[],
): void {
  const primary = spec.primaryRegion;
  if (typeof primary === 'string') {
    if (!regionNames.includes(primary)) {
      const known = regionNames.length === 0 ? 'the app declares no regions' : `regions: ${list(regionNames)}`;
      out.push({
        path: ['primaryRegion'],
        rule: SpecRule.primaryRegionKnown,
        detail: `${describeValue(primary)} is not a region of this app (${known})`,
      });
    }
    return;
  }
  if (primary !== undefined || regionNames.length <= 1) return;
  const pinned = processes
    .filter(([, process]) => process.schedule !== undefined || process.singleton === true)
    .map(([name]) => name);
  if (pinned.length === 0) return;
  out.push({
    path: ['primaryRegion'],
    rule: SpecRule.primaryRegionRequired,
    detail: `is required because the spec declares ${regionNames.length} regions (${list(regionNames)}) and scheduled or singleton processes (${list(pinned)}) that run in the primary region only`,
    at: ['regions'],
    target: LocateTarget.key,
  });
}

/**
 * A weight strictly between 0 and 100 on the only region asks to send part of the traffic elsewhere, and
 * there is nowhere else: refused. 0 (a ready standby) and 100 (all traffic) mean what they say.
 */
function checkSingleRegionWeight(spec: Fields, out: RawFinding[]): void {
  if (!isRecord(spec.regions)) return;
  const entries = Object.entries(spec.regions);
  if (entries.length !== 1) return;
  const [region, target] = entries[0]!;
  if (!isRecord(target) || typeof target.trafficWeight !== 'number') return;
  const weight = target.trafficWeight;
  if (weight <= 0 || weight >= 100) return;
  out.push({
    path: ['regions', region, 'trafficWeight'],
    rule: SpecRule.trafficWeightSingleRegion,
    detail: `${describeValue(weight)} sends part of the traffic to other regions, and ${describeValue(region)} is the only region; use 100 (all traffic), 0 (a ready standby: deployed and health-checked, sent no traffic), or declare the other regions`,
  });
}

function checkInfrastructure(spec: Fields, out: RawFinding[]): void {
  const infrastructure = recordAt(spec, 'infrastructure');
  const database = recordAt(infrastructure, 'postgres')?.database;
  if (typeof database === 'string') {
    const problem = postgresDatabaseNameProblem(database);
    if (problem !== undefined)
      out.push({
        path: ['infrastructure', 'postgres', 'database'],
        rule: SpecRule.postgresDatabaseName,
        detail: problem,
      });
  }
  const buckets = recordAt(infrastructure, 'objectStorage')?.buckets;
  if (!Array.isArray(buckets)) return;
  buckets.forEach((bucket: unknown, index) => {
    if (!isRecord(bucket) || typeof bucket.name !== 'string') return;
    const problem = bucketNameProblem(bucket.name);
    if (problem !== undefined) {
      out.push({
        path: ['infrastructure', 'objectStorage', 'buckets', index, 'name'],
        rule: SpecRule.bucketDnsName,
        detail: problem,
      });
    }
  });
}

function checkVolumes(spec: Fields, out: RawFinding[]): void {
  if (!Array.isArray(spec.volumes)) return;
  spec.volumes.forEach((volume: unknown, index) => {
    if (!isRecord(volume)) return;
    const name = typeof volume.name === 'string' ? volumeNameProblem(volume.name) : undefined;
    if (name !== undefined) out.push({ path: ['volumes', index, 'name'], rule: SpecRule.volumeName, detail: name });
    const mount = typeof volume.mount === 'string' ? volumeMountProblem(volume.mount) : undefined;
    if (mount !== undefined) out.push({ path: ['volumes', index, 'mount'], rule: SpecRule.volumeMount, detail: mount });
  });
}

function checkPlacement(spec: Fields, context: SemanticRuleContext, out: RawFinding[]): void {
  const nodePool = recordAt(spec, 'placement')?.nodePool;
  if (typeof nodePool !== 'string') return;
  const problem = dnsLabelProblem(nodePool);
  if (problem !== undefined) {
    out.push({ path: ['placement', 'nodePool'], rule: SpecRule.placementNodePoolDns, detail: problem });
    return;
  }
  const pools = context.fleetNodePools;
  if (pools !== undefined && !pools.has(nodePool)) {
    const fleet = context.fleetName !== undefined ? `fleet ${JSON.stringify(context.fleetName)}` : 'the fleet document';
    out.push({
      path: ['placement', 'nodePool'],
      rule: SpecRule.placementNodePoolExists,
      detail: `${describeValue(nodePool)} is not a node pool of ${fleet} (node pools: ${list([...pools].sort())})`,
    });
  }
}

/**
 * Runs every semantic rule on an app spec and returns what breaks them. The legacy top-level function
 * form (a document with `role`) has no semantic rules beyond its schema.
 */
function checkTimeZone(at: PathSegment[], process: Fields, out: RawFinding[]): void {
  if (typeof process.timezone !== 'string' || process.timezone === '') return;
  const path = [...at, 'timezone'];
  if (!isKnownTimeZone(process.timezone)) {
    out.push({
      path,
      rule: SpecRule.scheduleTimeZone,
      detail: `${describeValue(process.timezone)} is not an IANA time zone known to this host; use a name such as Europe/Paris, America/New_York or UTC`,
    });
  } else if (process.schedule === undefined) {
    out.push({
      path,
      rule: SpecRule.scheduleTimeZone,
      detail: 'has no effect: the process has no schedule',
      severity: FindingSeverity.warning,
    });
  }
}

/** Endpoint URLs copied with a scheme (and a port): accepted as their hostname, with a warning. */
function checkEndpoints(spec: Fields, out: RawFinding[]): void {
  if (!Array.isArray(spec.endpoints)) return;
  spec.endpoints.forEach((endpoint: unknown, index) => {
    if (!isRecord(endpoint) || typeof endpoint.url !== 'string') return;
    const url = parseEndpointUrl(endpoint.url);
    if (url === undefined) return;
    const path = ['endpoints', index, 'url'];
    if (url.port !== undefined && (url.port < 1 || url.port > 65535)) {
      out.push({
        path,
        rule: SpecRule.endpointUrl,
        detail: `${describeValue(endpoint.url)} has port ${url.port}, which is not a port number (1-65535)`,
      });
      return;
    }
    const dropped =
      url.port === undefined
        ? `the scheme ${url.scheme} is dropped`
        : `the scheme ${url.scheme} and the port ${url.port} are dropped: the edge tunnel and the wake gateway route by hostname on their own ports`;
    out.push({
      path,
      rule: SpecRule.endpointUrl,
      detail: `${describeValue(endpoint.url)} is a URL; it is routed as the hostname ${url.hostname} (${dropped}); write url: ${url.hostname}`,
      severity: FindingSeverity.warning,
    });
  });
}

export function checkSemanticRules(spec: unknown, context: SemanticRuleContext = {}): RawFinding[] {
  if (!isRecord(spec) || spec.role !== undefined) return [];
  const out: RawFinding[] = [];
  const regionNames = isRecord(spec.regions) ? Object.keys(spec.regions).sort() : [];
  const processes = isRecord(spec.processes)
    ? Object.entries(spec.processes).filter((entry): entry is [string, Fields] => isRecord(entry[1]))
    : [];
  for (const [name, process] of processes) checkProcess(name, process, regionNames, out);
  checkAutoscaling(spec, processes, out, { kafkaLagSource: context.kafkaLagSource });
  checkRegions(spec, processes, regionNames, out);
  checkSingleRegionWeight(spec, out);
  checkInfrastructure(spec, out);
  checkEndpoints(spec, out);
  checkVolumes(spec, out);
  checkPlacement(spec, context, out);
  return out;
}
