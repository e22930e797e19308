/**
 * Inert fields: fields that validate but that nothing applies where they are written (a legacy list,
 * a reserved switch, a setting of a feature that is off). Each is a warning naming the field, why
 * and what to do, so no field is silently ignored (ADR 0196).
 */
import { FindingSeverity, type PathSegment } from './finding.js';
import type { RawFinding } from './raw-finding.js';
import { SpecRule } from './spec-rule.js';

type Fields = Record<string, unknown>;

/** The default of metrics.path. */
const DEFAULT_METRICS_PATH = '/metrics';

function isRecord(value: unknown): value is Fields {
  return typeof value === 'object' && value !== null && !Array.isArray(value);
}

function inert(out: RawFinding[], path: PathSegment[], detail: string): void {
  out.push({ path, rule: SpecRule.fieldInert, detail, severity: FindingSeverity.warning });
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
  if (isRecord(spec.processes)) {
    for (const [name, process] of Object.entries(spec.processes)) {
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
