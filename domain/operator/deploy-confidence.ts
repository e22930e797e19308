/**
 * Deploy confidence of one app: how much an operator can trust the next deploy, from its recent
 * deployment records, the state of its source (uncommitted or undeployed changes), canaries and
 * the automatic rollback policy. Every lowered level names its reason.
 */
import type { OperatorRisk } from './operator-risk.js';
import { shortText } from './secret-safety.js';

/** How much to trust the next deploy. */
export const Confidence = { high: 'high', medium: 'medium', low: 'low', unknown: 'unknown' } as const;
export type Confidence = (typeof Confidence)[keyof typeof Confidence];

/** One deployment record, newest first in the facts. */
export interface DeploymentFacts {
  readonly id: string;
  readonly sagaId: string;
  readonly operationId: string | null;
  readonly kind: 'deploy' | 'preflight' | 'rollback';
  readonly status: string;
  readonly ref: string | null;
  readonly commit: string | null;
  readonly failedStep: string | null;
  readonly message: string | null;
  readonly trigger: string;
  readonly createdAt: string;
  readonly finishedAt: string | null;
}

/** What is known about the app's source. */
export type SourceEvidence =
  | {
      /** Built from its folder in the apps repository (a git checkout the platform can inspect). */
      readonly kind: 'apps-repository';
      readonly folder: string;
      /** Paths under the folder with uncommitted changes (`git status --porcelain`), at most a few. */
      readonly dirtyPaths: readonly string[];
      readonly dirtyCount: number;
      /** HEAD of the apps repository. */
      readonly head: string | null;
      /** Commits touching the folder after the deployed commit; null when nothing is deployed or unknown. */
      readonly undeployedCommits: number | null;
    }
  | { readonly kind: 'repository'; readonly url: string; readonly branch: string }
  | { readonly kind: 'unavailable'; readonly reason: string };

/** The facts of one app. */
export interface DeployConfidenceFacts {
  readonly app: string;
  readonly deploy: boolean;
  readonly autoRollback: boolean;
  /** Commit of the running release, if any. */
  readonly releaseCommit: string | null;
  readonly deployments: readonly DeploymentFacts[];
  readonly source: SourceEvidence;
  /** Processes that declare canaries. */
  readonly canaries: readonly {
    readonly process: string;
    readonly count: number;
    readonly evaluateAfter: string | null;
  }[];
  /** Jobs with canaries waiting for promotion now. */
  readonly awaitingPromotion: readonly string[];
}

/** The confidence view of one app. */
export interface DeployConfidenceView {
  readonly app: string;
  readonly confidence: Confidence;
  readonly reasons: readonly OperatorRisk[];
  /** Status of the newest deploy or rollback. */
  readonly lastStatus: string | null;
  readonly latest: DeploymentFacts | null;
  readonly recent: readonly DeploymentFacts[];
  readonly releaseCommit: string | null;
  readonly source: SourceEvidence & { readonly dirty: boolean | null };
  readonly canaries: DeployConfidenceFacts['canaries'];
  readonly awaitingPromotion: readonly string[];
  readonly deployPolicy: { readonly autoRollback: boolean };
}

const FAILED = new Set(['failed', 'rolled_back']);
const IN_FLIGHT = new Set(['queued', 'running']);

function level(reasons: readonly OperatorRisk[], base: Confidence): Confidence {
  if (reasons.some((r) => r.severity === 'critical')) return 'low';
  if (reasons.some((r) => r.severity === 'warning')) return base === 'unknown' ? 'unknown' : 'medium';
  return base;
}

/** Assesses one app. Preflights count as evidence only when they failed after the last deploy. */
export function assessDeployConfidence(facts: DeployConfidenceFacts): DeployConfidenceView {
  const recent = facts.deployments.map((d) => ({ ...d, message: shortText(d.message), ref: d.ref }));
  const releases = recent.filter((d) => d.kind !== 'preflight');
  const latest = releases[0] ?? null;
  const reasons: OperatorRisk[] = [];
  const app = facts.app;
  if (!latest)
    reasons.push({
      code: 'deploy.never_deployed',
      severity: 'info',
      message: `${app}: no deploy or rollback recorded yet`,
    });
  if (latest && FAILED.has(latest.status)) {
    reasons.push({
      code: `deploy.last_${latest.status}`,
      severity: 'critical',
      message: `${app}: the last ${latest.kind} ${latest.status === 'rolled_back' ? 'was rolled back' : 'failed'}${latest.failedStep ? ` at step ${latest.failedStep}` : ''}`,
    });
  }
  if (latest && IN_FLIGHT.has(latest.status))
    reasons.push({
      code: 'deploy.in_progress',
      severity: 'warning',
      message: `${app}: a ${latest.kind} is ${latest.status}`,
    });
  const lastThree = releases.slice(0, 3);
  if (lastThree.length === 3 && lastThree.filter((d) => FAILED.has(d.status)).length >= 2) {
    reasons.push({
      code: 'deploy.unstable',
      severity: 'critical',
      message: `${app}: ${lastThree.filter((d) => FAILED.has(d.status)).length} of the last 3 deploys failed`,
    });
  }
  const newestPreflight = recent.find((d) => d.kind === 'preflight');
  if (
    newestPreflight &&
    newestPreflight.status === 'failed' &&
    (!latest || newestPreflight.createdAt >= latest.createdAt)
  ) {
    reasons.push({
      code: 'deploy.preflight_failed',
      severity: 'warning',
      message: `${app}: the latest preflight failed${newestPreflight.failedStep ? ` at step ${newestPreflight.failedStep}` : ''}`,
    });
  }
  let dirty: boolean | null = null;
  if (facts.source.kind === 'apps-repository') {
    dirty = facts.source.dirtyCount > 0;
    if (dirty)
      reasons.push({
        code: 'source.dirty',
        severity: 'warning',
        message: `${app}: ${facts.source.dirtyCount} uncommitted change(s) in ${facts.source.folder}; a deploy takes the committed tree, not these edits`,
      });
    const pending = facts.source.undeployedCommits;
    if (pending !== null && pending > 0)
      reasons.push({
        code: 'source.undeployed_commits',
        severity: 'info',
        message: `${app}: ${pending} commit(s) to ${facts.source.folder} are not deployed yet`,
      });
  } else if (facts.source.kind === 'unavailable') {
    reasons.push({
      code: 'source.unavailable',
      severity: 'info',
      message: `${app}: source state unknown (${facts.source.reason})`,
    });
  }
  if (!facts.autoRollback)
    reasons.push({
      code: 'policy.no_auto_rollback',
      severity: 'warning',
      message: `${app}: deployPolicy.autoRollback is false; a failed health gate is not rolled back automatically`,
    });
  if (facts.awaitingPromotion.length > 0)
    reasons.push({
      code: 'canary.awaiting_promotion',
      severity: 'warning',
      message: `${app}: canaries await promotion in ${facts.awaitingPromotion.join(', ')}`,
    });
  if (!facts.deploy)
    reasons.push({
      code: 'deploy.disabled',
      severity: 'info',
      message: `${app}: deploy is false in the spec; the app does not run`,
    });
  const base: Confidence = latest ? 'high' : 'unknown';
  return {
    app,
    confidence: level(reasons, base),
    reasons,
    lastStatus: latest?.status ?? null,
    latest,
    recent,
    releaseCommit: facts.releaseCommit,
    source: { ...facts.source, dirty },
    canaries: facts.canaries,
    awaitingPromotion: facts.awaitingPromotion,
    deployPolicy: { autoRollback: facts.autoRollback },
  };
}
