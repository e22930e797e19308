/**
 * Alert rules of the starter bundle (`prometheus/rules/svc-alerts.yml`): service health, deploy
 * failures, cron failures and missed runs, task OOM kills and restart loops, snapshot pressure and
 * low disk headroom, written against the metrics the control plane exports.
 *
 * Event counters are new series at their first event, which `increase()` cannot see, so "an event
 * happened recently" reads `svc_event_last_occurred_timestamp_seconds` instead.
 */
import YAML from 'yaml';
import { APPS_JOB, CONTROL_PLANE_JOB } from './scrape-config.js';

/** Alert severities, carried as the `severity` label. */
export const AlertSeverity = { warning: 'warning', critical: 'critical' } as const;
export type AlertSeverity = (typeof AlertSeverity)[keyof typeof AlertSeverity];

/** One alert rule and the exported metrics it reads. */
export interface AlertRule {
  readonly group: string;
  readonly alert: string;
  readonly expr: string;
  /** Prometheus duration the condition must hold; absent fires at once. */
  readonly for?: string;
  readonly severity: AlertSeverity;
  readonly summary: string;
  readonly description: string;
  /** Control plane metrics the expression reads (`up` comes from the metrics store and is not listed). */
  readonly metrics: readonly string[];
}

/** How long an event alert stays firing after its event. */
export const RECENT_EVENT_SECONDS = 900;

const LAST = 'svc_event_last_occurred_timestamp_seconds';

/** Fires for {@link RECENT_EVENT_SECONDS} after the latest event whose type matches `typeRegex`. */
function recentEvent(typeRegex: string): string {
  return `time() - ${LAST}{type=~"${typeRegex}"} < ${RECENT_EVENT_SECONDS}`;
}

/** Fires while the latest `type` event is newer than the latest `recoveredType` event. */
function unrecovered(type: string, recoveredType: string): string {
  return `max(${LAST}{type="${type}"}) > (max(${LAST}{type="${recoveredType}"}) or vector(0))`;
}

/** Every rule the bundle can ship, in file order. */
export const ALERT_RULES: readonly AlertRule[] = [
  {
    group: 'svc-service-health',
    alert: 'SvcControlPlaneDown',
    expr: `up{job="${CONTROL_PLANE_JOB}"} == 0`,
    for: '2m',
    severity: 'critical',
    summary: 'The svc control plane does not answer scrapes',
    description:
      '{{ $labels.instance }} has not answered /metrics for 2 minutes: deploys, events and routing updates are not running.',
    metrics: [],
  },
  {
    group: 'svc-service-health',
    alert: 'SvcAppMetricsDown',
    expr: `up{job="${APPS_JOB}"} == 0`,
    for: '5m',
    severity: 'warning',
    summary: '{{ $labels.app }}/{{ $labels.process }} does not answer scrapes',
    description:
      'The metrics endpoint {{ $labels.instance }} of {{ $labels.app }}/{{ $labels.process }} has failed for 5 minutes.',
    metrics: [],
  },
  {
    group: 'svc-service-health',
    alert: 'SvcServiceHealthCritical',
    expr: unrecovered('service.health.critical', 'service.health.recovered'),
    for: '1m',
    severity: 'critical',
    summary: 'A registry service is critical',
    description:
      'The latest service.health.critical event is newer than the latest recovery; `svc events --type service.health.critical` names the service.',
    metrics: [LAST],
  },
  {
    group: 'svc-service-health',
    alert: 'SvcServiceHealthWarning',
    expr: unrecovered('service.health.warning', 'service.health.recovered'),
    for: '5m',
    severity: 'warning',
    summary: 'A registry service is in warning',
    description:
      'The latest service.health.warning event is newer than the latest recovery; `svc events --type service.health.warning` names the service.',
    metrics: [LAST],
  },
  {
    group: 'svc-deploys',
    alert: 'SvcDeployFailed',
    expr: recentEvent('deploy[.]failed|rollback[.]failed'),
    severity: 'critical',
    summary: 'A {{ $labels.type }} event was recorded',
    description:
      'A deploy or rollback failed within the last 15 minutes; `svc events --type {{ $labels.type }}` shows the app and the failed step.',
    metrics: [LAST],
  },
  {
    group: 'svc-deploys',
    alert: 'SvcDeployAutoRollback',
    expr: recentEvent('deploy[.]auto_rollback'),
    severity: 'warning',
    summary: 'A deploy failed its health gate and was rolled back',
    description: 'A deploy.auto_rollback event was recorded within the last 15 minutes.',
    metrics: [LAST],
  },
  {
    group: 'svc-cron',
    alert: 'SvcCronFailed',
    expr: recentEvent('cron[.](failed|lost|hung)'),
    severity: 'critical',
    summary: 'A periodic run ended as {{ $labels.type }}',
    description:
      'A periodic child failed, was lost or hangs (within the last 15 minutes); `svc events --type {{ $labels.type }}` names the app.',
    metrics: [LAST],
  },
  {
    group: 'svc-cron',
    alert: 'SvcCronMissedRun',
    expr: 'svc_cron_missed_runs_total > 0',
    severity: 'critical',
    summary: '{{ $labels.app }}/{{ $labels.process }} missed its scheduled run',
    description:
      'The latest expected run of {{ $labels.app }}/{{ $labels.process }} did not start within 5 minutes of its time (paused jobs excluded).',
    metrics: ['svc_cron_missed_runs_total'],
  },
  {
    group: 'svc-tasks',
    alert: 'SvcTaskOOMRisk',
    // The OOM count grew within the hour, or the series is new (its first kill) within the hour.
    expr: 'svc_task_oom_kills_total - (svc_task_oom_kills_total offset 1h or svc_task_oom_kills_total * 0) > 0',
    severity: 'critical',
    summary: '{{ $labels.app }}/{{ $labels.process }} task {{ $labels.task }} was OOM killed',
    description:
      'The task exceeded its memory limit within the last hour; raise resources.memory (GET /api/tuning/recommendations).',
    metrics: ['svc_task_oom_kills_total'],
  },
  {
    group: 'svc-tasks',
    alert: 'SvcTaskRestartLoop',
    expr: 'max_over_time(svc_task_restarts_total[1h]) - min_over_time(svc_task_restarts_total[1h]) > 3',
    severity: 'warning',
    summary: '{{ $labels.app }}/{{ $labels.process }} task {{ $labels.task }} restarts in a loop',
    description:
      'More than 3 restarts within the last hour ({{ $value }}); `svc status {{ $labels.app }}` shows the last exit.',
    metrics: ['svc_task_restarts_total'],
  },
  {
    group: 'svc-snapshots',
    alert: 'SvcSnapshotsOverLimit',
    expr: 'svc_snapshot_over_limit_total > 0',
    for: '1h',
    severity: 'warning',
    summary: '{{ $labels.app }} keeps more snapshots of {{ $labels.database }} than snapshots.keep',
    description:
      '{{ $value }} dump(s) above the keep count for an hour; preview and apply retention (GET/POST /api/v1/apps/{{ $labels.app }}/snapshots/retention).',
    metrics: ['svc_snapshot_over_limit_total'],
  },
  {
    group: 'svc-capacity',
    alert: 'SvcHostDiskHeadroomLow',
    expr: 'svc_host_disk_free_bytes / svc_host_disk_total_bytes < 0.10',
    for: '10m',
    severity: 'warning',
    summary: 'Less than 10% of the data folder disk is free',
    description:
      'Free space is {{ $value | humanizePercentage }} of the file system holding the data folder (releases, snapshots, control.db).',
    metrics: ['svc_host_disk_free_bytes', 'svc_host_disk_total_bytes'],
  },
  {
    group: 'svc-capacity',
    alert: 'SvcHostDiskHeadroomCritical',
    expr: 'svc_host_disk_free_bytes / svc_host_disk_total_bytes < 0.05',
    for: '5m',
    severity: 'critical',
    summary: 'Less than 5% of the data folder disk is free',
    description: 'Free space is {{ $value | humanizePercentage }}; deploys and snapshots will start failing.',
    metrics: ['svc_host_disk_free_bytes', 'svc_host_disk_total_bytes'],
  },
  {
    group: 'svc-capacity',
    alert: 'SvcHostCapacityBelowMinimum',
    expr: unrecovered('service.capacity.below_minimum', 'service.capacity.recovered'),
    for: '1m',
    severity: 'warning',
    summary: 'Host memory or disk is below the configured minimum',
    description:
      'The latest service.capacity.below_minimum event is newer than the latest recovery (SVC_CAPACITY_MIN_MEMORY, SVC_CAPACITY_MIN_DISK).',
    metrics: [LAST],
  },
];

/** A rule left out because the control plane does not export a metric it reads. */
export interface SkippedAlertRule {
  readonly alert: string;
  readonly missingMetrics: readonly string[];
}

/** The rules whose metrics are all in `exportedMetrics`, and the ones left out. */
export function selectAlertRules(
  exportedMetrics: Iterable<string>,
  rules: readonly AlertRule[] = ALERT_RULES,
): { rules: AlertRule[]; skipped: SkippedAlertRule[] } {
  const exported = new Set(exportedMetrics);
  const selected: AlertRule[] = [];
  const skipped: SkippedAlertRule[] = [];
  for (const rule of rules) {
    const missing = rule.metrics.filter((m) => !exported.has(m));
    if (missing.length === 0) selected.push(rule);
    else skipped.push({ alert: rule.alert, missingMetrics: missing });
  }
  return { rules: selected, skipped };
}

/** The rules as a Prometheus rules file object: one group per `group`, in first-seen order. */
export function alertRulesFile(rules: readonly AlertRule[]): {
  groups: { name: string; rules: Record<string, unknown>[] }[];
} {
  const groups = new Map<string, Record<string, unknown>[]>();
  for (const rule of rules) {
    const list = groups.get(rule.group) ?? [];
    list.push({
      alert: rule.alert,
      expr: rule.expr,
      ...(rule.for === undefined ? {} : { for: rule.for }),
      labels: { severity: rule.severity },
      annotations: { summary: rule.summary, description: rule.description },
    });
    groups.set(rule.group, list);
  }
  return { groups: [...groups].map(([name, list]) => ({ name, rules: list })) };
}

/** The rules file as YAML; `skipped` rules are named in the header. */
export function renderAlertRules(rules: readonly AlertRule[], skipped: readonly SkippedAlertRule[] = []): string {
  const doc = new YAML.Document(alertRulesFile(rules));
  doc.commentBefore = [
    ' Generated by svc (GET /api/observability/alerts.yml) from the metrics the control plane exports.',
    ...skipped.map((s) => ` Left out: ${s.alert} (not exported: ${s.missingMetrics.join(', ')}).`),
  ].join('\n');
  return doc.toString({ lineWidth: 0 });
}
