/**
 * `svc events` (list, active incidents) and `svc notifications bootstrap` (webhook channel for the
 * event sink gateway found in the registry).
 */
import type { Command } from 'commander';
import { apiGet, apiPost } from '../api-client.js';
import { renderTable } from '../table.js';
import { planNotificationBootstrap, type ManifestServiceLike } from '../../domain/events/notification-bootstrap.js';

interface EventView {
  id: string;
  type: string;
  severity: string;
  state: string;
  app: string;
  title: string;
  occurredAt: string;
  correlationKey: string;
}
interface IncidentView {
  correlationKey: string;
  source: string;
  app: string;
  environment: string;
  severity: string;
  eventCount: number;
  firstSeen: string;
  lastSeen: string;
  representative: EventView;
}

/** Registers `events` and `notifications`. */
export function registerEvents(program: Command): void {
  const events = program.command('events').description('List events and active incidents (reads GET /api/events)');
  events
    .command('list', { isDefault: true })
    .description('List recent events, newest first')
    .option('--api <url>', 'control plane URL')
    .option('--app <app>', 'only this app')
    .option('--type <type>', 'only this event type')
    .option('--severity <severity>', 'info, warning or critical')
    .option('--limit <n>', 'at most this many (capped at 200)', '50')
    .option('--json', 'print the API answer as JSON')
    .action(
      async (opts: { api?: string; app?: string; type?: string; severity?: string; limit: string; json?: boolean }) => {
        const query = new URLSearchParams({ limit: opts.limit });
        if (opts.app) query.set('app', opts.app);
        if (opts.type) query.set('type', opts.type);
        if (opts.severity) query.set('severity', opts.severity);
        const page = await apiGet<{ events: EventView[]; total: number }>(`/api/events?${query}`, opts);
        if (opts.json) return void process.stdout.write(JSON.stringify(page, null, 2) + '\n');
        process.stdout.write(
          renderTable(
            ['ID', 'OCCURRED', 'SEVERITY', 'STATE', 'TYPE', 'APP', 'TITLE'],
            page.events.map((e) => [e.id, e.occurredAt, e.severity, e.state, e.type, e.app || '-', e.title]),
          ),
        );
      },
    );
  events
    .command('active')
    .description('List unresolved incident groups (reads GET /api/events/active)')
    .option('--api <url>', 'control plane URL')
    .option('--json', 'print the API answer as JSON')
    .action(async (opts: { api?: string; json?: boolean }) => {
      const { incidents } = await apiGet<{ incidents: IncidentView[] }>('/api/events/active', opts);
      if (opts.json) return void process.stdout.write(JSON.stringify(incidents, null, 2) + '\n');
      process.stdout.write(
        renderTable(
          ['CORRELATION KEY', 'SEVERITY', 'APP', 'ENV', 'EVENTS', 'FIRST SEEN', 'LAST SEEN', 'LATEST'],
          incidents.map((i) => [
            i.correlationKey,
            i.severity,
            i.app || '-',
            i.environment,
            String(i.eventCount),
            i.firstSeen,
            i.lastSeen,
            i.representative.title,
          ]),
        ),
      );
    });
  const notifications = program.command('notifications').description('Notification channels');
  notifications
    .command('bootstrap')
    .description(
      'Create a webhook channel (warning and critical) for the event sink gateway found in the registry; skipped when it exists',
    )
    .option('--api <url>', 'control plane URL')
    .option('--dry-run', 'print the plan without creating anything')
    .option('--json', 'print the outcome as JSON')
    .action(async (opts: { api?: string; dryRun?: boolean; json?: boolean }) => {
      const { services } = await apiGet<{ services: ManifestServiceLike[] }>('/api/services/manifest', opts);
      const { channels } = await apiGet<{ channels: { provider: string; url: string }[] }>(
        '/api/notifications/channels',
        opts,
      );
      const plan = planNotificationBootstrap(services, channels);
      let created: unknown;
      if (plan.action === 'create' && !opts.dryRun)
        created = await apiPost('/api/notifications/channels', plan.channel, opts);
      if (opts.json)
        return void process.stdout.write(JSON.stringify({ plan, created: created ?? null }, null, 2) + '\n');
      if (plan.action === 'none') process.stdout.write(`nothing to do: ${plan.reason}\n`);
      else if (plan.action === 'skip') process.stdout.write(`skipped: ${plan.reason} (${plan.url})\n`);
      else
        process.stdout.write(
          `${opts.dryRun ? 'would create' : 'created'} webhook channel "${plan.channel.name}" -> ${plan.channel.url} (warning, critical)\n`,
        );
    });
}
