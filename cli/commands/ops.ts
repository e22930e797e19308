/**
 * `svc ops [id]`: the active operation queue and drain state, or one operation with its attempts.
 */
import type { Command } from 'commander';
import { apiGet } from '../api-client.js';
import { renderTable } from '../table.js';

interface OperationView {
  id: string;
  kind: string;
  status: string;
  app: string | null;
  ref: string | null;
  sagaId: string | null;
  attempts: number;
  maxAttempts: number;
  stage: string | null;
  lockOwner: string | null;
  lockExpiresAt: string | null;
  lastError: string | null;
  createdAt: string;
  attemptHistory?: {
    attempt: number;
    owner: string;
    startedAt: string;
    endedAt: string | null;
    outcome: string | null;
  }[];
}

interface ActiveView {
  operations: OperationView[];
  counts: Record<string, number>;
  drain: { draining: boolean; mode: string; workerEnabled: boolean; owner: string; running: number };
}

/** Registers `ops`. */
export function registerOps(program: Command): void {
  program
    .command('ops [id]')
    .description(
      'Show queued and running operations with the drain state (GET /api/operations/active), or one operation (GET /api/v1/operations/{id})',
    )
    .option('--api <url>', 'control plane URL')
    .option('--json', 'print the API answer as JSON')
    .action(async (id: string | undefined, opts: { api?: string; json?: boolean }) => {
      if (id) {
        const op = await apiGet<OperationView>(`/api/v1/operations/${encodeURIComponent(id)}`, opts);
        if (opts.json) return void process.stdout.write(JSON.stringify(op, null, 2) + '\n');
        const lines = [
          `operation ${op.id}  ${op.kind}  ${op.status}  app=${op.app ?? '-'}  ref=${op.ref ?? '-'}  saga=${op.sagaId ?? '-'}`,
          `attempts ${op.attempts}/${op.maxAttempts}  stage=${op.stage ?? '-'}  lock=${op.lockOwner ?? '-'}${op.lockExpiresAt ? ` until ${op.lockExpiresAt}` : ''}`,
          ...(op.lastError ? [`last error: ${op.lastError}`] : []),
          '',
        ];
        process.stdout.write(lines.join('\n') + '\n');
        process.stdout.write(
          renderTable(
            ['ATTEMPT', 'OWNER', 'STARTED', 'ENDED', 'OUTCOME'],
            (op.attemptHistory ?? []).map((a) => [
              String(a.attempt),
              a.owner,
              a.startedAt,
              a.endedAt ?? '-',
              a.outcome ?? 'running',
            ]),
          ),
        );
        return;
      }
      const active = await apiGet<ActiveView>('/api/operations/active', opts);
      if (opts.json) return void process.stdout.write(JSON.stringify(active, null, 2) + '\n');
      const d = active.drain;
      process.stdout.write(
        `worker ${d.workerEnabled ? 'enabled' : 'disabled'}  draining=${d.draining}  drain mode=${d.mode}  running here=${d.running}\n`,
      );
      process.stdout.write(
        `totals: ${Object.entries(active.counts)
          .map(([k, v]) => `${k} ${v}`)
          .join(', ')}\n\n`,
      );
      process.stdout.write(
        renderTable(
          ['ID', 'KIND', 'APP', 'STATUS', 'ATTEMPTS', 'STAGE', 'CREATED'],
          active.operations.map((o) => [
            o.id,
            o.kind,
            o.app ?? '-',
            o.status,
            `${o.attempts}/${o.maxAttempts}`,
            o.stage ?? '-',
            o.createdAt,
          ]),
        ),
      );
    });
}
