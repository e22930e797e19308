/**
 * `svc deploy <app>`, `svc preflight <app>` and `svc rollback <app>`: queue the operation and,
 * with --follow, show the pipeline's steps live until the deployment ends.
 */
import type { Command } from 'commander';
import { CliError, ExitCode } from '../cli-error.js';
import { apiPost } from '../api-client.js';
import { followDeployment } from './deploy-client.js';

interface QueuedView {
  sagaId: string;
  deploymentId: string;
  operation: { id: string; kind: string; status: string };
}

interface CommandOptions {
  api?: string;
  ref?: string;
  regions?: string;
  follow?: boolean;
  json?: boolean;
  idempotencyKey?: string;
}

async function queueAndFollow(
  app: string,
  action: 'deploy' | 'preflight' | 'rollback',
  body: Record<string, unknown>,
  opts: CommandOptions,
): Promise<void> {
  const queued = await apiPost<QueuedView>(`/api/apps/${encodeURIComponent(app)}/${action}`, body, {
    ...(opts.api ? { api: opts.api } : {}),
    ...(opts.idempotencyKey ? { idempotencyKey: opts.idempotencyKey } : {}),
  });
  if (opts.json && !opts.follow) {
    process.stdout.write(JSON.stringify(queued, null, 2) + '\n');
    return;
  }
  process.stdout.write(
    `${action} of ${app} queued: operation ${queued.operation.id}, saga ${queued.sagaId}, deployment ${queued.deploymentId}\n`,
  );
  if (!opts.follow) return;
  const final = await followDeployment(queued.deploymentId, opts.api ? { api: opts.api } : {});
  const d = final.deployment;
  process.stdout.write(
    `${d.kind} ${d.status}${d.commit ? ` at ${d.commit.slice(0, 12)}` : ''}${d.message ? `: ${d.message}` : ''}\n`,
  );
  if (d.status !== 'succeeded')
    throw new CliError(
      `${d.kind} of ${app} ${d.status}${d.failedStep ? ` at ${d.failedStep}` : ''}${d.message ? `: ${d.message}` : ''}`,
      ExitCode.failed,
      { deployment: d.id, saga: d.sagaId },
    );
}

/** Registers `deploy`, `preflight` and `rollback`. */
export function registerDeploy(program: Command): void {
  const common = (command: Command) =>
    command
      .option('--api <url>', 'control plane URL (default SVC_API_URL or http://127.0.0.1:$SVC_PORT)')
      .option('--follow', 'show the steps live until the deployment ends (exit 1 unless it succeeded)')
      .option('--json', 'print the queued answer as JSON')
      .option(
        '--idempotency-key <key>',
        'Idempotency-Key header: a retry with the same key answers the original response',
      );
  common(
    program
      .command('deploy <app>')
      .description('Queue a deploy (POST /api/apps/{id}/deploy)')
      .option('--ref <ref>', 'git ref to deploy (default HEAD)'),
  ).action((app: string, opts: CommandOptions) =>
    queueAndFollow(app, 'deploy', opts.ref ? { ref: opts.ref } : {}, opts),
  );
  common(
    program
      .command('preflight <app>')
      .description('Queue a read-only preflight: validate, clone, inspect, build, test (POST /api/apps/{id}/preflight)')
      .option('--ref <ref>', 'git ref (default HEAD)'),
  ).action((app: string, opts: CommandOptions) =>
    queueAndFollow(app, 'preflight', opts.ref ? { ref: opts.ref } : {}, opts),
  );
  common(
    program
      .command('rollback <app>')
      .description('Queue a rollback to the last successful release (POST /api/apps/{id}/rollback)')
      .option('--regions <list>', 'comma-separated regions (default all)'),
  ).action((app: string, opts: CommandOptions) =>
    queueAndFollow(
      app,
      'rollback',
      opts.regions
        ? {
            regions: opts.regions
              .split(',')
              .map((r) => r.trim())
              .filter(Boolean),
          }
        : {},
      opts,
    ),
  );
}
