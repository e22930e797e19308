/* eslint-disable */
/**
 * GENERATED FILE - DO NOT EDIT.
 *
 * TypeScript types of the spec documents, generated from schemas/infraspec.schema.json,
 * schemas/deploy-group.schema.json and schemas/fleet.schema.json by scripts/generate-schema-types.ts.
 * Change a schema, then run `npm run schemas:types` and commit the result
 * (test/schemas/types-fresh.test.ts fails while this file is stale).
 */

/**
 * An infraspec.yaml document: an app spec, or (when it has a role key) the legacy top-level function form.
 */
export type InfraSpec = AppSpec | LegacyFunctionSpec;
/**
 * A Go duration string: a sequence of decimal numbers with a unit (ns, us, µs, ms, s, m, h), for example 300ms, 10s or 1h30m.
 */
export type GoDuration = string;

/**
 * An app spec (infraspec.yaml): one application hosted by the platform, its processes and the infrastructure they need.
 */
export interface AppSpec {
  /**
   * App identifier; used as scheduler job id and registry service prefix.
   */
  name: string;
  /**
   * Must be true for deploy and recovery workflows to include the app.
   */
  deploy?: boolean;
  /**
   * Regions the app runs in, keyed by region name (each maps to a scheduler target). Omit for the local single-target default.
   */
  regions?: {
    [k: string]: RegionTarget | undefined;
  };
  /**
   * Region that runs scheduled and singleton processes. Required when a multi-region spec has scheduled or singleton processes; otherwise the first region name in lexical order.
   */
  primaryRegion?: string;
  /**
   * Git repository the app is built from.
   */
  repo?: Repo;
  /**
   * How the app image is built.
   */
  build?: Build;
  /**
   * The processes of the app; each key is the process name, its type is inferred from the fields set (port: service, schedule: periodic job, function: function, none: worker).
   */
  processes: {
    [k: string]: Process | undefined;
  };
  /**
   * Legacy service list.
   */
  services?: string[];
  /**
   * Expected secret key names.
   */
  secrets?: string[];
  /**
   * Path to the migrations directory, relative to the repo root.
   */
  migrations?: string;
  /**
   * Static environment variables for every process of the app.
   */
  env?: EnvironmentMap;
  /**
   * Backing services the app uses (database, cache, queues, object storage).
   */
  infrastructure?: Infrastructure;
  /**
   * Public hostnames of the app; each maps to a tunnel ingress rule. When endpoints are declared the scheduler uses static ports.
   */
  endpoints?: Endpoint[];
  /**
   * Scheduler host volumes mounted into the containers.
   */
  volumes?: Volume[];
  /**
   * Relational database snapshot policy.
   */
  snapshots?: SnapshotPolicy;
  /**
   * Deploy behaviour; when absent, autoRollback is true.
   */
  deployPolicy?: DeployPolicy;
  /**
   * Logical node pool for all processes.
   */
  placement?: Placement;
}
/**
 * Scheduler target of one region.
 */
export interface RegionTarget {
  /**
   * Scheduler region name; defaults to the region map key.
   */
  schedulerRegion?: string;
  /**
   * Datacenters of the scheduler region.
   *
   * @minItems 1
   */
  datacenters?: string[];
  /**
   * Traffic weight, activated only after regional readiness passes; 0 is a ready standby.
   */
  trafficWeight?: number;
}
/**
 * Git repository of the app.
 */
export interface Repo {
  /**
   * Git clone URL.
   */
  url: string;
  /**
   * Branch that is deployed.
   */
  branch?: string;
  /**
   * Deploy on push webhook.
   */
  autoDeploy?: boolean;
  /**
   * Web URL of the repository for UI links.
   */
  repoWeb?: string;
}
/**
 * How the app image is built.
 */
export interface Build {
  /**
   * Dockerfile path relative to the repo root.
   */
  dockerfile?: string;
  /**
   * Test command; failure fails the pipeline.
   */
  test?: string;
  /**
   * Externally published image; production requires an immutable image@sha256:<digest> whose signature is bound to the resolved commit.
   */
  image?: string;
}
/**
 * One process of the app. Its type is inferred from the fields set: port makes a service, schedule a periodic batch job, function an on-demand batch job; none of them makes a worker (a long-running service without a port).
 */
export interface Process {
  /**
   * Container port; makes it a service process.
   */
  port?: number;
  /**
   * Optional fixed host port for platform ingress; incompatible with multiple allocations in a region.
   */
  hostPort?: number;
  /**
   * Overrides the container command.
   */
  command?: string;
  /**
   * Cron expression; makes it a periodic batch job.
   */
  schedule?: string;
  /**
   * IANA time zone the schedule is read in, e.g. Europe/Paris or America/New_York (UTC by default). Only for processes with a schedule.
   */
  timezone?: string;
  /**
   * Makes it a batch job that runs only when invoked.
   */
  function?: FunctionSpec;
  /**
   * HTTP health check; only for processes with a port.
   */
  health?: Health;
  /**
   * Metrics scraping.
   */
  metrics?: Metrics;
  /**
   * Allocation counts and autoscaling.
   */
  scaling?: Scaling;
  /**
   * How allocations are stopped.
   */
  drain?: Drain;
  /**
   * Reserved resources; cpu 100 MHz and memory 128 MB by default.
   */
  resources?: Resources;
  /**
   * Advisory resource tuning.
   */
  tuning?: TuningPolicy;
  /**
   * Canary allocations started before promotion.
   */
  canary?: Canary;
  /**
   * Explicit placement constraint (region names); all regions by default, scheduled and singleton processes default to the primary region.
   */
  regions?: string[];
  /**
   * Pins unscheduled singleton work to the primary region unless regions is explicit.
   */
  singleton?: boolean;
  /**
   * Job-owned scheduler variable files; values are delivered only as private files, never as environment or command arguments.
   */
  schedulerVariables?: SchedulerVariables;
  /**
   * Process-level environment (used in the variable-file usage pattern).
   */
  env?: EnvironmentMap;
}
/**
 * On-demand function settings of a process (process form).
 */
export interface FunctionSpec {
  /**
   * Maximum execution time (Go duration).
   */
  timeout?: GoDuration;
  /**
   * Memory in MB; overrides resources.memory for the batch job.
   */
  memory?: number;
}
/**
 * HTTP health check of a process with a port.
 */
export interface Health {
  /**
   * HTTP path probed for health.
   */
  path?: string;
  /**
   * Time between checks (Go duration).
   */
  interval?: GoDuration;
  /**
   * Time a check may take (Go duration).
   */
  timeout?: GoDuration;
}
/**
 * Metrics scraping of a process.
 */
export interface Metrics {
  /**
   * Registers the process as a scrape target.
   */
  enabled?: boolean;
  /**
   * HTTP path serving metrics.
   */
  path?: string;
  /**
   * Metrics port; the process port by default. When set, mapped as an internal dynamic port and a companion registry service named <app>-<process>-metrics is registered.
   */
  port?: number;
}
/**
 * Allocation counts of a process.
 */
export interface Scaling {
  /**
   * Minimum allocation count.
   */
  min?: number;
  /**
   * Maximum allocation count.
   */
  max?: number;
  /**
   * Allocation count per region; overrides min for regional translation.
   */
  per_region?: number;
  /**
   * Autoscaling policy.
   */
  auto?: AutoScale;
}
/**
 * Autoscaling policy: the metric to follow and its target value.
 */
export interface AutoScale {
  /**
   * Metric followed by the autoscaler: cpu (percent of one core per allocation), memory (percent of resources.memory per allocation), requests_in_flight and requests_per_second (per allocation, as the wake gateway sees them), kafka_lag (the consumer lag of topic, summed over its partitions, from the Kafka exporter SVC_KAFKA_EXPORTER_URL names) and custom (the metric name names, read from each allocation's metrics endpoint).
   */
  metric: "cpu" | "memory" | "requests_in_flight" | "requests_per_second" | "kafka_lag" | "custom";
  /**
   * Target value of the metric per allocation; the autoscaler keeps the average near it.
   */
  target: number;
  /**
   * Kafka topic whose consumer lag is followed; required when metric is kafka_lag.
   */
  topic?: string;
  /**
   * Consumer group whose lag on topic is followed (kafka_lag only); by default the one group the exporter reports for the topic.
   */
  group?: string;
  /**
   * Name of the metric the process exposes on its metrics endpoint (custom only; required there). The value per allocation is the sum of its series that carry labels.
   */
  name?: string;
  /**
   * Label values a series of name must carry to count (custom only).
   */
  labels?: {
    [k: string]: string | undefined;
  };
}
/**
 * How allocations of a process are stopped.
 */
export interface Drain {
  /**
   * Signal sent to stop the process.
   */
  signal?: string;
  /**
   * Wait after the signal before the process is killed (Go duration).
   */
  timeout?: GoDuration;
}
/**
 * Resources reserved for each allocation.
 */
export interface Resources {
  /**
   * CPU in MHz.
   */
  cpu?: number;
  /**
   * Memory in MB.
   */
  memory?: number;
}
/**
 * Advisory resource tuning policy.
 */
export interface TuningPolicy {
  /**
   * advisory reports only; auto is reserved for future guarded application.
   */
  mode?: "advisory" | "auto";
  /**
   * Minimum interval between automated changes once auto exists (Go duration).
   */
  cooldown?: GoDuration;
  /**
   * Named resource profiles.
   */
  profiles?: {
    [k: string]: TuningProfile | undefined;
  };
  /**
   * Bounds for recommendations.
   */
  limits?: TuningLimits;
  /**
   * Signals the tuner reads; built-in live scheduler signals by default.
   */
  signals?: TuningSignal[];
}
/**
 * A resource profile: cpu (MHz), memory (MB) and allocation count.
 */
export interface TuningProfile {
  /**
   * CPU in MHz.
   */
  cpu?: number;
  /**
   * Memory in MB.
   */
  memory?: number;
  /**
   * Allocation count.
   */
  scale?: number;
}
/**
 * Lower and upper bounds for tuning recommendations.
 */
export interface TuningLimits {
  /**
   * Lower bounds.
   */
  min?: TuningProfile | undefined;
  /**
   * Upper bounds.
   */
  max?: TuningProfile | undefined;
}
/**
 * One signal read by the tuner.
 */
export interface TuningSignal {
  /**
   * Signal name.
   */
  name: string;
  /**
   * Where the signal comes from: nomad (scheduler-native), prometheus (metrics store) or app.
   */
  source: "nomad" | "prometheus" | "app";
  /**
   * Metric name, for example memory_rss, memory_max, cpu_percent.
   */
  metric: string;
  /**
   * Aggregation window (Go duration).
   */
  window?: GoDuration;
  /**
   * Aggregation over the window.
   */
  aggregate?: "current" | "max" | "p95";
}
/**
 * Canary allocations started before promotion.
 */
export interface Canary {
  /**
   * Canary allocations to start before promotion.
   */
  count?: number;
  /**
   * Duration before canary health evaluation, for example 2m (Go duration).
   */
  evaluateAfter?: GoDuration;
}
/**
 * Job-owned scheduler variable files, written to secrets/<destination> (mode 0400) in the allocation.
 */
export interface SchedulerVariables {
  /**
   * Unix user id owning the files; a positive integer.
   */
  uid: number;
  /**
   * Unix group id owning the files; a positive integer.
   */
  gid: number;
  /**
   * Variables to deliver as files.
   */
  files?: SchedulerVariableFile[];
}
/**
 * One scheduler variable delivered as a private file.
 */
export interface SchedulerVariableFile {
  /**
   * Uppercase variable name.
   */
  key: string;
  /**
   * Exactly one safe filename under the allocation secrets directory (no slash, no traversal, not absolute).
   */
  destination: string;
}
/**
 * Environment variables: names to string values.
 */
export interface EnvironmentMap {
  [k: string]: string | undefined;
}
/**
 * Backing services the app uses.
 */
export interface Infrastructure {
  /**
   * Relational database.
   */
  postgres?: PostgresInfrastructure;
  /**
   * Key-value cache.
   */
  redis?: RedisInfrastructure;
  /**
   * Kafka topics.
   */
  kafka?: KafkaInfrastructure;
  /**
   * NATS streams.
   */
  nats?: NatsInfrastructure;
  /**
   * S3-compatible object storage.
   */
  objectStorage?: ObjectStorage;
}
/**
 * Relational database of the app.
 */
export interface PostgresInfrastructure {
  /**
   * Database for snapshots, migrations and the connection setting; a 1-63 character portable identifier.
   */
  database: string;
}
/**
 * Key-value cache of the app.
 */
export interface RedisInfrastructure {
  /**
   * Key namespace.
   */
  namespace?: string;
}
/**
 * Kafka topics of the app.
 */
export interface KafkaInfrastructure {
  /**
   * Topic names.
   */
  topics?: string[];
}
/**
 * NATS streams of the app.
 */
export interface NatsInfrastructure {
  /**
   * Stream names.
   */
  streams?: string[];
}
/**
 * S3-compatible object storage of the app.
 */
export interface ObjectStorage {
  /**
   * Provider hint; defaults to a self-hosted S3-compatible store.
   */
  provider?: string;
  /**
   * Buckets the app uses.
   */
  buckets?: Bucket[];
}
/**
 * One object storage bucket.
 */
export interface Bucket {
  /**
   * DNS-compatible bucket name: 3-63 lowercase letters, digits, "-" and ".", starting and ending with a letter or digit.
   */
  name: string;
  /**
   * Access granted to the app.
   */
  access?: "readOnly" | "readWrite" | "owner";
  /**
   * Reserved.
   */
  public?: boolean;
  /**
   * Optional key prefix exposed to the app.
   */
  prefix?: string;
  /**
   * Alias used in S3_BUCKET_<ENV>; derived from the bucket name by default.
   */
  env?: string;
}
/**
 * A public hostname of the app.
 */
export interface Endpoint {
  /**
   * External hostname; maps to a tunnel ingress rule. An http or https URL of a hostname without a path (https://app.example.com, also with a port) is accepted and routed as its hostname, with a warning.
   */
  url: string;
  /**
   * Optional region hint.
   */
  region?: string;
}
/**
 * A scheduler host volume mounted into the container.
 */
export interface Volume {
  /**
   * Scheduler host volume name.
   */
  name: string;
  /**
   * Mount path in the container.
   */
  mount: string;
  /**
   * Mount read-only.
   */
  readOnly?: boolean;
}
/**
 * Relational database snapshot policy.
 */
export interface SnapshotPolicy {
  /**
   * Snapshots kept by retention.
   */
  keep?: number;
  /**
   * Safety snapshot before restore when the request does not override.
   */
  preRestore?: boolean;
  /**
   * Reserved.
   */
  retentionEnabled?: boolean;
  /**
   * S3-compatible bucket for export, remote listing and import.
   */
  exportBucket?: string;
}
/**
 * Deploy behaviour.
 */
export interface DeployPolicy {
  /**
   * Roll back automatically when a deploy fails.
   */
  autoRollback?: boolean;
}
/**
 * Logical node pool shared by all processes of the app.
 */
export interface Placement {
  /**
   * DNS-compatible node pool name, passed as the job-level node pool. When a fleet document is supplied to validation, the pool must exist in it.
   */
  nodePool?: string;
}
/**
 * Legacy top-level function form: a document with role "function" that describes one on-demand HTTP function.
 */
export interface LegacyFunctionSpec {
  /**
   * App identifier of the function.
   */
  app: string;
  /**
   * Marks the legacy function form; the only value is "function".
   */
  role: "function";
  /**
   * How the function image is built.
   */
  build?: Build;
  /**
   * Function settings.
   */
  function?: LegacyFunction;
}
/**
 * Settings of a legacy top-level function.
 */
export interface LegacyFunction {
  /**
   * Maximum execution time in seconds.
   */
  timeout?: number;
  /**
   * How the function is invoked; only http is supported.
   */
  trigger?: "http";
  /**
   * Memory limit with a unit suffix k, m or g (for example 256m).
   */
  memory?: string;
}

/**
 * A deploy group file (deploy-groups/*.yaml): apps deployed together in order; each app deploy creates its own saga and operation row.
 */
export interface DeployGroup {
  /**
   * Deploy group name.
   */
  name: string;
  /**
   * Apps deployed by the group, in order.
   *
   * @minItems 1
   */
  apps: DeployGroupApp[];
}
/**
 * One app of a deploy group.
 */
export interface DeployGroupApp {
  /**
   * App identifier (the name of its infraspec.yaml).
   */
  app: string;
  /**
   * Keeps later apps from starting until this app is healthy.
   */
  waitReady?: boolean;
}

/**
 * A fleet document: the node pools an environment offers; app placement.nodePool must name one of them.
 */
export interface FleetDocument {
  /**
   * Version of the fleet document format, for example svc.dev/v1.
   */
  apiVersion: string;
  /**
   * Document kind; always Fleet.
   */
  kind: "Fleet";
  /**
   * Identity of the fleet.
   */
  metadata: FleetMetadata;
  /**
   * Logical node pools of the fleet.
   */
  nodePools: NodePool[];
}
/**
 * Identity of a fleet.
 */
export interface FleetMetadata {
  /**
   * Fleet name.
   */
  name: string;
  /**
   * Environment the fleet serves, for example production.
   */
  environment?: string;
}
/**
 * A logical node pool; apps select it with placement.nodePool.
 */
export interface NodePool {
  /**
   * DNS-compatible node pool name: 1-63 lowercase letters, digits and "-", starting and ending with a letter or digit.
   */
  name: string;
  /**
   * What the pool is for.
   */
  description?: string;
  /**
   * Datacenters whose nodes belong to the pool.
   */
  datacenters?: string[];
}
