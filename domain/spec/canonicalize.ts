/**
 * Canonicalization: turning a schema-valid infraspec into a {@link CanonicalAppSpec} by filling every
 * documented default and making process types explicit. The legacy top-level function form becomes an app
 * with one function process, so downstream code sees one shape.
 */
import type { AppSpec, InfraSpec, LegacyFunctionSpec, Process } from '../../schemas/types.generated.js';
import type {
  CanonicalAppSpec,
  CanonicalBucket,
  CanonicalInfrastructure,
  CanonicalLegacyFunction,
  CanonicalProcess,
  CanonicalRegionTarget,
} from './canonical-app-spec.js';
import { SpecForm } from './canonical-app-spec.js';
import { endpointHostname } from './endpoint-url.js';
import { secondsToGoDuration } from './go-duration.js';
import { canonicalTimeZone } from './time-zone.js';
import { inferProcessType, ProcessType } from './process-type.js';

/** The documented defaults of the app spec, in one place. */
export const InfraspecDefaults = {
  deploy: false,
  datacenters: ['dc1'],
  trafficWeight: 100,
  healthInterval: '10s',
  healthTimeout: '5s',
  metricsEnabled: false,
  metricsPath: '/metrics',
  scalingMin: 1,
  drainSignal: 'SIGTERM',
  cpu: 100,
  memory: 128,
  tuningMode: 'advisory',
  singleton: false,
  repoBranch: 'main',
  repoAutoDeploy: false,
  dockerfile: 'Dockerfile',
  bucketAccess: 'readWrite',
  bucketPublic: false,
  volumeReadOnly: false,
  snapshotKeep: 3,
  snapshotPreRestore: false,
  snapshotRetentionEnabled: false,
  autoRollback: true,
  legacyFunctionTimeoutSeconds: 30,
  legacyFunctionTrigger: 'http',
  legacyFunctionMemory: '256m',
} as const;

/** Name of the single process a legacy function spec canonicalizes to. */
export const legacyFunctionProcessName = 'function';

/** The S3_BUCKET_<ENV> alias derived from a bucket name: uppercase, other characters as "_". */
export function bucketEnvAlias(bucketName: string): string {
  return bucketName.toUpperCase().replace(/[^A-Z0-9]/g, '_');
}

/** Converts a legacy memory size (`256m`, `1g`, `512k`) to whole megabytes, rounding up. */
export function legacyMemoryToMegabytes(size: string): number {
  const match = /^([1-9][0-9]*)([kmgKMG])$/.exec(size);
  if (match === null) throw new RangeError(`${JSON.stringify(size)} is not a memory size such as 256m`);
  const amount = Number(match[1]);
  const unit = match[2]!.toLowerCase();
  return unit === 'g' ? amount * 1024 : unit === 'k' ? Math.ceil(amount / 1024) : amount;
}

function isLegacyFunctionSpec(spec: InfraSpec): spec is LegacyFunctionSpec {
  return (spec as Partial<LegacyFunctionSpec>).role !== undefined;
}

function canonicalEnv(env: Record<string, string | undefined> | undefined): Record<string, string> {
  const out: Record<string, string> = {};
  for (const [key, value] of Object.entries(env ?? {})) if (value !== undefined) out[key] = value;
  return out;
}

function processRegions(
  process: Process,
  type: ProcessType,
  regionNames: readonly string[],
  primaryRegion: string | undefined,
): string[] {
  if (process.regions !== undefined) return [...process.regions];
  if (regionNames.length === 0 || primaryRegion === undefined) return [];
  if (type === ProcessType.periodic || process.singleton === true) return [primaryRegion];
  return [...regionNames];
}

function canonicalProcess(
  process: Process,
  regionNames: readonly string[],
  primaryRegion: string | undefined,
): CanonicalProcess {
  const type = inferProcessType(process);
  const { health, metrics, scaling, drain, resources, tuning, regions: _regions, singleton, env, ...rest } = process;
  const out: CanonicalProcess = {
    ...rest,
    type,
    metrics: {
      ...metrics,
      enabled: metrics?.enabled ?? InfraspecDefaults.metricsEnabled,
      path: metrics?.path ?? InfraspecDefaults.metricsPath,
    },
    scaling: { ...scaling, min: scaling?.min ?? InfraspecDefaults.scalingMin },
    drain: { ...drain, signal: drain?.signal ?? InfraspecDefaults.drainSignal },
    resources: { cpu: resources?.cpu ?? InfraspecDefaults.cpu, memory: resources?.memory ?? InfraspecDefaults.memory },
    regions: processRegions(process, type, regionNames, primaryRegion),
    singleton: singleton ?? InfraspecDefaults.singleton,
    env: canonicalEnv(env),
  };
  if (health !== undefined) {
    out.health = {
      ...health,
      interval: health.interval ?? InfraspecDefaults.healthInterval,
      timeout: health.timeout ?? InfraspecDefaults.healthTimeout,
    };
  }
  if (tuning !== undefined) out.tuning = { ...tuning, mode: tuning.mode ?? InfraspecDefaults.tuningMode };
  // The runtime's spelling of the zone: what croner and the kubernetes CronJob expect.
  if (out.timezone !== undefined) out.timezone = canonicalTimeZone(out.timezone) ?? out.timezone;
  return out;
}

function canonicalInfrastructure(infrastructure: AppSpec['infrastructure']): CanonicalInfrastructure | undefined {
  if (infrastructure === undefined) return undefined;
  const { objectStorage, ...rest } = infrastructure;
  if (objectStorage === undefined) return { ...rest };
  const buckets = (objectStorage.buckets ?? []).map((bucket): CanonicalBucket => ({
    ...bucket,
    access: bucket.access ?? InfraspecDefaults.bucketAccess,
    public: bucket.public ?? InfraspecDefaults.bucketPublic,
    env: bucket.env ?? bucketEnvAlias(bucket.name),
  }));
  return { ...rest, objectStorage: { ...objectStorage, buckets } };
}

function canonicalApp(spec: AppSpec): CanonicalAppSpec {
  const regionNames = Object.keys(spec.regions ?? {}).sort();
  const primaryRegion = spec.primaryRegion ?? regionNames[0];
  const regions: Record<string, CanonicalRegionTarget> = {};
  for (const name of regionNames) {
    const target = spec.regions?.[name] ?? {};
    regions[name] = {
      ...target,
      schedulerRegion: target.schedulerRegion ?? name,
      datacenters: [...(target.datacenters ?? InfraspecDefaults.datacenters)],
      trafficWeight: target.trafficWeight ?? InfraspecDefaults.trafficWeight,
    };
  }
  const processes: Record<string, CanonicalProcess> = {};
  for (const [name, process] of Object.entries(spec.processes)) {
    if (process !== undefined) processes[name] = canonicalProcess(process, regionNames, primaryRegion);
  }
  const { repo, build, snapshots, deployPolicy, infrastructure, ...rest } = spec;
  const out: CanonicalAppSpec = {
    ...rest,
    form: SpecForm.app,
    deploy: spec.deploy ?? InfraspecDefaults.deploy,
    regions,
    build: { ...build, dockerfile: build?.dockerfile ?? InfraspecDefaults.dockerfile },
    processes,
    services: [...(spec.services ?? [])],
    secrets: [...(spec.secrets ?? [])],
    env: canonicalEnv(spec.env),
    // A URL copied from elsewhere routes its hostname (ADR 0016).
    endpoints: (spec.endpoints ?? []).map((endpoint) => ({ ...endpoint, url: endpointHostname(endpoint.url) })),
    volumes: (spec.volumes ?? []).map((volume) => ({
      ...volume,
      readOnly: volume.readOnly ?? InfraspecDefaults.volumeReadOnly,
    })),
    snapshots: {
      ...snapshots,
      keep: snapshots?.keep ?? InfraspecDefaults.snapshotKeep,
      preRestore: snapshots?.preRestore ?? InfraspecDefaults.snapshotPreRestore,
      retentionEnabled: snapshots?.retentionEnabled ?? InfraspecDefaults.snapshotRetentionEnabled,
    },
    deployPolicy: { ...deployPolicy, autoRollback: deployPolicy?.autoRollback ?? InfraspecDefaults.autoRollback },
  };
  if (primaryRegion !== undefined) out.primaryRegion = primaryRegion;
  else delete out.primaryRegion;
  if (repo !== undefined) {
    out.repo = {
      ...repo,
      branch: repo.branch ?? InfraspecDefaults.repoBranch,
      autoDeploy: repo.autoDeploy ?? InfraspecDefaults.repoAutoDeploy,
    };
  }
  const canonicalInfra = canonicalInfrastructure(infrastructure);
  if (canonicalInfra !== undefined) out.infrastructure = canonicalInfra;
  return out;
}

function canonicalLegacyFunction(spec: LegacyFunctionSpec): CanonicalAppSpec {
  const legacyFunction: CanonicalLegacyFunction = {
    timeout: spec.function?.timeout ?? InfraspecDefaults.legacyFunctionTimeoutSeconds,
    trigger: spec.function?.trigger ?? InfraspecDefaults.legacyFunctionTrigger,
    memory: spec.function?.memory ?? InfraspecDefaults.legacyFunctionMemory,
  };
  const app = canonicalApp({
    name: spec.app,
    ...(spec.build !== undefined ? { build: spec.build } : {}),
    processes: {
      [legacyFunctionProcessName]: {
        function: {
          timeout: secondsToGoDuration(legacyFunction.timeout),
          memory: legacyMemoryToMegabytes(legacyFunction.memory),
        },
      },
    },
  });
  return { ...app, form: SpecForm.legacyFunction, legacyFunction };
}

/**
 * Fills every documented default of a schema-valid infraspec (validate first: the input is trusted to
 * match schemas/infraspec.schema.json). Returns a new object; the input is not changed.
 */
export function canonicalizeInfraspec(spec: InfraSpec): CanonicalAppSpec {
  const copy = structuredClone(spec);
  return isLegacyFunctionSpec(copy) ? canonicalLegacyFunction(copy) : canonicalApp(copy);
}
