/**
 * The metric families of the spec's table ("Metrics" in the control plane spec) as `/metrics`
 * serves them: the exposition type and the label names of each. Names are the spec's; a name
 * ending in `_total` whose value can fall is `untyped` (docs/adr/0111-metric-families-and-types.md).
 * docs/observability.md lists what each label can hold.
 */

/** Exposition types the control plane uses. */
export type MetricFamilyType = 'counter' | 'gauge' | 'summary' | 'untyped';

/** One family of the spec's table. */
export interface MetricFamily {
  readonly name: string;
  readonly type: MetricFamilyType;
  readonly labels: readonly string[];
}

/** Every family of the spec's table, in its order. */
export const CONTROL_PLANE_FAMILIES: readonly MetricFamily[] = [
  { name: 'svc_apps_total', type: 'untyped', labels: [] },
  { name: 'svc_app_info', type: 'gauge', labels: ['app', 'deploy', 'valid', 'public', 'node_pool'] },
  { name: 'svc_process_info', type: 'gauge', labels: ['app', 'process', 'type', 'metrics_enabled'] },
  { name: 'svc_app_health', type: 'gauge', labels: ['app', 'status'] },
  { name: 'svc_deploys_total', type: 'counter', labels: ['app', 'status'] },
  { name: 'svc_deploy_duration_seconds', type: 'summary', labels: ['app', 'status'] },
  { name: 'svc_deploy_last_started_timestamp_seconds', type: 'gauge', labels: ['app'] },
  { name: 'svc_object_storage_buckets', type: 'gauge', labels: ['app', 'provider'] },
  { name: 'svc_snapshots_total', type: 'untyped', labels: ['app', 'database'] },
  { name: 'svc_snapshot_over_limit_total', type: 'untyped', labels: ['app', 'database'] },
  { name: 'svc_access_events_recent_total', type: 'untyped', labels: ['status'] },
  { name: 'svc_service_status', type: 'gauge', labels: ['app', 'process', 'service', 'status'] },
  { name: 'svc_events_total', type: 'counter', labels: ['type', 'severity'] },
  { name: 'svc_event_last_occurred_timestamp_seconds', type: 'gauge', labels: ['type', 'severity'] },
  { name: 'svc_host_disk_total_bytes', type: 'gauge', labels: [] },
  { name: 'svc_host_disk_free_bytes', type: 'gauge', labels: [] },
  { name: 'svc_task_restarts_total', type: 'counter', labels: ['app', 'process', 'task'] },
  { name: 'svc_task_oom_kills_total', type: 'counter', labels: ['app', 'process', 'task'] },
  { name: 'svc_cron_missed_runs_total', type: 'untyped', labels: ['app', 'process'] },
];

/**
 * The series names a family's samples carry: a summary's `_sum` and `_count`, every other
 * family its own name. What dashboards and rules may select.
 */
export function seriesNames(family: MetricFamily): string[] {
  return family.type === 'summary' ? [`${family.name}_sum`, `${family.name}_count`] : [family.name];
}
