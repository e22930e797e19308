/**
 * Inert fields: fields that validate but that nothing applies where they are written (a legacy list,
 * a reserved switch, a setting of a feature that is off). Each is a warning naming the field, why
 * and what to do, so no field is silently ignored (ADR 0196).
 */
import { FindingSeverity, type PathSegment } from '../finding.js';
import { LocateTarget } from '../yaml/yaml-locator.js';
import type { RawFinding } from '../raw-finding.js';
import { SpecRule } from './spec-rule.js';
import { type Fields, isRecord } from '../raw-fields.js';

/** The default of metrics.path. */
const DEFAULT_METRICS_PATH = '/metrics';

/** The default of a bucket's access. */
const DEFAULT_BUCKET_ACCESS = 'readWrite';

function inert(out: RawFinding[], path: PathSegment[], detail: string): void {
  out.push({ path, rule: SpecRule.fieldInert, detail, severity: FindingSeverity.warning });
}

/** Metrics a tuning signal reads from the driver's samples whatever its source. */
const DRIVER_SIGNAL_METRICS: ReadonlySet<unknown> = new Set(['cpu_percent', 'memory_rss', 'memory_max']);

/** A tuning signal of the app or the metrics store is read from the process's metrics endpoint: one must be served (ADR 0233). */
function checkSignalSources(name: string, process: unknown, out: RawFinding[]): void {
  if (!isRecord(process) || !isRecord(process.tuning) || !Array.isArray(process.tuning.signals)) return;
  const metrics = isRecord(process.metrics) ? process.metrics : undefined;
  const served = metrics?.enabled === true && (metrics.port !== undefined || process.port !== undefined);
  process.tuning.signals.forEach((signal: unknown, index) => {
    if (!isRecord(signal) || typeof signal.metric !== 'string' || DRIVER_SIGNAL_METRICS.has(signal.metric)) return;
    if (signal.source === 'nomad')
      inert(
        out,
        ['processes', name, 'tuning', 'signals', index, 'metric'],
        `is not a metric the scheduler reports (cpu_percent, memory_rss, memory_max): the signal is never read; use source app or prometheus to read ${signal.metric} from the process's metrics endpoint`,
      );
    else if (!served)
      inert(
        out,
        ['processes', name, 'tuning', 'signals', index, 'metric'],
        `is read from the process's metrics endpoint, and the process serves none: set metrics.enabled: true (with metrics.port when the process has no port)`,
      );
  });
}

/** Bucket settings the platform may not apply: access is enforced only by the S3 proxy (ADR 0188), no bucket is made public. */
function checkObjectStorage(spec: Fields, out: RawFinding[]): void {
  const storage = isRecord(spec.infrastructure) ? spec.infrastructure.objectStorage : undefined;
  if (!isRecord(storage)) return;
  if (typeof storage.provider === 'string')
    inert(
      out,
      ['infrastructure', 'objectStorage', 'provider'],
      'is a hint nothing reads: buckets are on the S3-compatible store the platform is configured with (SVC_S3_ENDPOINT) whatever it says; remove provider',
    );
  if (!Array.isArray(storage.buckets)) return;
  storage.buckets.forEach((bucket: unknown, index) => {
    if (!isRecord(bucket)) return;
    const at: PathSegment[] = ['infrastructure', 'objectStorage', 'buckets', index];
    if (typeof bucket.access === 'string' && bucket.access !== DEFAULT_BUCKET_ACCESS)
      inert(
        out,
        [...at, 'access'],
        `is enforced only through the platform's S3 proxy (SVC_S3_PROXY_PORT, docs/object-storage.md), which gives the app a key scoped to "${bucket.access}"; without the proxy the app is given the bucket's name and the store's endpoint, and the credentials it brings decide what it may do`,
      );
    if (bucket.public === true)
      inert(
        out,
        [...at, 'public'],
        'is reserved: buckets are never made public; serve the objects through the app, or set a bucket policy on the store yourself',
      );
  });
}

/** Warnings for the fields of an app spec that have no effect where they are written. */
export function checkInertFields(spec: unknown): RawFinding[] {
  if (!isRecord(spec) || spec.role !== undefined) return [];
  const out: RawFinding[] = [];
  if (Array.isArray(spec.services) && spec.services.length > 0)
    inert(out, ['services'], 'is a legacy list that nothing reads: the processes map says what runs; remove services');
  const snapshots = spec.snapshots;
  if (isRecord(snapshots) && snapshots.retentionEnabled === true)
    inert(
      out,
      ['snapshots', 'retentionEnabled'],
      'is reserved: snapshots are not pruned automatically yet; keep states how many a retention run keeps, and `svc snapshots retention <app> --execute --yes` prunes the older ones',
    );
  checkObjectStorage(spec, out);
  if (isRecord(spec.processes)) {
    for (const [name, process] of Object.entries(spec.processes)) {
      const profiles = isRecord(process) && isRecord(process.tuning) ? process.tuning.profiles : undefined;
      if (isRecord(profiles)) {
        for (const [profile, shape] of Object.entries(profiles)) {
          if (!isRecord(shape) || shape.memory !== undefined) continue;
          out.push({
            path: ['processes', name, 'tuning', 'profiles', profile],
            rule: SpecRule.fieldInert,
            detail:
              'has no memory: tuning picks a profile by the memory the peak calls for, so this one is never recommended; set memory',
            severity: FindingSeverity.warning,
            target: LocateTarget.key,
          });
        }
      }
      checkSignalSources(name, process, out);
      const metrics = isRecord(process) ? process.metrics : undefined;
      if (!isRecord(metrics) || metrics.enabled === true) continue;
      for (const field of ['path', 'port'] as const) {
        // The default path (which the canonical form writes out) asks for nothing.
        if (metrics[field] === undefined || (field === 'path' && metrics.path === DEFAULT_METRICS_PATH)) continue;
        inert(
          out,
          ['processes', name, 'metrics', field],
          'has no effect while metrics.enabled is false: the process is not registered as a scrape target; set metrics.enabled: true, or remove it',
        );
      }
    }
  }
  return out;
}
