/**
 * Event catalogue: every event type the platform emits with its severity and emitting code path,
 * and the built-in event-to-alert rules served by `GET /api/alerts/rules`.
 */
import type { Severity } from './event-port.js';

/** One event type of the spec's table. */
export interface EventTypeInfo {
  readonly type: string;
  /** `null` for event.test, whose severity the caller picks (info by default). */
  readonly severity: Severity | null;
  readonly when: string;
}

/** Every event type the control plane knows. */
export const EVENT_TYPES: readonly EventTypeInfo[] = [
  { type: 'deploy.succeeded', severity: 'info', when: 'deployment completes' },
  { type: 'deploy.failed', severity: 'critical', when: 'deployment fails at a pipeline step' },
  { type: 'deploy.auto_rollback', severity: 'warning', when: 'failed health gate queues rollback' },
  { type: 'canary.promoted', severity: 'info', when: 'operator manually promotes a canary' },
  { type: 'rollback.succeeded', severity: 'info', when: 'rollback completes' },
  { type: 'rollback.failed', severity: 'critical', when: 'rollback fails' },
  { type: 'job.triggered', severity: 'info', when: 'operator triggers a periodic process' },
  { type: 'job.paused', severity: 'warning', when: 'operator pauses' },
  { type: 'job.resumed', severity: 'info', when: 'operator resumes' },
  { type: 'job.schedule_updated', severity: 'info', when: 'operator changes schedule' },
  { type: 'cron.succeeded', severity: 'info', when: 'periodic child run completed' },
  { type: 'cron.failed', severity: 'critical', when: 'periodic child allocation failed' },
  { type: 'cron.lost', severity: 'critical', when: 'child allocation lost' },
  { type: 'cron.hung', severity: 'critical', when: 'child appears stuck beyond watcher threshold' },
  {
    type: 'cron.missed_run',
    severity: 'critical',
    when: 'scheduled run did not appear within 5 minutes of its expected time',
  },
  { type: 'scheduler.allocation.failed', severity: 'critical', when: 'allocation fails' },
  { type: 'scheduler.allocation.lost', severity: 'critical', when: 'allocation lost' },
  { type: 'scheduler.task.restarted', severity: 'warning', when: 'task restart observed' },
  { type: 'scheduler.task.oom_killed', severity: 'critical', when: 'task killed by the OOM killer' },
  { type: 'service.health.warning', severity: 'warning', when: 'registry health becomes warning' },
  { type: 'service.health.critical', severity: 'critical', when: 'registry health becomes critical' },
  { type: 'service.health.recovered', severity: 'info', when: 'non-passing service returns to passing' },
  { type: 'service.capacity.below_minimum', severity: 'warning', when: 'host capacity below minimum (aggregate)' },
  { type: 'service.capacity.recovered', severity: 'info', when: 'capacity recovered' },
  {
    type: 'service.scaled_out',
    severity: 'info',
    when: 'a process gets more allocations: a wake from zero or an autoscaler decision (with its reason)',
  },
  {
    type: 'service.scaled_in',
    severity: 'info',
    when: 'a process gets fewer allocations: an idle scale-down or an autoscaler decision (with its reason)',
  },
  { type: 'snapshot.restored', severity: 'warning', when: 'local snapshot restored' },
  { type: 'snapshot.retention.applied', severity: 'info', when: 'retention pruned older files' },
  { type: 'snapshot.exported', severity: 'info', when: 'snapshot exported to remote storage' },
  { type: 'snapshot.imported', severity: 'info', when: 'remote snapshot imported' },
  { type: 'exec.session.started', severity: 'info', when: 'an exec session or command starts in an allocation' },
  { type: 'exec.session.ended', severity: 'info', when: 'an exec session or command ends (exit code, duration)' },
  { type: 'incident.resolved', severity: 'info', when: 'incident action resolve' },
  { type: 'event.test', severity: null, when: 'POST /api/events/test' },
];

/** One built-in alert rule: which events raise it and which event clears it. */
export interface AlertRule {
  readonly name: string;
  readonly category: 'deploy_failures' | 'service_health' | 'cron_failures' | 'recovery' | 'task_health' | 'capacity';
  readonly severity: Severity;
  readonly eventTypes: readonly string[];
  readonly clearedBy: readonly string[];
  readonly correlationKey: string;
  readonly description: string;
}

/** The built-in event-to-alert catalogue: a shared contract, not a paging engine. */
export const ALERT_RULES: readonly AlertRule[] = [
  {
    name: 'SvcDeployFailed',
    category: 'deploy_failures',
    severity: 'critical',
    eventTypes: ['deploy.failed', 'rollback.failed'],
    clearedBy: ['deploy.succeeded', 'rollback.succeeded'],
    correlationKey: '{app}:deploy',
    description: 'A deployment or rollback failed at a pipeline step.',
  },
  {
    name: 'SvcDeployAutoRollback',
    category: 'deploy_failures',
    severity: 'warning',
    eventTypes: ['deploy.auto_rollback'],
    clearedBy: ['rollback.succeeded'],
    correlationKey: '{app}:deploy',
    description: 'A failed health gate queued an automatic rollback.',
  },
  {
    name: 'SvcServiceUnhealthy',
    category: 'service_health',
    severity: 'critical',
    eventTypes: ['service.health.warning', 'service.health.critical'],
    clearedBy: ['service.health.recovered'],
    correlationKey: '{app}:{process}:health',
    description: 'Registry health of a process left passing.',
  },
  {
    name: 'SvcCronFailed',
    category: 'cron_failures',
    severity: 'critical',
    eventTypes: ['cron.failed', 'cron.lost', 'cron.hung', 'cron.missed_run'],
    clearedBy: ['cron.succeeded'],
    correlationKey: '{app}:{process}:cron',
    description: 'A periodic run failed, was lost, hung or did not start within 5 minutes.',
  },
  {
    name: 'SvcTaskOOMRisk',
    category: 'task_health',
    severity: 'critical',
    eventTypes: ['scheduler.task.oom_killed'],
    clearedBy: [],
    correlationKey: '{app}:{taskGroup}:{task}:restarts',
    description: 'A task was killed by the OOM killer.',
  },
  {
    name: 'SvcTaskRestartLoop',
    category: 'task_health',
    severity: 'warning',
    eventTypes: ['scheduler.task.restarted'],
    clearedBy: [],
    correlationKey: '{app}:{taskGroup}:{task}:restarts',
    description: 'A task restarted (the metrics rule fires above 3 restarts).',
  },
  {
    name: 'SvcHostCapacityLow',
    category: 'capacity',
    severity: 'warning',
    eventTypes: ['service.capacity.below_minimum'],
    clearedBy: ['service.capacity.recovered'],
    correlationKey: 'svc-host:<host-id>:minimum-capacity',
    description: 'Free memory or disk of the host fell below the configured minimum.',
  },
  {
    name: 'SvcIncidentRecovered',
    category: 'recovery',
    severity: 'info',
    eventTypes: [
      'service.health.recovered',
      'service.capacity.recovered',
      'cron.succeeded',
      'deploy.succeeded',
      'incident.resolved',
    ],
    clearedBy: [],
    correlationKey: '(same as the incident)',
    description: "An info event with the incident's correlation key acknowledges its open warnings and criticals.",
  },
];
