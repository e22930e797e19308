/**
 * `svc platform upgrade|preflight|smoke|releases|show`: the platform self-upgrade lane from the
 * command line (the host agent runs it; these commands queue and follow it through the API).
 */
import path from 'node:path';
import type { Command } from 'commander';
import { apiGet, apiPost, type ApiClientOptions } from '../api-client.js';
import { ApiError, CliError, ExitCode } from '../cli-error.js';
import { renderTable } from '../table.js';
import { isFetchSelector } from '../../domain/platform/index.js';

interface LaneStepView {
  attempt: number;
  step: string;
  status: string;
  message: string | null;
  startedAt: string;
  endedAt: string | null;
}

interface LaneView {
  operation: {
    id: string;
    kind: string;
    status: string;
    attempts: number;
    lastError: string | null;
    result: Record<string, unknown> | null;
  };
  upgrade: {
    phase: string;
    fromRelease: string | null;
    toRelease: string | null;
    drainMode: string;
    message: string | null;
  } | null;
  steps: LaneStepView[];
}

interface ReleasesView {
  runningRelease: string | null;
  current: { label: string; commit: string | null } | null;
  builds: {
    id: string;
    label: string;
    tag: string | null;
    commit: string | null;
    sha256: string;
    verification: string;
    createdAt: string;
    promotedAt: string | null;
    prunedAt: string | null;
    current: boolean;
  }[];
  operations: {
    id: string;
    kind: string;
    status: string;
    ref: string | null;
    lastError: string | null;
    createdAt: string;
    upgrade: { phase: string; fromRelease: string | null; toRelease: string | null } | null;
  }[];
}

const TERMINAL = new Set(['succeeded', 'failed', 'cancelled']);

function seconds(step: LaneStepView): string {
  if (!step.endedAt) return '';
  return `${((Date.parse(step.endedAt) - Date.parse(step.startedAt)) / 1000).toFixed(1)}s`;
}

/**
 * Prints each lane step as it starts and ends until the operation is terminal. The API restarts
 * during an upgrade: an unreachable API is retried for up to `unreachableMs`.
 */
export async function followLane(
  id: string,
  options: ApiClientOptions & { intervalMs?: number; unreachableMs?: number; write?: (text: string) => void } = {},
): Promise<LaneView> {
  const write = options.write ?? ((text: string) => process.stdout.write(text));
  const printed = new Map<string, string>();
  let unreachableSince: number | undefined;
  for (;;) {
    let view: LaneView;
    try {
      view = await apiGet<LaneView>(`/api/platform/operations/${encodeURIComponent(id)}`, options);
      unreachableSince = undefined;
    } catch (error) {
      if (!(error instanceof ApiError) || error.status !== 0) throw error;
      unreachableSince ??= Date.now();
      if (Date.now() - unreachableSince > (options.unreachableMs ?? 120_000)) throw error;
      await new Promise((resolve) => setTimeout(resolve, options.intervalMs ?? 300));
      continue;
    }
    for (const step of view.steps) {
      const key = `${step.attempt}:${step.step}:${step.startedAt}`;
      if (printed.get(key) === step.status) continue;
      if (step.status === 'running') write(`  ${step.step.padEnd(10)} running\n`);
      else
        write(
          `  ${step.step.padEnd(10)} ${step.status.padEnd(9)} ${seconds(step).padStart(6)}  ${step.message ?? ''}\n`,
        );
      printed.set(key, step.status);
    }
    if (TERMINAL.has(view.operation.status)) return view;
    await new Promise((resolve) => setTimeout(resolve, options.intervalMs ?? 300));
  }
}

/** A folder or archive argument becomes absolute (the agent runs elsewhere); `git:<ref>` and a tag `platform-<sha>` are kept. */
function sourceArgument(source: string): string {
  return source.startsWith('git:') || isFetchSelector(source) ? source : path.resolve(source);
}

async function queueAndMaybeFollow(
  kind: 'upgrade' | 'preflight' | 'smoke',
  body: Record<string, unknown>,
  opts: ApiClientOptions & { follow?: boolean; json?: boolean },
): Promise<void> {
  const queued = await apiPost<{ operation: { id: string; kind: string }; agentStarted: boolean }>(
    `/api/platform/${kind}`,
    body,
    opts,
  );
  if (!opts.follow) {
    if (opts.json) return void process.stdout.write(JSON.stringify(queued, null, 2) + '\n');
    process.stdout.write(
      `queued ${queued.operation.kind} ${queued.operation.id}${queued.agentStarted ? ' (host agent started)' : ''}\n`,
    );
    return;
  }
  process.stdout.write(`${queued.operation.kind} ${queued.operation.id}\n`);
  const view = await followLane(queued.operation.id, opts);
  if (opts.json) process.stdout.write(JSON.stringify(view, null, 2) + '\n');
  else
    process.stdout.write(
      `${view.operation.kind} ${view.operation.status}${view.upgrade ? ` (${view.upgrade.phase})` : ''}${view.operation.lastError ? `: ${view.operation.lastError}` : ''}\n`,
    );
  if (view.operation.status !== 'succeeded') process.exitCode = ExitCode.failed;
}

/** Registers `platform` and its subcommands. */
export function registerPlatform(program: Command): void {
  const platform = program
    .command('platform')
    .description('The platform self-upgrade lane: releases on disk, preflight, upgrade, smoke checks');
  platform
    .command('upgrade <source>')
    .description(
      'Upgrade the platform to <source>: a release artifact (svc-<version>-linux-<arch>.tar.gz, checked against its .sha256 when beside it and its .sig with SVC_RELEASE_PUBLIC_KEY, or its unpacked folder), a release tag platform-<full sha> (fetched by SVC_RELEASE_FETCH_HOOK), a built checkout folder, or git:<ref>; stage, verify, candidate, drain, promote, restart the API, postflight (rolled back when it fails)',
    )
    .option('--label <label>', 'display label of the release')
    .option('--drain-mode <mode>', 'fail, wait or force (default SVC_DRAIN_MODE)')
    .option('--follow', 'print each step until the upgrade ends (exit 1 unless it succeeded)')
    .option('--api <url>', 'control plane URL')
    .option('--json', 'print the API answer as JSON')
    .action(
      async (
        source: string,
        opts: ApiClientOptions & { label?: string; drainMode?: string; follow?: boolean; json?: boolean },
      ) => {
        if (opts.drainMode !== undefined && !['fail', 'wait', 'force'].includes(opts.drainMode))
          throw new CliError(`--drain-mode must be fail, wait or force, got "${opts.drainMode}"`, ExitCode.usage);
        await queueAndMaybeFollow(
          'upgrade',
          {
            source: sourceArgument(source),
            ...(opts.label ? { label: opts.label } : {}),
            ...(opts.drainMode ? { drainMode: opts.drainMode } : {}),
          },
          opts,
        );
      },
    );
  platform
    .command('preflight <source>')
    .description(
      'Stage and verify a release and check a candidate API on it, without promoting it; <source> is a release artifact (.tar.gz or its unpacked folder), a release tag platform-<full sha>, a built checkout folder, or git:<ref>',
    )
    .option('--label <label>', 'display label of the release')
    .option('--follow', 'print each step until it ends')
    .option('--api <url>', 'control plane URL')
    .option('--json', 'print the API answer as JSON')
    .action(async (source: string, opts: ApiClientOptions & { label?: string; follow?: boolean; json?: boolean }) => {
      await queueAndMaybeFollow(
        'preflight',
        { source: sourceArgument(source), ...(opts.label ? { label: opts.label } : {}) },
        opts,
      );
    });
  platform
    .command('smoke')
    .description('Postflight checks of the running API on demand (health, and the version naming the current release)')
    .option('--follow', 'print each step until it ends')
    .option('--api <url>', 'control plane URL')
    .option('--json', 'print the API answer as JSON')
    .action(async (opts: ApiClientOptions & { follow?: boolean; json?: boolean }) => {
      await queueAndMaybeFollow('smoke', {}, opts);
    });
  platform
    .command('show <id>')
    .description('One lane operation with its phase and steps')
    .option('--api <url>', 'control plane URL')
    .option('--json', 'print the API answer as JSON')
    .action(async (id: string, opts: ApiClientOptions & { json?: boolean }) => {
      const view = await apiGet<LaneView>(`/api/platform/operations/${encodeURIComponent(id)}`, opts);
      if (opts.json) return void process.stdout.write(JSON.stringify(view, null, 2) + '\n');
      const u = view.upgrade;
      process.stdout.write(
        `${view.operation.kind} ${view.operation.id}  ${view.operation.status}${u ? `  phase=${u.phase}  ${u.fromRelease ?? '-'} -> ${u.toRelease ?? '-'}  drain=${u.drainMode}` : ''}\n`,
      );
      if (view.operation.lastError) process.stdout.write(`last error: ${view.operation.lastError}\n`);
      process.stdout.write(
        renderTable(
          ['ATTEMPT', 'STEP', 'STATUS', 'TIME', 'MESSAGE'],
          view.steps.map((s) => [String(s.attempt), s.step, s.status, seconds(s), s.message ?? '']),
        ),
      );
    });
  platform
    .command('releases')
    .description(
      'Platform releases (label, tag platform-<commit>, SHA-256, signature verdict, whether still on disk: SVC_RELEASE_KEEP) and recent lane operations (GET /api/platform/releases)',
    )
    .option('--api <url>', 'control plane URL')
    .option('--json', 'print the API answer as JSON')
    .action(async (opts: ApiClientOptions & { json?: boolean }) => {
      const view = await apiGet<ReleasesView>('/api/platform/releases', opts);
      if (opts.json) return void process.stdout.write(JSON.stringify(view, null, 2) + '\n');
      process.stdout.write(
        `running: ${view.current?.label ?? 'unknown'} (release ${view.runningRelease ?? 'none: a checkout'})\n\n`,
      );
      process.stdout.write(
        renderTable(
          ['', 'RELEASE', 'LABEL', 'TAG', 'SHA-256', 'SIGNATURE', 'PROMOTED', 'ON DISK'],
          view.builds.map((b) => [
            b.current ? '*' : '',
            b.id,
            b.label,
            b.tag ?? '-',
            b.sha256.slice(0, 16),
            b.verification,
            b.promotedAt ?? '-',
            b.prunedAt === null ? 'yes' : `removed ${b.prunedAt}`,
          ]),
        ),
      );
      process.stdout.write('\n');
      process.stdout.write(
        renderTable(
          ['OPERATION', 'KIND', 'STATUS', 'PHASE', 'FROM -> TO', 'CREATED'],
          view.operations.map((o) => [
            o.id,
            o.kind,
            o.status,
            o.upgrade?.phase ?? '-',
            o.upgrade ? `${o.upgrade.fromRelease ?? '-'} -> ${o.upgrade.toRelease ?? '-'}` : '-',
            o.createdAt,
          ]),
        ),
      );
    });
}
