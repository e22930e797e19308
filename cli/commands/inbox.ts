/**
 * `svc inbox [--app A]`: what needs an operator now (GET /api/operator/inbox): incidents,
 * failed and running operations, deploy, cron and snapshot risks, secret issues, wake targets.
 */
import type { Command } from 'commander';
import { ExitCode } from '../cli-error.js';
import { apiGet } from '../api-client.js';
import { renderTable } from '../table.js';

interface Risk {
  app: string;
  process?: string;
  code: string;
  severity: string;
  message: string;
}

interface Listed<T> {
  items: T[];
  total: number;
  truncated: boolean;
}

interface InboxView {
  summary: Record<string, number>;
  incidents: Listed<{
    severity: string;
    app: string;
    correlationKey: string;
    eventCount: number;
    lastSeen: string;
    representative: { title: string };
  }>;
  operations: {
    active: Listed<{ id: string; kind: string; status: string; app: string | null; stage: string | null }>;
    failed: Listed<{ id: string; kind: string; app: string | null; lastError: string | null }>;
  };
  deployRisks: Listed<Risk>;
  cronRisks: Listed<Risk>;
  snapshots: { risks: Listed<Risk> };
  secrets: { issues: number };
  wakeTargets: { total: number; byReadiness: Record<string, number> };
}

/** `name (n more)` when a list was cut. */
const more = (list: Listed<unknown>) => (list.truncated ? ` (${list.total - list.items.length} more)` : '');

/** Registers `inbox`. */
export function registerInbox(program: Command): void {
  program
    .command('inbox')
    .description(
      'What needs attention now: incidents, failed and running operations, deploy, cron and snapshot risks, secret issues (GET /api/operator/inbox); exits 2 when something is critical',
    )
    .option('--app <app>', 'only this app')
    .option('--limit <n>', 'most rows per section', '10')
    .option('--api <url>', 'control plane URL')
    .option('--json', 'print the API answer as JSON')
    .action(async (opts: { app?: string; limit: string; api?: string; json?: boolean }) => {
      const query = new URLSearchParams({ limit: opts.limit, ...(opts.app ? { app: opts.app } : {}) });
      const inbox = await apiGet<InboxView>(`/api/operator/inbox?${query.toString()}`, opts);
      if (opts.json) {
        process.stdout.write(JSON.stringify(inbox, null, 2) + '\n');
      } else {
        const s = inbox.summary;
        const out: string[] = [
          `critical ${s.critical ?? 0}, warning ${s.warning ?? 0}: ${s.incidents ?? 0} incidents, ${s.failedOperations ?? 0} failed and ${s.activeOperations ?? 0} active operations, ${s.deployRisks ?? 0} deploy, ${s.cronRisks ?? 0} cron and ${s.snapshotRisks ?? 0} snapshot risks, ${inbox.secrets.issues} secret issues; wake targets ${
            Object.entries(inbox.wakeTargets.byReadiness)
              .map(([k, v]) => `${k} ${v}`)
              .join(', ') || 'none'
          }`,
        ];
        if (inbox.incidents.items.length > 0)
          out.push(
            '',
            `INCIDENTS${more(inbox.incidents)}`,
            renderTable(
              ['SEVERITY', 'APP', 'KEY', 'EVENTS', 'LAST SEEN', 'TITLE'],
              inbox.incidents.items.map((i) => [
                i.severity,
                i.app,
                i.correlationKey,
                String(i.eventCount),
                i.lastSeen,
                i.representative.title,
              ]),
            ).trimEnd(),
          );
        if (inbox.operations.failed.items.length > 0)
          out.push(
            '',
            `FAILED OPERATIONS${more(inbox.operations.failed)}`,
            renderTable(
              ['ID', 'KIND', 'APP', 'ERROR'],
              inbox.operations.failed.items.map((o) => [o.id, o.kind, o.app ?? '-', o.lastError ?? '-']),
            ).trimEnd(),
          );
        if (inbox.operations.active.items.length > 0)
          out.push(
            '',
            `ACTIVE OPERATIONS${more(inbox.operations.active)}`,
            renderTable(
              ['ID', 'KIND', 'APP', 'STATUS', 'STAGE'],
              inbox.operations.active.items.map((o) => [o.id, o.kind, o.app ?? '-', o.status, o.stage ?? '-']),
            ).trimEnd(),
          );
        const risks = [
          ...inbox.deployRisks.items.map((r) => ['deploy', r] as const),
          ...inbox.cronRisks.items.map((r) => ['cron', r] as const),
          ...inbox.snapshots.risks.items.map((r) => ['snapshot', r] as const),
        ];
        if (risks.length > 0)
          out.push(
            '',
            'RISKS',
            renderTable(
              ['AREA', 'SEVERITY', 'APP', 'CODE', 'MESSAGE'],
              risks.map(([area, r]) => [
                area,
                r.severity,
                r.process ? `${r.app}/${r.process}` : r.app,
                r.code,
                r.message,
              ]),
            ).trimEnd(),
          );
        process.stdout.write(out.join('\n') + '\n');
      }
      if ((inbox.summary.critical ?? 0) > 0) process.exitCode = ExitCode.critical;
    });
}
