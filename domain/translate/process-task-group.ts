/**
 * Task groups: one process of a canonical app spec as the task group of a scheduler job, on one target.
 */
import { metricsServiceName, processServiceName, STANDBY_TAG } from '../registry/index.js';
import type { CanonicalAppSpec, CanonicalProcess } from '../spec/index.js';
import { parseGoDuration, ProcessType } from '../spec/index.js';
import {
  milliseconds,
  seconds,
  type Duration,
  type PortSpec,
  type ServiceRegistrationSpec,
  type TaskGroupSpec,
  type TaskSpec,
} from '../scheduler/index.js';
import { missingVariablesCommand, schedulerVariableDelivery } from './scheduler-variable-files.js';
import { drainSignal } from './signals.js';
import type { TranslationInput, TranslationWarning } from './translation.js';
import { TranslationDefaults } from './translation-defaults.js';
import { allocationCount, type TranslationTarget } from './translation-target.js';

/** What a task group needs to know about its app, target and job. */
export interface TaskGroupContext {
  readonly spec: CanonicalAppSpec;
  readonly input: TranslationInput;
  readonly target: TranslationTarget;
  /** Id of the job the group belongs to (names its scheduler variable path). */
  readonly jobId: string;
  /** Source path of the job's scheduler variables. */
  readonly variablesPath: string;
  /** Environment of the declared infrastructure. */
  readonly infrastructureEnv: Readonly<Record<string, string>>;
  readonly warnings: TranslationWarning[];
}

/** A task group and the scheduler variable keys it lacks. */
export interface TranslatedGroup {
  readonly group: TaskGroupSpec;
  readonly missingVariables: readonly string[];
}

function duration(text: string): Duration {
  return milliseconds(parseGoDuration(text).milliseconds);
}

function counted(n: number, one: string, many: string): string {
  return `${n} ${n === 1 ? one : many}`;
}

function sortedRecord(record: Readonly<Record<string, string>>): Record<string, string> {
  const out: Record<string, string> = {};
  for (const key of Object.keys(record).sort()) out[key] = record[key]!;
  return out;
}

function isLongRunning(process: CanonicalProcess): boolean {
  return process.type === ProcessType.service || process.type === ProcessType.worker;
}

/**
 * The http port of a service process: static only for a hostPort. Every other process gets a port
 * of its own per allocation (`PORT`, `SVC_PORT_HTTP`), so a new allocation can start beside the one
 * it replaces; public endpoints reach it through the wake gateway, which follows the registry.
 */
function httpPort(process: CanonicalProcess): PortSpec | undefined {
  if (process.port === undefined || process.type !== ProcessType.service) return undefined;
  if (process.hostPort !== undefined) return { label: TranslationDefaults.httpPortLabel, static: process.hostPort };
  return { label: TranslationDefaults.httpPortLabel };
}

function portsAndServices(
  ctx: TaskGroupContext,
  name: string,
  process: CanonicalProcess,
): { ports: PortSpec[]; services: ServiceRegistrationSpec[] } {
  const at = `processes.${name}`;
  const ports: PortSpec[] = [];
  const services: ServiceRegistrationSpec[] = [];
  const metrics = process.metrics;
  if (!isLongRunning(process)) {
    if (metrics.enabled) {
      ctx.warnings.push({
        path: `${at}.metrics`,
        message: `${process.type} processes run to completion and are not registered as scrape targets; metrics are ignored`,
      });
    }
    return { ports, services };
  }
  const http = httpPort(process);
  const metricsTags = ['metrics', `metrics-path=${metrics.path}`];
  const ownMetricsPort = metrics.enabled && metrics.port !== undefined && metrics.port !== process.port;
  if (http !== undefined) {
    ports.push(http);
    const service: ServiceRegistrationSpec = { name: processServiceName(ctx.spec.name, name), portLabel: http.label };
    const tags = [
      ...(metrics.enabled && !ownMetricsPort ? metricsTags : []),
      ...(ctx.target.standby ? [STANDBY_TAG] : []),
    ];
    let check: ServiceRegistrationSpec['check'];
    if (process.health !== undefined) {
      if (process.health.path === undefined) {
        ctx.warnings.push({
          path: `${at}.health.path`,
          message: 'is not set; the service is registered without a health check',
        });
      } else {
        check = {
          path: process.health.path,
          interval: duration(process.health.interval),
          timeout: duration(process.health.timeout),
        };
      }
    }
    services.push({ ...service, ...(tags.length > 0 ? { tags } : {}), ...(check !== undefined ? { check } : {}) });
  } else if (metrics.enabled && !ownMetricsPort) {
    ctx.warnings.push({
      path: `${at}.metrics`,
      message: 'is enabled but the process has no port to scrape; set metrics.port',
    });
  }
  if (ownMetricsPort) {
    ports.push({ label: TranslationDefaults.metricsPortLabel });
    services.push({
      name: metricsServiceName(ctx.spec.name, name),
      portLabel: TranslationDefaults.metricsPortLabel,
      tags: metricsTags,
    });
  }
  return { ports, services };
}

function environment(
  ctx: TaskGroupContext,
  name: string,
  process: CanonicalProcess,
  variableEnv: Record<string, string> | undefined,
): Record<string, string> {
  const env: Record<string, string> = {
    ...ctx.input.release.env,
    ...ctx.spec.env,
    ...process.env,
    ...ctx.infrastructureEnv,
  };
  if (variableEnv === undefined) return sortedRecord({ ...env, ...(ctx.input.pipelineEnv ?? {}) });
  for (const [key, value] of Object.entries(variableEnv)) {
    if (process.env[key] !== undefined && process.env[key] !== value) {
      ctx.warnings.push({
        path: `processes.${name}.env.${key}`,
        message: `${JSON.stringify(process.env[key])} is replaced by ${JSON.stringify(value)}, where the scheduler variable file is rendered`,
      });
    }
  }
  // Pipeline-resolved values are withheld: this process gets its secrets only as files.
  return sortedRecord({ ...env, ...variableEnv });
}

/**
 * The task group of one process on one target: ports and registry services, drain, count and canary,
 * and the task (command, workdir or image, environment, resources, scheduler variable files, volumes,
 * function timeout).
 */
export function processTaskGroup(ctx: TaskGroupContext, name: string, process: CanonicalProcess): TranslatedGroup {
  const at = `processes.${name}`;
  const release = ctx.input.release;
  const { ports, services } = portsAndServices(ctx, name, process);
  const delivery =
    process.schedulerVariables === undefined
      ? undefined
      : schedulerVariableDelivery(process, ctx.input.schedulerVariables ?? {});
  const missing = delivery?.missing.map((entry) => entry.key) ?? [];
  for (const entry of delivery?.missing ?? []) {
    ctx.warnings.push({
      path: `${at}.schedulerVariables.files.${entry.index}.key`,
      message: `${entry.key} has no value at ${ctx.variablesPath}; ${entry.destination} is not rendered and the task of job ${ctx.jobId} fails until it is set`,
    });
  }
  const isFunction = process.type === ProcessType.function;
  const memoryMb =
    isFunction && process.function?.memory !== undefined ? process.function.memory : process.resources.memory;
  const command =
    missing.length > 0 ? missingVariablesCommand(missing, ctx.variablesPath) : (process.command ?? release.command);
  const variables = process.schedulerVariables;
  const user = variables !== undefined ? `${variables.uid}:${variables.gid}` : release.user;
  const task: TaskSpec = {
    name,
    ...(command !== undefined ? { command: typeof command === 'string' ? command : [...command] } : {}),
    ...(release.workdir !== undefined ? { workdir: release.workdir } : {}),
    ...(release.image !== undefined ? { image: release.image } : {}),
    ...(user !== undefined ? { user } : {}),
    env: environment(ctx, name, process, delivery?.env),
    resources: { cpuMhz: process.resources.cpu, memoryMb },
    ...(delivery !== undefined && delivery.files.length > 0 ? { files: delivery.files } : {}),
    ...(ctx.spec.volumes.length > 0
      ? {
          volumes: ctx.spec.volumes.map((volume) => ({
            volume: volume.name,
            destination: volume.mount,
            readOnly: volume.readOnly,
          })),
        }
      : {}),
    ...(isFunction
      ? {
          timeout:
            process.function?.timeout !== undefined
              ? duration(process.function.timeout)
              : TranslationDefaults.functionTimeout,
        }
      : {}),
  };
  const longRunning = isLongRunning(process);
  const count = longRunning ? allocationCount(process, ctx.target) : 1;
  const canary = longRunning ? process.canary?.count : undefined;
  const staticPort = ports.find((port) => port.static !== undefined);
  if (staticPort !== undefined && (count > 1 || (canary ?? 0) > 0)) {
    ctx.warnings.push({
      path: `${at}.${process.hostPort !== undefined ? 'hostPort' : 'port'}`,
      message: `static port ${staticPort.static} (hostPort) fits one allocation per node, but ${counted(count, 'allocation', 'allocations')}${canary ? ` and ${counted(canary, 'canary', 'canaries')}` : ''} are placed in ${ctx.target.name}`,
    });
  }
  const group: TaskGroupSpec = {
    name,
    count,
    task,
    ports,
    services,
    drain: {
      signal: drainSignal(process.drain.signal, `${at}.drain.signal`, ctx.warnings),
      timeout: process.drain.timeout !== undefined ? duration(process.drain.timeout) : TranslationDefaults.drainTimeout,
    },
    // A missing variable fails the allocation at the first exit instead of restarting it forever.
    ...(missing.length > 0
      ? { restart: { initialDelay: seconds(1), maxDelay: seconds(1), resetAfter: seconds(60), attempts: 0 } }
      : {}),
    ...(canary !== undefined ? { canary } : {}),
  };
  return { group, missingVariables: missing };
}
