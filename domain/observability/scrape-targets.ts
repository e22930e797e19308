/**
 * Scrape targets: which registry service carries the metrics of each process that enables them,
 * and the live instances of those services as metrics store targets.
 */
import {
  HealthStatus,
  instanceStatus,
  metricsServiceName,
  processServiceName,
  type ServiceInstance,
} from '../registry/index.js';
import { ProcessType, type CanonicalAppSpec } from '../spec/index.js';
import { instanceTarget, type ScrapeAddressing } from './scrape-addressing.js';

/** A process whose spec sets `metrics.enabled: true` and that can be scraped. */
export interface MetricsProcess {
  readonly app: string;
  readonly process: string;
  /** Registry service whose instances serve the metrics. */
  readonly service: string;
  readonly metricsPath: string;
}

/** The targets of one process: every live instance, sorted. */
export interface ScrapeTargetGroup {
  readonly app: string;
  readonly process: string;
  readonly metricsPath: string;
  readonly targets: readonly string[];
}

/**
 * The processes of `spec` that are scrape targets, by name. Only long-running processes (services,
 * workers) qualify, as in the translation: a separate `metrics.port` registers the companion service
 * `<app>-<process>-metrics`; otherwise the process's own service serves `metrics.path` on its port.
 */
export function metricsProcesses(spec: CanonicalAppSpec): MetricsProcess[] {
  const out: MetricsProcess[] = [];
  for (const [name, process] of Object.entries(spec.processes).sort(([a], [b]) => a.localeCompare(b))) {
    const metrics = process.metrics;
    if (!metrics.enabled) continue;
    if (process.type !== ProcessType.service && process.type !== ProcessType.worker) continue;
    const ownPort = metrics.port !== undefined && metrics.port !== process.port;
    if (ownPort)
      out.push({
        app: spec.name,
        process: name,
        service: metricsServiceName(spec.name, name),
        metricsPath: metrics.path,
      });
    else if (process.type === ProcessType.service && process.port !== undefined) {
      out.push({
        app: spec.name,
        process: name,
        service: processServiceName(spec.name, name),
        metricsPath: metrics.path,
      });
    }
  }
  return out;
}

/** True for an instance the metrics store should scrape: registered and not failing its checks. */
export function isLiveInstance(instance: ServiceInstance): boolean {
  return instanceStatus(instance) !== HealthStatus.critical;
}

/**
 * The target groups of `processes`: each process with at least one live instance in `instances`
 * (keyed by registry service), its loopback addresses rewritten for the metrics store. Processes
 * without a live instance are left out.
 */
export function scrapeTargetGroups(
  processes: readonly MetricsProcess[],
  instances: ReadonlyMap<string, readonly ServiceInstance[]>,
  addressing: ScrapeAddressing,
): ScrapeTargetGroup[] {
  const groups: ScrapeTargetGroup[] = [];
  for (const process of processes) {
    const live = (instances.get(process.service) ?? []).filter(isLiveInstance);
    const targets = [...new Set(live.map((i) => instanceTarget(addressing, i.address, i.port)))].sort();
    if (targets.length > 0)
      groups.push({ app: process.app, process: process.process, metricsPath: process.metricsPath, targets });
  }
  return groups.sort((a, b) => a.app.localeCompare(b.app) || a.process.localeCompare(b.process));
}
