// tier: full
import fs from 'node:fs';
import path from 'node:path';
import test from 'ava';
import YAML from 'yaml';
import { Registry } from 'prom-client';
import { ALERT_RULES, alertRulesFile, renderAlertRules, selectAlertRules } from '../../domain/observability/index.js';
import { ControlMetrics } from '../../platform/metrics/control-metrics.js';
import { registerSnapshotMetrics, SNAPSHOT_METRICS } from '../../controllers/observability/index.js';
import { tempDir } from '../helpers/temp-dir.js';
import { promtool } from './promtool.js';

/** The metric names a control plane registers: its ControlMetrics plus the observability snapshot gauges. */
function controlPlaneMetricNames(): string[] {
  const metrics = new ControlMetrics();
  registerSnapshotMetrics(metrics.registry, () => []);
  return metrics.registry.getMetricsAsArray().map((m) => m.name);
}

test('every control plane metric an alert rule reads is registered by the code', (t) => {
  const exported = new Set(controlPlaneMetricNames());
  for (const rule of ALERT_RULES) {
    for (const metric of rule.metrics)
      t.true(exported.has(metric), `${rule.alert} reads ${metric}, which nothing registers`);
    // The declared list is complete: every svc_ name in the expression is declared.
    for (const name of rule.expr.match(/svc_[a-z_]+/g) ?? [])
      t.true(rule.metrics.includes(name), `${rule.alert} reads ${name} without declaring it`);
  }
  t.deepEqual(selectAlertRules(exported).skipped, []);
});

test("the bundle ships the named rules SvcTaskOOMRisk, SvcTaskRestartLoop and SvcCronMissedRun and covers the spec's families", (t) => {
  const names = ALERT_RULES.map((r) => r.alert);
  for (const name of ['SvcTaskOOMRisk', 'SvcTaskRestartLoop', 'SvcCronMissedRun']) t.true(names.includes(name), name);
  const groups = new Set(ALERT_RULES.map((r) => r.group));
  for (const family of ['svc-service-health', 'svc-deploys', 'svc-cron', 'svc-snapshots', 'svc-capacity'])
    t.true(groups.has(family), family);
  t.is(new Set(names).size, names.length);
});

test('selectAlertRules leaves out a rule whose metric is not exported and names the metric', (t) => {
  const exported = controlPlaneMetricNames().filter((m) => m !== SNAPSHOT_METRICS.overLimit);
  const { rules, skipped } = selectAlertRules(exported);
  t.deepEqual(skipped, [{ alert: 'SvcSnapshotsOverLimit', missingMetrics: ['svc_snapshot_over_limit_total'] }]);
  t.false(rules.some((r) => r.alert === 'SvcSnapshotsOverLimit'));
  t.regex(
    renderAlertRules(rules, skipped),
    /# Left out: SvcSnapshotsOverLimit \(not exported: svc_snapshot_over_limit_total\)/,
  );
});

test('registerSnapshotMetrics fills both gauges from one read per scrape and leaves a gauge registered elsewhere alone', async (t) => {
  const registry = new Registry();
  let rows = [{ app: 'ledger', database: 'ledger', snapshots: 5, overLimit: 2 }];
  registerSnapshotMetrics(registry, () => rows);
  registerSnapshotMetrics(registry, () => []);
  t.regex(await registry.metrics(), /svc_snapshot_over_limit_total\{app="ledger",database="ledger"\} 2/);
  t.regex(await registry.metrics(), /svc_snapshots_total\{app="ledger",database="ledger"\} 5/);
  rows = [];
  t.notRegex(await registry.metrics(), /app="ledger"/);
  const failing = new Registry();
  const errors: unknown[] = [];
  registerSnapshotMetrics(
    failing,
    () => {
      throw new Error('db closed');
    },
    (e) => errors.push(e),
  );
  t.notRegex(await failing.metrics(), /app=/);
  t.is(errors.length, 1, 'one read per scrape serves both gauges');
});

test('promtool accepts the alert rules file', async (t) => {
  const dir = tempDir(t);
  fs.writeFileSync(path.join(dir, 'svc-alerts.yml'), renderAlertRules(ALERT_RULES));
  const run = await promtool(dir, 'check', 'rules', 'svc-alerts.yml');
  t.is(run.code, 0, run.output);
  t.regex(run.output, new RegExp(`SUCCESS: ${ALERT_RULES.length} rules found`));
});

test('promtool accepts the rules file after a YAML round trip unchanged (no lossy emission)', (t) => {
  t.deepEqual(YAML.parse(renderAlertRules(ALERT_RULES)), alertRulesFile(ALERT_RULES));
});

/** One alert expected at an evaluation time, with its labels and rendered annotations. */
function fires(
  alertname: string,
  evalTime: string,
  labels: Record<string, string>,
  annotations: Record<string, string>,
) {
  return { eval_time: evalTime, alertname, exp_alerts: [{ exp_labels: labels, exp_annotations: annotations }] };
}
function quiet(alertname: string, evalTime: string) {
  return { eval_time: evalTime, alertname, exp_alerts: [] };
}
const LAST = 'svc_event_last_occurred_timestamp_seconds';

test('the alert rules fire and resolve as intended on recorded series (promtool test rules)', async (t) => {
  const dir = tempDir(t);
  fs.writeFileSync(path.join(dir, 'svc-alerts.yml'), renderAlertRules(ALERT_RULES));
  const oom = {
    summary: 'a/web task web was OOM killed',
    description:
      'The task exceeded its memory limit within the last hour; raise resources.memory (GET /api/tuning/recommendations).',
  };
  const tests = {
    rule_files: ['svc-alerts.yml'],
    evaluation_interval: '1m',
    tests: [
      {
        interval: '1m',
        input_series: [
          // First OOM kill at 30m (a new series), a second at about 110m.
          { series: 'svc_task_oom_kills_total{app="a",process="web",task="web"}', values: '_x30 1x80 2x40' },
          // A task seen at 0 from its first sight (the watcher's baseline), killed at about 100m.
          { series: 'svc_task_oom_kills_total{app="b",process="worker",task="worker"}', values: '0x100 1x40' },
          // Three restarts in a row (not a loop), four (a loop), and an old count seen at a restart of the API.
          { series: 'svc_task_restarts_total{app="t",process="p1",task="p1"}', values: '0x10 1 2 3 3x60' },
          { series: 'svc_task_restarts_total{app="t",process="p2",task="p2"}', values: '0x10 1 2 3 4 4x100' },
          { series: 'svc_task_restarts_total{app="t",process="p3",task="p3"}', values: '10x100' },
          { series: 'svc_cron_missed_runs_total{app="r",process="nightly"}', values: '0x10 1x10 0x10' },
          // A deploy failure at 10m (600 s).
          { series: `${LAST}{type="deploy.failed",severity="critical"}`, values: '_x10 600x100' },
          // A service critical at 5m, recovered at 20m.
          { series: `${LAST}{type="service.health.critical",severity="critical"}`, values: '_x5 300x100' },
          { series: `${LAST}{type="service.health.recovered",severity="info"}`, values: '_x20 1200x100' },
          { series: 'svc_host_disk_total_bytes', values: '100x100' },
          { series: 'svc_host_disk_free_bytes', values: '50x10 8x90' },
          { series: 'svc_snapshot_over_limit_total{app="ledger",database="ledger"}', values: '0x10 2x100' },
        ],
        alert_rule_test: [
          quiet('SvcTaskOOMRisk', '20m'),
          fires('SvcTaskOOMRisk', '45m', { severity: 'critical', app: 'a', process: 'web', task: 'web' }, oom),
          quiet('SvcTaskOOMRisk', '100m'),
          {
            eval_time: '130m',
            alertname: 'SvcTaskOOMRisk',
            exp_alerts: [
              { exp_labels: { severity: 'critical', app: 'a', process: 'web', task: 'web' }, exp_annotations: oom },
              {
                exp_labels: { severity: 'critical', app: 'b', process: 'worker', task: 'worker' },
                exp_annotations: { ...oom, summary: 'b/worker task worker was OOM killed' },
              },
            ],
          },
          fires(
            'SvcTaskRestartLoop',
            '20m',
            { severity: 'warning', app: 't', process: 'p2', task: 'p2' },
            {
              summary: 't/p2 task p2 restarts in a loop',
              description: 'More than 3 restarts within the last hour (4); `svc status t` shows the last exit.',
            },
          ),
          quiet('SvcTaskRestartLoop', '95m'),
          quiet('SvcCronMissedRun', '5m'),
          fires(
            'SvcCronMissedRun',
            '15m',
            { severity: 'critical', app: 'r', process: 'nightly' },
            {
              summary: 'r/nightly missed its scheduled run',
              description:
                'The latest expected run of r/nightly did not start within 5 minutes of its time (paused jobs excluded).',
            },
          ),
          quiet('SvcCronMissedRun', '25m'),
          quiet('SvcDeployFailed', '5m'),
          fires(
            'SvcDeployFailed',
            '15m',
            { severity: 'critical', type: 'deploy.failed' },
            {
              summary: 'A deploy.failed event was recorded',
              description:
                'A deploy or rollback failed within the last 15 minutes; `svc events --type deploy.failed` shows the app and the failed step.',
            },
          ),
          quiet('SvcDeployFailed', '30m'),
          quiet('SvcServiceHealthCritical', '4m'),
          fires(
            'SvcServiceHealthCritical',
            '10m',
            { severity: 'critical' },
            {
              summary: 'A registry service is critical',
              description:
                'The latest service.health.critical event is newer than the latest recovery; `svc events --type service.health.critical` names the service.',
            },
          ),
          quiet('SvcServiceHealthCritical', '25m'),
          quiet('SvcHostDiskHeadroomLow', '15m'),
          fires(
            'SvcHostDiskHeadroomLow',
            '25m',
            { severity: 'warning' },
            {
              summary: 'Less than 10% of the data folder disk is free',
              description:
                'Free space is 8% of the file system holding the data folder (releases, snapshots, control.db).',
            },
          ),
          quiet('SvcHostDiskHeadroomCritical', '25m'),
          quiet('SvcSnapshotsOverLimit', '30m'),
          fires(
            'SvcSnapshotsOverLimit',
            '80m',
            { severity: 'warning', app: 'ledger', database: 'ledger' },
            {
              summary: 'ledger keeps more snapshots of ledger than snapshots.keep',
              description:
                '2 dump(s) above the keep count for an hour; preview and apply retention (GET/POST /api/v1/apps/ledger/snapshots/retention).',
            },
          ),
        ],
      },
    ],
  };
  fs.writeFileSync(path.join(dir, 'svc-alerts.test.yml'), YAML.stringify(tests, { lineWidth: 0 }));
  const run = await promtool(dir, 'test', 'rules', 'svc-alerts.test.yml');
  t.is(run.code, 0, run.output);
});
