/**
 * Reads the facts of deploy confidence: recent deployment records, the running release, canaries
 * (declared and awaiting promotion) and the source evidence of the apps repository (uncommitted
 * changes under an app's folder, commits to it that are not deployed). Git runs at most twice per
 * read plus once per app and deployed commit; no value of any file is read.
 */
import path from 'node:path';
import {
  assessDeployConfidence,
  redactCredentials,
  type DeployConfidenceView,
  type DeploymentFacts,
  type SourceEvidence,
} from '../../domain/operator/index.js';
import { runGit } from '../../platform/git/index.js';
import type { Db } from '../../store/database.js';
import { hasSpec, listApps } from '../../store/control/apps.js';
import { listDeployments } from '../../store/control/deployments.js';
import type { SchedulerTargets } from '../apps/scheduler-targets.js';

/** Where the deploy facts come from. */
export interface DeploySources {
  readonly db: Db;
  readonly targets: SchedulerTargets;
  readonly appsDir: string;
}

/** The state of the apps repository at one read. */
interface RepositoryState {
  readonly head: string | null;
  /** Changed paths relative to the apps folder. */
  readonly changed: readonly string[];
  readonly error: string | null;
}

const GIT_TIMEOUT_MS = 10_000;
const SHOWN_PATHS = 10;

/** Parses `git status --porcelain=v1 -z` output into paths (a rename's new path only). */
export function parsePorcelainZ(output: string): string[] {
  const fields = output.split('\0');
  const paths: string[] = [];
  for (let i = 0; i < fields.length; i += 1) {
    const field = fields[i]!;
    if (field.length < 4) continue;
    const status = field.slice(0, 2);
    paths.push(field.slice(3));
    if (status.includes('R') || status.includes('C')) i += 1;
  }
  return paths;
}

async function repositoryState(appsDir: string): Promise<RepositoryState> {
  try {
    const [prefix, head] = (
      await runGit(['rev-parse', '--show-prefix', 'HEAD'], { cwd: appsDir, timeoutMs: GIT_TIMEOUT_MS })
    ).split('\n');
    const status = await runGit(
      ['-c', 'core.quotepath=off', 'status', '--porcelain=v1', '-z', '--untracked-files=all', '--', '.'],
      { cwd: appsDir, timeoutMs: GIT_TIMEOUT_MS },
    );
    const strip = prefix ?? '';
    const changed = parsePorcelainZ(status).map((p) =>
      strip !== '' && p.startsWith(strip) ? p.slice(strip.length) : p,
    );
    return { head: head?.trim() || null, changed, error: null };
  } catch (error) {
    return {
      head: null,
      changed: [],
      error: `the apps folder is not a git checkout with a commit (${(error as Error).message.split('\n')[0]})`,
    };
  }
}

async function undeployedCommits(appsDir: string, commit: string, folder: string): Promise<number | null> {
  if (!/^[0-9a-f]{7,64}$/.test(commit)) return null;
  try {
    return Number(
      (
        await runGit(['rev-list', '--count', `${commit}..HEAD`, '--', folder], {
          cwd: appsDir,
          timeoutMs: GIT_TIMEOUT_MS,
        })
      ).trim(),
    );
  } catch {
    // The deployed commit is not in the apps repository (history rewritten, or another source).
    return null;
  }
}

function deploymentFacts(d: ReturnType<typeof listDeployments>[number]): DeploymentFacts {
  return {
    id: d.id,
    sagaId: d.sagaId,
    operationId: d.operationId,
    kind: d.kind,
    status: d.status,
    ref: d.ref,
    commit: d.commit,
    failedStep: d.failedStep,
    message: d.message,
    trigger: d.trigger,
    createdAt: d.createdAt,
    finishedAt: d.finishedAt,
  };
}

/** Deploy confidence of every app (optionally one), in name order; `limit` recent records each. */
export async function readDeployConfidence(
  sources: DeploySources,
  filter: { readonly app?: string; readonly limit: number },
): Promise<DeployConfidenceView[]> {
  const rows = listApps(sources.db)
    .filter(hasSpec)
    .filter((row) => row.deletedAt === null && (filter.app === undefined || row.name === filter.app))
    .sort((a, b) => a.name.localeCompare(b.name));
  if (rows.length === 0) return [];
  const awaiting = new Map<string, string[]>();
  for (const { scheduler } of await sources.targets.all()) {
    for (const job of await scheduler.listJobs(filter.app === undefined ? {} : { app: filter.app })) {
      if (job.status !== 'running' || job.awaitingPromotion.length === 0) continue;
      awaiting.set(job.spec.app, [...(awaiting.get(job.spec.app) ?? []), job.spec.id]);
    }
  }
  const needsRepository = rows.some((row) => !row.spec.repo?.url);
  const repository = needsRepository ? await repositoryState(sources.appsDir) : undefined;
  const views: DeployConfidenceView[] = [];
  for (const row of rows) {
    const { spec, release } = row;
    const releaseCommit = typeof release?.commit === 'string' ? release.commit : null;
    let source: SourceEvidence;
    if (spec.repo?.url) {
      source = { kind: 'repository', url: redactCredentials(spec.repo.url), branch: spec.repo.branch };
    } else if (!repository || repository.error !== null) {
      source = { kind: 'unavailable', reason: repository?.error ?? 'the apps folder was not inspected' };
    } else {
      const folder = path.dirname(row.file);
      const dirty = repository.changed.filter((p) => p === folder || p.startsWith(`${folder}/`));
      source = {
        kind: 'apps-repository',
        folder,
        dirtyPaths: dirty.slice(0, SHOWN_PATHS),
        dirtyCount: dirty.length,
        head: repository.head,
        undeployedCommits:
          releaseCommit === null ? null : await undeployedCommits(sources.appsDir, releaseCommit, folder),
      };
    }
    views.push(
      assessDeployConfidence({
        app: row.name,
        deploy: spec.deploy,
        autoRollback: spec.deployPolicy.autoRollback,
        releaseCommit,
        deployments: listDeployments(sources.db, { app: row.name, limit: filter.limit }).map(deploymentFacts),
        source,
        canaries: Object.entries(spec.processes)
          .filter(([, p]) => (p.canary?.count ?? 0) > 0)
          .map(([process, p]) => ({ process, count: p.canary!.count!, evaluateAfter: p.canary?.evaluateAfter ?? null }))
          .sort((a, b) => a.process.localeCompare(b.process)),
        awaitingPromotion: awaiting.get(row.name) ?? [],
      }),
    );
  }
  return views;
}
