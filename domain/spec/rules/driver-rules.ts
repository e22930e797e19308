/**
 * Driver rules: spec fields that validate everywhere but that the active scheduler driver cannot honour.
 * Each is a warning that names the field, says why and what to do (ADR 0197, docs/drivers.md), so a
 * field is never silently ignored.
 */
import { describeValue, FindingSeverity, type PathSegment } from '../finding.js';
import type { RawFinding } from '../raw-finding.js';
import { SpecRule } from './spec-rule.js';
import { type Fields, isRecord } from '../raw-fields.js';

/** The scheduler drivers apps run on (`SVC_SCHEDULER_DRIVER`). */
export const SchedulerDriver = { local: 'local', kubernetes: 'kubernetes', swarm: 'swarm' } as const;
export type SchedulerDriver = (typeof SchedulerDriver)[keyof typeof SchedulerDriver];

/** True when `value` names a scheduler driver. */
export function isSchedulerDriver(value: unknown): value is SchedulerDriver {
  return value === SchedulerDriver.local || value === SchedulerDriver.kubernetes || value === SchedulerDriver.swarm;
}

/** The default traffic weight of a region: no preference. */
const DEFAULT_WEIGHT = 100;

/** The weight of a ready standby: deployed and health-checked, sent no traffic. */
const STANDBY_WEIGHT = 0;

const ONE_HOST =
  'the local driver runs every region of the app on this one host, behind one wake gateway, so there is one region to send traffic to';

const ONE_HOST_WEIGHT = `${ONE_HOST}; it balances requests over the instances of every region that takes traffic, and sends none to a region of weight 0 (a ready standby)`;

function warn(out: RawFinding[], path: PathSegment[], rule: string, detail: string): void {
  out.push({ path, rule, detail, severity: FindingSeverity.warning });
}

function checkTrafficWeights(spec: Fields, driver: SchedulerDriver, out: RawFinding[]): void {
  if (!isRecord(spec.regions)) return;
  const single = Object.keys(spec.regions).length === 1;
  for (const [region, target] of Object.entries(spec.regions)) {
    // 100 everywhere (the default) asks for no split: every region takes traffic, as both drivers do.
    if (!isRecord(target) || typeof target.trafficWeight !== 'number' || target.trafficWeight === DEFAULT_WEIGHT)
      continue;
    // The local driver honours 0, a ready standby: the wake gateway sends the region no traffic.
    if (driver === SchedulerDriver.local && target.trafficWeight === STANDBY_WEIGHT) continue;
    // A split on the only region is an error of its own (trafficWeight.singleRegion).
    if (single && target.trafficWeight > STANDBY_WEIGHT && target.trafficWeight < DEFAULT_WEIGHT) continue;
    const reason =
      driver === SchedulerDriver.local
        ? ONE_HOST_WEIGHT
        : driver === SchedulerDriver.swarm
          ? 'the swarm driver runs every region of the app on the one swarm it manages, behind one wake gateway, so there is one region to send traffic to'
          : 'the kubernetes driver runs each region in the cluster of its kubeconfig context; splitting traffic between clusters is the job of a global load balancer in front of them, which this platform does not drive';
    warn(
      out,
      ['regions', region, 'trafficWeight'],
      SpecRule.driverTrafficWeight,
      `${describeValue(target.trafficWeight)} is not applied on the ${driver} driver: ${reason}; remove trafficWeight, or set the weights in the load balancer in front of the regions`,
    );
  }
}

function checkEndpointRegions(spec: Fields, driver: SchedulerDriver, out: RawFinding[]): void {
  if (!Array.isArray(spec.endpoints)) return;
  spec.endpoints.forEach((endpoint: unknown, index) => {
    if (!isRecord(endpoint) || typeof endpoint.region !== 'string') return;
    const reason =
      driver === SchedulerDriver.local
        ? ONE_HOST
        : 'the tunnel ingress routes every hostname to this control plane, which forwards it to the allocations of the app whatever their region';
    warn(
      out,
      ['endpoints', index, 'region'],
      SpecRule.driverEndpointRegion,
      `${describeValue(endpoint.region)} is not applied on the ${driver} driver: ${reason}; remove region, or point the hostname's DNS at the region yourself`,
    );
  });
}

function checkNodePool(spec: Fields, driver: SchedulerDriver, out: RawFinding[]): void {
  const placement = spec.placement;
  if (!isRecord(placement) || typeof placement.nodePool !== 'string') return;
  // The kubernetes driver honours it as the pods' node selector (svc.dev/node-pool=<pool>), the swarm
  // driver as its services' constraint node.labels.svc.node-pool==<pool>.
  if (driver !== SchedulerDriver.local) return;
  warn(
    out,
    ['placement', 'nodePool'],
    SpecRule.driverNodePool,
    `${describeValue(placement.nodePool)} is not applied on the local driver: it runs every process on this one host, which is the only node; remove placement.nodePool, or run the app on the kubernetes driver, where it selects nodes labelled svc.dev/node-pool=${placement.nodePool}, or on the swarm driver (nodes labelled svc.node-pool=${placement.nodePool})`,
  );
}

function checkUnsupported(spec: Fields, driver: SchedulerDriver, out: RawFinding[]): void {
  if (driver !== SchedulerDriver.kubernetes) return;
  if (Array.isArray(spec.volumes) && spec.volumes.length > 0)
    warn(
      out,
      ['volumes'],
      SpecRule.driverUnsupported,
      'volumes are not mounted on the kubernetes driver (no PersistentVolumeClaim mapping), so a deploy of this app is refused there; remove volumes, or run the app on the local or swarm driver',
    );
}

/** Warnings for the fields of `spec` that `driver` does not honour. */
export function checkDriverRules(spec: unknown, driver: SchedulerDriver): RawFinding[] {
  if (!isRecord(spec) || spec.role !== undefined) return [];
  const out: RawFinding[] = [];
  checkTrafficWeights(spec, driver, out);
  checkEndpointRegions(spec, driver, out);
  checkNodePool(spec, driver, out);
  checkUnsupported(spec, driver, out);
  return out;
}
