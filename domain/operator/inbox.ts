/**
 * The operator inbox: what needs attention now, in one read — unresolved incidents, active and
 * standing failed operations, deploy risks, cron risks, snapshot readiness, secret status and wake
 * target counts. Each item is a projection without bodies, payloads or metadata, so nothing an
 * event or operation carried beyond its identity and outcome reaches the inbox.
 */
import type { Operation } from '../operations/index.js';
import { bySeverity, type OperatorRisk, type RiskSeverity } from './operator-risk.js';
import type { SnapshotReadinessFacts } from './platform-rollup.js';
import type { SecretPlan } from './secret-plan.js';
import { shortText } from './secret-safety.js';

/** An unresolved incident group as the event surface's active view shows it. */
export interface IncidentFacts {
  readonly source: string;
  readonly app: string;
  readonly environment: string;
  readonly correlationKey: string;
  readonly severity: string;
  readonly eventCount: number;
  readonly firstSeen: string;
  readonly lastSeen: string;
  readonly representative: {
    readonly id: string;
    readonly type: string;
    readonly title: string;
    readonly state: string;
    readonly occurredAt: string;
  };
}

/** An operation as the inbox shows it. */
export interface InboxOperation {
  readonly id: string;
  readonly kind: string;
  readonly status: string;
  readonly app: string | null;
  readonly ref: string | null;
  readonly sagaId: string | null;
  readonly attempts: number;
  readonly maxAttempts: number;
  readonly stage: string | null;
  readonly lastError: string | null;
  readonly createdAt: string;
  readonly finishedAt: string | null;
  readonly links: { readonly operation: string; readonly saga: string | null };
}

/** A risk tied to an app (and a process, for cron). */
export type AppRisk = OperatorRisk & { readonly app: string; readonly process?: string };

/** Facts of the inbox. */
export interface InboxFacts {
  readonly incidents: readonly IncidentFacts[];
  /** Recent operations (any status), oldest first. */
  readonly operations: readonly Operation[];
  readonly deployRisks: readonly AppRisk[];
  readonly cronRisks: readonly AppRisk[];
  readonly snapshots: readonly SnapshotReadinessFacts[];
  readonly secrets: SecretPlan['summary'];
  readonly wakeTargets: readonly { readonly readiness: string }[];
}

/** Projects an operation for operator views. */
export function inboxOperation(op: Operation): InboxOperation {
  return {
    id: op.id,
    kind: op.kind,
    status: op.status,
    app: op.app,
    ref: op.ref,
    sagaId: op.sagaId,
    attempts: op.attempts,
    maxAttempts: op.maxAttempts,
    stage: op.stage,
    lastError: shortText(op.lastError),
    createdAt: op.createdAt,
    finishedAt: op.finishedAt,
    links: { operation: `/api/v1/operations/${op.id}`, saga: op.sagaId === null ? null : `/api/saga/${op.sagaId}` },
  };
}

/**
 * Failed operations that still stand: no later operation of the same kind and app succeeded.
 * `operations` is oldest first; the answer is newest first.
 */
export function standingFailures(operations: readonly Operation[]): Operation[] {
  const out: Operation[] = [];
  const succeededLater = new Set<string>();
  for (let i = operations.length - 1; i >= 0; i -= 1) {
    const op = operations[i]!;
    const key = `${op.kind}\u0000${op.app ?? ''}`;
    if (op.status === 'succeeded') succeededLater.add(key);
    else if (op.status === 'failed' && !succeededLater.has(key)) out.push(op);
  }
  return out;
}

/** Snapshot risks of the app-owned databases. */
export function snapshotRisks(entries: readonly SnapshotReadinessFacts[]): AppRisk[] {
  const risks: AppRisk[] = [];
  for (const e of entries) {
    if (e.snapshots === 0)
      risks.push({
        app: e.app,
        code: 'snapshot.none',
        severity: 'warning',
        message: `${e.app}: database ${e.database} has no local snapshot`,
      });
    if (e.overLimit > 0)
      risks.push({
        app: e.app,
        code: 'snapshot.over_limit',
        severity: 'info',
        message: `${e.app}: ${e.overLimit} dump(s) of ${e.database} beyond keep ${e.keep}; review and apply retention`,
      });
  }
  return risks;
}

function limited<T>(items: readonly T[], limit: number): { items: T[]; total: number; truncated: boolean } {
  return { items: items.slice(0, limit), total: items.length, truncated: items.length > limit };
}

const SEVERITY_RANK: Record<string, number> = { critical: 0, warning: 1, info: 2 };

/** Builds the inbox; every list holds at most `limit` items and says when it was cut. */
export function buildInbox(facts: InboxFacts, limit: number) {
  const incidents = [...facts.incidents]
    .sort(
      (a, b) =>
        (SEVERITY_RANK[a.severity] ?? 3) - (SEVERITY_RANK[b.severity] ?? 3) || b.lastSeen.localeCompare(a.lastSeen),
    )
    .map((g) => ({
      ...g,
      representative: { ...g.representative, title: shortText(g.representative.title, 300) },
      action: {
        method: 'POST',
        path: '/api/incidents/action',
        body: { correlationKey: g.correlationKey, source: g.source, app: g.app, environment: g.environment },
      },
    }));
  const active = facts.operations.filter((op) => op.status === 'queued' || op.status === 'running').map(inboxOperation);
  const failed = standingFailures(facts.operations).map(inboxOperation);
  const deployRisks = [...facts.deployRisks].sort(bySeverity);
  const cronRisks = [...facts.cronRisks].sort(bySeverity);
  const snapshotRiskList = snapshotRisks(facts.snapshots).sort(bySeverity);
  const wake: Record<string, number> = {};
  for (const t of facts.wakeTargets) wake[t.readiness] = (wake[t.readiness] ?? 0) + 1;
  const secretIssues =
    facts.secrets['provide-value'] +
    facts.secrets['restrict-permissions'] +
    facts.secrets['move-to-secrets'] +
    facts.secrets.declare;
  const count = (severity: RiskSeverity, lists: readonly (readonly OperatorRisk[])[]) =>
    lists.reduce((n, l) => n + l.filter((r) => r.severity === severity).length, 0);
  const riskLists = [deployRisks, cronRisks, snapshotRiskList];
  return {
    summary: {
      incidents: incidents.length,
      criticalIncidents: incidents.filter((i) => i.severity === 'critical').length,
      activeOperations: active.length,
      failedOperations: failed.length,
      deployRisks: deployRisks.length,
      cronRisks: cronRisks.length,
      snapshotRisks: snapshotRiskList.length,
      secretIssues,
      critical:
        count('critical', riskLists) + incidents.filter((i) => i.severity === 'critical').length + failed.length,
      warning: count('warning', riskLists) + incidents.filter((i) => i.severity === 'warning').length,
    },
    incidents: limited(incidents, limit),
    operations: { active: limited(active, limit), failed: limited(failed, limit) },
    deployRisks: limited(deployRisks, limit),
    cronRisks: limited(cronRisks, limit),
    snapshots: {
      databases: facts.snapshots.length,
      overLimit: facts.snapshots.reduce((n, e) => n + e.overLimit, 0),
      risks: limited(snapshotRiskList, limit),
    },
    secrets: { ...facts.secrets, issues: secretIssues },
    wakeTargets: { total: facts.wakeTargets.length, byReadiness: wake },
  };
}

/** The inbox view. */
export type Inbox = ReturnType<typeof buildInbox>;
