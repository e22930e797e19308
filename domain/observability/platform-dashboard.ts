/**
 * The starter dashboard (`grafana/dashboards/svc-platform.json`) and its datasource
 * (`grafana/provisioning/datasources/svc-metrics.json`): panels over the metrics the control plane
 * exports, reading the managed metrics store.
 */

/** Name and uid of the metrics store datasource the dashboard reads. */
export const DATASOURCE_UID = 'svc-metrics';
/** Uid of the starter dashboard. */
export const DASHBOARD_UID = 'svc-platform';

/** One dashboard panel and the exported metrics its queries read. */
export interface DashboardPanel {
  readonly title: string;
  readonly description: string;
  readonly type: 'timeseries' | 'stat';
  /** PromQL, one query per entry, with the legend to show. */
  readonly queries: readonly { readonly expr: string; readonly legend: string }[];
  readonly unit?: string;
  /** Control plane series the queries read (a summary's `_sum` and `_count` by those names; `up` comes from the metrics store). */
  readonly metrics: readonly string[];
}

/** Every panel the dashboard can show, in layout order. */
export const DASHBOARD_PANELS: readonly DashboardPanel[] = [
  {
    title: 'Scrape targets up',
    description: 'Targets answering scrapes, per job.',
    type: 'stat',
    queries: [{ expr: 'sum by (job) (up)', legend: '{{job}}' }],
    metrics: [],
  },
  {
    title: 'Scrape targets down',
    description: 'App metrics endpoints that do not answer.',
    type: 'stat',
    queries: [{ expr: 'count by (app, process) (up{job="svc-apps"} == 0)', legend: '{{app}}/{{process}}' }],
    metrics: [],
  },
  {
    title: 'Apps by health',
    description:
      'Deployable apps, and discovered apps by their worst service in the service manifest (none: no running instance).',
    type: 'stat',
    queries: [
      { expr: 'svc_apps_total', legend: 'deployable' },
      { expr: 'count by (status) (svc_app_health == 1)', legend: '{{status}}' },
    ],
    metrics: ['svc_apps_total', 'svc_app_health'],
  },
  {
    title: 'Services not passing',
    description: 'Registry services (app processes) in warning or critical.',
    type: 'timeseries',
    queries: [{ expr: 'svc_service_status{status=~"warning|critical"} == 1', legend: '{{service}} {{status}}' }],
    metrics: ['svc_service_status'],
  },
  {
    title: 'Deploys by status (1h)',
    description: 'Finished deploys per app and final status within the hour (from the durable deployment records).',
    type: 'timeseries',
    queries: [{ expr: 'sum by (app, status) (increase(svc_deploys_total[1h]))', legend: '{{app}} {{status}}' }],
    metrics: ['svc_deploys_total'],
  },
  {
    title: 'Mean deploy duration (1h)',
    description: 'Mean time from start to finish of the deploys that finished within the hour, per app.',
    type: 'timeseries',
    queries: [
      {
        expr: 'sum by (app) (increase(svc_deploy_duration_seconds_sum[1h])) / sum by (app) (increase(svc_deploy_duration_seconds_count[1h]))',
        legend: '{{app}}',
      },
    ],
    unit: 's',
    metrics: ['svc_deploy_duration_seconds_sum', 'svc_deploy_duration_seconds_count'],
  },
  {
    title: 'Seconds since the latest deploy started',
    description: "Age of each app's newest deploy start.",
    type: 'stat',
    queries: [{ expr: 'time() - svc_deploy_last_started_timestamp_seconds', legend: '{{app}}' }],
    unit: 's',
    metrics: ['svc_deploy_last_started_timestamp_seconds'],
  },
  {
    title: 'Seconds since the latest deploy failure',
    description: 'Age of the newest deploy.failed and rollback.failed events.',
    type: 'stat',
    queries: [
      {
        expr: 'time() - svc_event_last_occurred_timestamp_seconds{type=~"deploy[.]failed|rollback[.]failed"}',
        legend: '{{type}}',
      },
    ],
    unit: 's',
    metrics: ['svc_event_last_occurred_timestamp_seconds'],
  },
  {
    title: 'Event rate by severity',
    description: 'Events recorded per second by the event surface (5 minute rate).',
    type: 'timeseries',
    queries: [{ expr: 'sum by (severity) (rate(svc_events_total[5m]))', legend: '{{severity}}' }],
    unit: 'ops',
    metrics: ['svc_events_total'],
  },
  {
    title: 'Events by type (5m)',
    description: 'Events recorded by the event surface.',
    type: 'timeseries',
    queries: [{ expr: 'sum by (type, severity) (increase(svc_events_total[5m]))', legend: '{{type}} ({{severity}})' }],
    metrics: ['svc_events_total'],
  },
  {
    title: 'Task restarts (1h)',
    description: 'Restarts per task within the hour (more than 3 fires SvcTaskRestartLoop).',
    type: 'timeseries',
    queries: [{ expr: 'increase(svc_task_restarts_total[1h])', legend: '{{app}}/{{process}}/{{task}}' }],
    metrics: ['svc_task_restarts_total'],
  },
  {
    title: 'Task OOM kills (1h)',
    description: 'OOM kills per task within the hour (any fires SvcTaskOOMRisk).',
    type: 'timeseries',
    queries: [{ expr: 'increase(svc_task_oom_kills_total[1h])', legend: '{{app}}/{{process}}/{{task}}' }],
    metrics: ['svc_task_oom_kills_total'],
  },
  {
    title: 'Missed cron runs',
    description: '1 while the latest expected run of a periodic process was missed.',
    type: 'timeseries',
    queries: [{ expr: 'svc_cron_missed_runs_total', legend: '{{app}}/{{process}}' }],
    metrics: ['svc_cron_missed_runs_total'],
  },
  {
    title: 'Data folder disk free',
    description: 'Free share of the file system holding the data folder (SvcHostDiskHeadroomLow fires below 10%).',
    type: 'timeseries',
    queries: [{ expr: 'svc_host_disk_free_bytes / svc_host_disk_total_bytes', legend: 'free' }],
    unit: 'percentunit',
    metrics: ['svc_host_disk_free_bytes', 'svc_host_disk_total_bytes'],
  },
  {
    title: 'Data folder disk free (bytes)',
    description: 'Free bytes of the file system holding the data folder.',
    type: 'stat',
    queries: [{ expr: 'svc_host_disk_free_bytes', legend: 'free' }],
    unit: 'bytes',
    metrics: ['svc_host_disk_free_bytes'],
  },
  {
    title: 'Recent API responses',
    description: 'Status buckets of the last API requests the control plane answered (scrapes excluded).',
    type: 'timeseries',
    queries: [{ expr: 'svc_access_events_recent_total', legend: '{{status}}' }],
    metrics: ['svc_access_events_recent_total'],
  },
  {
    title: 'Snapshots kept',
    description: 'Local dumps per app database.',
    type: 'timeseries',
    queries: [{ expr: 'svc_snapshots_total', legend: '{{app}}/{{database}}' }],
    metrics: ['svc_snapshots_total'],
  },
  {
    title: 'Snapshots over the keep count',
    description: 'Dumps above snapshots.keep, per app database.',
    type: 'timeseries',
    queries: [{ expr: 'svc_snapshot_over_limit_total', legend: '{{app}}/{{database}}' }],
    metrics: ['svc_snapshot_over_limit_total'],
  },
  {
    title: 'Object storage buckets',
    description: 'Buckets each app declares, by provider.',
    type: 'stat',
    queries: [{ expr: 'sum by (provider) (svc_object_storage_buckets)', legend: '{{provider}}' }],
    metrics: ['svc_object_storage_buckets'],
  },
];

/** The panels whose series are all in `exportedMetrics` (series names: see `seriesNames`). */
export function selectDashboardPanels(
  exportedMetrics: Iterable<string>,
  panels: readonly DashboardPanel[] = DASHBOARD_PANELS,
): DashboardPanel[] {
  const exported = new Set(exportedMetrics);
  return panels.filter((panel) => panel.metrics.every((m) => exported.has(m)));
}

/** The dashboard in Grafana's JSON model: two panels per row. */
export function platformDashboard(panels: readonly DashboardPanel[]): Record<string, unknown> {
  const datasource = { type: 'prometheus', uid: DATASOURCE_UID };
  return {
    uid: DASHBOARD_UID,
    title: 'svc platform',
    description:
      'Generated by svc: app and service health, deploys and their durations, events, task restarts and OOM kills, cron, disk headroom, API responses, snapshots.',
    tags: ['svc'],
    editable: true,
    schemaVersion: 39,
    time: { from: 'now-6h', to: 'now' },
    refresh: '1m',
    panels: panels.map((panel, index) => ({
      id: index + 1,
      type: panel.type,
      title: panel.title,
      description: panel.description,
      datasource,
      gridPos: { h: 8, w: 12, x: (index % 2) * 12, y: Math.floor(index / 2) * 8 },
      ...(panel.unit === undefined ? {} : { fieldConfig: { defaults: { unit: panel.unit }, overrides: [] } }),
      targets: panel.queries.map((query, q) => ({
        refId: String.fromCharCode(65 + q),
        datasource,
        expr: query.expr,
        legendFormat: query.legend,
      })),
    })),
  };
}

/** The datasource provisioning document pointing the dashboard at the metrics store. */
export function metricsDatasource(metricsStoreUrl: string): Record<string, unknown> {
  return {
    apiVersion: 1,
    datasources: [
      {
        name: DATASOURCE_UID,
        uid: DATASOURCE_UID,
        type: 'prometheus',
        access: 'proxy',
        url: metricsStoreUrl,
        isDefault: true,
        editable: false,
      },
    ],
  };
}
