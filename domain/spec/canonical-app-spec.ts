/**
 * The canonical app spec: an infraspec after canonicalization, with every documented default filled in and
 * the process types made explicit, so code downstream of validation reads one complete shape. Both the app
 * form and the legacy top-level function form canonicalize to it.
 *
 * The types derive from the generated schema types (schemas/types.generated.ts): fields with a documented
 * default become required, everything else keeps its generated type. A canonical spec is also a valid
 * {@link AppSpec} (checked by a type test).
 */
import type {
  AppSpec,
  Bucket,
  Build,
  DeployPolicy,
  Drain,
  Endpoint,
  Health,
  Infrastructure,
  LegacyFunction,
  Metrics,
  ObjectStorage,
  Process,
  RegionTarget,
  Repo,
  Resources,
  Scaling,
  SnapshotPolicy,
  TuningPolicy,
  Volume,
} from '../../schemas/types.generated.js';
import type { ProcessType } from './process-type.js';

/** `T` with the fields `K` made required and never undefined (their defaults are filled in). */
export type WithDefaults<T, K extends keyof T> = Omit<T, K> & { [P in K]-?: Exclude<T[P], undefined> };

/** Which document form a canonical spec came from. */
export const SpecForm = {
  /** An app spec with `name` and `processes`. */
  app: 'app',
  /** The legacy top-level function form (`app`, `role: function`, `function`). */
  legacyFunction: 'legacyFunction',
} as const;
export type SpecForm = (typeof SpecForm)[keyof typeof SpecForm];

/** Environment variables after canonicalization (always present, possibly empty). */
export type CanonicalEnvironment = Record<string, string>;

/** A region target with schedulerRegion (the region key), datacenters ([dc1]) and trafficWeight (100) filled. */
export type CanonicalRegionTarget = WithDefaults<RegionTarget, 'schedulerRegion' | 'datacenters' | 'trafficWeight'>;
/** A health check with interval (10s) and timeout (5s) filled. */
export type CanonicalHealth = WithDefaults<Health, 'interval' | 'timeout'>;
/** Metrics settings with enabled (false) and path (/metrics) filled. */
export type CanonicalMetrics = WithDefaults<Metrics, 'enabled' | 'path'>;
/** Scaling with min (1) filled. */
export type CanonicalScaling = WithDefaults<Scaling, 'min'>;
/** Drain settings with signal (SIGTERM) filled. */
export type CanonicalDrain = WithDefaults<Drain, 'signal'>;
/** Resources with cpu (100 MHz) and memory (128 MB) filled. */
export type CanonicalResources = WithDefaults<Resources, 'cpu' | 'memory'>;
/** A tuning policy with mode (advisory) filled. */
export type CanonicalTuningPolicy = WithDefaults<TuningPolicy, 'mode'>;

/** A process with its inferred type and every defaulted setting filled. */
export type CanonicalProcess = Omit<
  Process,
  'health' | 'metrics' | 'scaling' | 'drain' | 'resources' | 'tuning' | 'regions' | 'singleton' | 'env'
> & {
  /** What the process becomes on the scheduler, inferred from port, schedule and function. */
  type: ProcessType;
  /** Present only when the spec sets it (health applies to processes with a port). */
  health?: CanonicalHealth;
  metrics: CanonicalMetrics;
  scaling: CanonicalScaling;
  drain: CanonicalDrain;
  resources: CanonicalResources;
  tuning?: CanonicalTuningPolicy;
  /**
   * Regions the process runs in: the explicit list; else the primary region for periodic and singleton
   * processes; else every region of the app (sorted). Empty when the app declares no regions.
   */
  regions: string[];
  singleton: boolean;
  env: CanonicalEnvironment;
};

/** A bucket with access (readWrite), public (false) and env (derived from the name) filled. */
export type CanonicalBucket = WithDefaults<Bucket, 'access' | 'public' | 'env'>;
/** Object storage with its bucket list always present. */
export type CanonicalObjectStorage = Omit<ObjectStorage, 'buckets'> & { buckets: CanonicalBucket[] };
/** Infrastructure with canonical object storage. */
export type CanonicalInfrastructure = Omit<Infrastructure, 'objectStorage'> & {
  objectStorage?: CanonicalObjectStorage;
};
/** A repository with branch (main) and autoDeploy (false) filled. */
export type CanonicalRepo = WithDefaults<Repo, 'branch' | 'autoDeploy'>;
/** Build settings with dockerfile (Dockerfile) filled. */
export type CanonicalBuild = WithDefaults<Build, 'dockerfile'>;
/** A volume with readOnly (false) filled. */
export type CanonicalVolume = WithDefaults<Volume, 'readOnly'>;
/** A snapshot policy with keep (3), preRestore (false) and retentionEnabled (false) filled. */
export type CanonicalSnapshotPolicy = WithDefaults<SnapshotPolicy, 'keep' | 'preRestore' | 'retentionEnabled'>;
/** A deploy policy with autoRollback (true) filled. */
export type CanonicalDeployPolicy = WithDefaults<DeployPolicy, 'autoRollback'>;
/** The legacy function block with timeout (30 seconds), trigger (http) and memory (256m) filled. */
export type CanonicalLegacyFunction = WithDefaults<LegacyFunction, 'timeout' | 'trigger' | 'memory'>;

/** An app spec after canonicalization; see the module comment. */
export type CanonicalAppSpec = Omit<
  AppSpec,
  | 'deploy'
  | 'regions'
  | 'repo'
  | 'build'
  | 'processes'
  | 'services'
  | 'secrets'
  | 'env'
  | 'infrastructure'
  | 'endpoints'
  | 'volumes'
  | 'snapshots'
  | 'deployPolicy'
> & {
  /** Which document form the spec was written in. */
  form: SpecForm;
  deploy: boolean;
  /** Regions keyed by name; empty for the local single-target default. */
  regions: Record<string, CanonicalRegionTarget>;
  /** The primary region (the first region name in lexical order unless set); absent when there are no regions. */
  primaryRegion?: string;
  repo?: CanonicalRepo;
  build: CanonicalBuild;
  processes: Record<string, CanonicalProcess>;
  services: string[];
  secrets: string[];
  env: CanonicalEnvironment;
  infrastructure?: CanonicalInfrastructure;
  endpoints: Endpoint[];
  volumes: CanonicalVolume[];
  snapshots: CanonicalSnapshotPolicy;
  deployPolicy: CanonicalDeployPolicy;
  /** The filled legacy function block; present only for the legacy function form. */
  legacyFunction?: CanonicalLegacyFunction;
};
