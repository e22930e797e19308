/**
 * `svc apps` and `svc status <app>`: read apps and their runtime status from the control plane.
 */
import type { Command } from 'commander';
import { apiGet } from '../api-client.js';
import { renderTable } from '../table.js';
import type { AppList, AppView, ProcessScalingView } from '../../openapi/control-plane.types.js';

const conditionStatus = (app: AppView, type: string) => app.conditions.find((c) => c.type === type)?.status ?? '-';

/** Registers `apps` and `status`. */
export function registerApps(program: Command): void {
  program
    .command('apps')
    .description('List discovered apps with their conditions (reads GET /api/apps)')
    .option('--api <url>', 'control plane URL (default SVC_API_URL or http://127.0.0.1:$SVC_PORT)')
    .option('--json', 'print the API answer as JSON')
    .action(async (opts: { api?: string; json?: boolean }) => {
      const { apps } = await apiGet<AppList>('/api/apps', opts);
      if (opts.json) {
        process.stdout.write(JSON.stringify(apps, null, 2) + '\n');
        return;
      }
      const rows = apps.map((app) => [
        app.name,
        app.deploy ? 'yes' : 'no',
        conditionStatus(app, 'Valid'),
        conditionStatus(app, 'Deployed'),
        conditionStatus(app, 'Healthy'),
        conditionStatus(app, 'Ready'),
        app.processes.map((p) => `${p.process} ${p.running}/${p.desiredCount}`).join(', ') || '-',
        app.release?.commit.slice(0, 12) ?? '-',
      ]);
      process.stdout.write(
        renderTable(['APP', 'DEPLOY', 'VALID', 'DEPLOYED', 'HEALTHY', 'READY', 'PROCESSES', 'RELEASE'], rows),
      );
    });
  program
    .command('status <app>')
    .description('Show one app: conditions, processes and allocations (reads GET /api/apps/{id})')
    .option('--api <url>', 'control plane URL')
    .option('--json', 'print the API answer as JSON')
    .action(async (name: string, opts: { api?: string; json?: boolean }) => {
      const app = await apiGet<AppView>(`/api/apps/${encodeURIComponent(name)}`, opts);
      if (opts.json) {
        process.stdout.write(JSON.stringify(app, null, 2) + '\n');
        return;
      }
      const out: string[] = [];
      out.push(
        `app ${app.name}  deploy=${app.deploy}  release=${app.release?.commit.slice(0, 12) ?? '-'}  generation=${app.generation?.slice(0, 12) ?? '-'}  observed=${app.observedGeneration?.slice(0, 12) ?? '-'}\n\n`,
      );
      out.push(
        renderTable(
          ['CONDITION', 'STATUS', 'REASON', 'MESSAGE'],
          app.conditions.map((c) => [c.type, c.status, c.reason, c.message]),
        ),
      );
      for (const finding of app.findings) out.push(`${finding.severity}: ${finding.message}\n`);
      out.push('\n');
      const rows = app.processes.flatMap((p) =>
        p.allocations.length === 0
          ? [[p.process, p.jobType, p.region, `${p.running}/${p.desiredCount}`, '-', '-', '-', '-', '-']]
          : p.allocations.map((a) => [
              p.process,
              p.jobType,
              p.region,
              `${p.running}/${p.desiredCount}`,
              a.id.slice(0, 8),
              a.status + (a.canary ? ' (canary)' : ''),
              String(a.pid ?? '-'),
              `${a.restarts}${a.oomKilled ? ' oom' : ''}`,
              a.health ?? '-',
            ]),
      );
      out.push(
        renderTable(['PROCESS', 'TYPE', 'REGION', 'RUNNING', 'ALLOC', 'STATUS', 'PID', 'RESTARTS', 'HEALTH'], rows),
      );
      const scaling = app.scaling ?? [];
      if (scaling.length > 0) {
        out.push('\n');
        out.push(
          renderTable(['PROCESS', 'SCALING', 'BOUNDS', 'METRIC', 'NOW', 'LAST CHANGE'], scaling.map(scalingRow)),
        );
      }
      process.stdout.write(out.join(''));
    });
}

/** One row of the scaling table: mode, bounds, the metric against its target, the last change and why. */
function scalingRow(s: ProcessScalingView): string[] {
  const bounds = `${s.min}..${s.max ?? s.min}${s.per_region === null ? '' : ` (per region ${s.per_region})`}`;
  const metric = s.auto ? `${s.auto.metric} target ${s.auto.target}` : '-';
  const now =
    s.mode !== 'autoscaled'
      ? (s.reason ?? '-')
      : s.value === null
        ? (s.reason ?? 'not evaluated yet')
        : `${s.value} per allocation, asks ${s.recommended}`;
  const change = s.lastChange
    ? `${s.lastChange.from} -> ${s.lastChange.to} by ${s.lastChange.source} ${s.lastChange.at}: ${s.lastChange.reason}`
    : '-';
  return [
    s.process,
    s.mode + (s.windowMs === null ? '' : ` (window ${s.windowMs / 1000} s)`),
    bounds,
    metric,
    now,
    change,
  ];
}
