/**
 * The answer types the OpenAPI documents publish as schemas: `scripts/generate-openapi.ts` turns
 * every type exported here into a JSON Schema (ts-json-schema-generator), named as exported, and the
 * route entries of `api/openapi/` name them. Each is the type the route's service returns or the
 * shape its handler builds; some are store rows the services answer as they are, which is why the
 * list lives with the generator rather than in `api/` (ADR 0230).
 */
import type { AppView, ManifestService } from '../../controllers/apps/app-views.js';
import type { QueuedDeployment } from '../../controllers/pipeline/index.js';
import type { EventRecord } from '../../domain/events/event-record.js';
import type { Operation } from '../../domain/operations/operation.js';
import type { CronProcessView } from '../../domain/operator/cron-view.js';
import type { DeployConfidenceView } from '../../domain/operator/deploy-confidence.js';
import type { Finding } from '../../domain/spec/finding.js';
import type { WriteResult as KnowledgeWriteResult } from '../../knowledge/write/write-request.js';
import type { NodeDetail } from '../../knowledge/core/node-view.js';
import type { RetrieveResults } from '../../knowledge/retrieve/retrieve-answer.js';
import type { ReviewQueueView } from '../../knowledge/review/review-service.js';
import type { BackupRecord } from '../../knowledge/maintenance/backup-service.js';
import type { DoctorSampleWriteReport } from '../../knowledge/maintenance/doctor-sample-write.js';
import type {
  BackendsReport,
  MigrationsReport,
  VersionReport,
} from '../../knowledge/introspection/introspection-reports.js';
import type { Feature } from '../../knowledge/introspection/introspection.js';
import type { FeedbackResult } from '../../knowledge/feedback/feedback-service.js';
import type { Capability } from '../../api/control/server/meta-routes.js';
import type { LogLineView } from '../../api/control/logs/logs-routes.js';
import type { ActiveIncidents } from '../../api/control/events/events-routes.js';
import type { SinkView } from '../../controllers/events/sink-view.js';
import type { AlertRule, EventTypeInfo } from '../../domain/events/event-catalog.js';
import type { KnowledgeStats as StoreStats } from '../../api/knowledge/meta-routes.js';
import type { Deployment, DeploymentRegionRow, DeploymentStepRow } from '../../store/control/deployments.js';
import type { OperationAttempt } from '../../store/control/operations/operations.js';
import type { FunctionExecutionRecord } from '../../store/control/function-executions.js';
import type { SnapshotEntry } from '../../platform/snapshots/snapshot-folder.js';
import type { RemoteSnapshot } from '../../platform/object-storage/s3-snapshots.js';
import type { RestoreReceipt, RetentionPreview } from '../../controllers/snapshots/snapshot-service.js';
import type { ActiveOperations } from '../../controllers/operations/operations-service.js';
import type { CronPauseChange, CronScheduleChange, CronTriggered } from '../../controllers/cron/cron-service.js';
import type { EndpointToggleResult } from '../../controllers/routing/routing.js';
import type { ChannelTestResult } from '../../controllers/events/notification-service.js';
import type { ChannelView } from '../../domain/events/notification-channel.js';
import type { IncidentActionResult } from '../../controllers/events/incident-actions.js';
import type { AccessTokenView } from '../../controllers/auth/scoped-tokens.js';
import type { SecretPlan } from '../../domain/operator/secret-plan.js';
import type { AuthHints } from '../../domain/operator/auth-hints.js';
import type { ActionDescriptor } from '../../domain/operator/action-catalog.js';
import type { ProductionReadiness } from '../../domain/operator/production-readiness.js';
import type { PlatformReleaseHistory } from '../../domain/operator/platform-releases.js';

export type { AppView, EventRecord };

/** `POST /v1/namespaces/{ns}/write`. */
export type WriteAnswer = KnowledgeWriteResult;

/** `POST /api/apps/{id}/deploy` (and preflight, rollback): the queued deployment. */
export type DeployAccepted = QueuedDeployment;

/** `GET /v1/namespaces/{ns}/nodes/{id}`. */
export type NodeAnswer = NodeDetail;

/** `GET /api/health`. */
export interface HealthAnswer {
  readonly status: 'ok' | 'degraded';
  readonly checks: Readonly<Record<string, 'pass' | 'fail'>>;
  readonly uptimeSeconds: number;
}

/** `GET /api/version`. */
export interface VersionAnswer {
  readonly name: string;
  readonly version: string;
  readonly label: string;
  readonly commit: string | null;
  readonly node: string;
  readonly release: string | null;
  readonly apiVersions: readonly string[];
  readonly startedAt: string;
}

/** `GET /api/v1/capabilities`. */
export interface CapabilitiesAnswer {
  readonly apiVersion: 'v1';
  readonly mode: 'full' | 'restricted';
  readonly profile: string;
  readonly environment: string;
  readonly capabilities: readonly Capability[];
}

/** `GET /schemas/`. */
export interface SchemaListAnswer {
  readonly schemas: readonly { readonly file: string; readonly url: string }[];
}

/** `GET /api/apps`. */
export interface AppList {
  readonly apps: readonly AppView[];
}

/** `GET /api/services/manifest`. */
export interface ServiceManifest {
  readonly services: readonly ManifestService[];
}

/** `POST /api/v1/validate/infraspec`. */
export interface SpecValidation {
  readonly valid: boolean;
  readonly findings: readonly Finding[];
}

/** `GET /api/events`. */
export interface EventPage {
  readonly events: readonly EventRecord[];
  readonly total: number;
  readonly limit: number;
  readonly offset: number;
}

/** `GET /api/operator/cron`. */
export interface OperatorCron {
  readonly processes: readonly CronProcessView[];
}

/** `GET /api/operator/deploy-confidence`. */
export interface DeployConfidenceAnswer {
  readonly apps: readonly DeployConfidenceView[];
}

/** `GET /v1/ping`. */
export interface PingAnswer {
  readonly status: 'ok';
}

/** A mutation queued as a durable operation (snapshot, restore, migration). */
export interface OperationAccepted {
  readonly operation: Operation;
}

/** `GET /api/v1/apps/{id}/logs` without `follow`. */
export interface LogPage {
  readonly app: string;
  readonly lines: readonly LogLineView[];
}

/** `POST /v1/namespaces/{ns}/retrieve` and `POST /admin/api/retrieve`. */
export type RetrieveAnswer = RetrieveResults;

/** `GET /v1/namespaces/{ns}/review/queue`. */
export type ReviewQueueAnswer = ReviewQueueView;

/** `GET /api/v1/deployments`. */
export interface DeploymentList {
  readonly deployments: readonly Deployment[];
}

/** `GET /api/v1/deployments/{id}/steps`. */
export interface DeploymentSteps {
  readonly deployment: Deployment;
  readonly steps: readonly DeploymentStepRow[];
  readonly regions: readonly DeploymentRegionRow[];
}

/** `GET /api/v1/operations/{id}`. */
export type OperationView = Operation & { readonly attemptHistory: readonly OperationAttempt[] };

/** `GET /api/apps/{id}/function/history`. */
export interface FunctionHistory {
  readonly app: string;
  readonly functions: readonly string[];
  readonly executions: readonly FunctionExecutionRecord[];
}

/** `GET /api/v1/apps/{id}/snapshots`. */
export interface SnapshotInventory {
  readonly app: string;
  readonly database: string;
  readonly keep: number;
  readonly snapshots: readonly SnapshotEntry[];
}

/** `POST /api/apps/{id}/cron/trigger`. */
export type CronTriggerAnswer = CronTriggered;

/** `POST /api/apps/{id}/cron/pause` and `.../resume`. */
export type CronPauseAnswer = CronPauseChange;

/** `PUT /api/apps/{id}/cron/schedule`. */
export type CronScheduleAnswer = CronScheduleChange;

/** `POST /api/notifications/channels/{id}/test`. */
export type ChannelTestAnswer = ChannelTestResult;

/** `POST /api/notifications/channels`: the channel without its secrets. */
export type ChannelAnswer = ChannelView;

/** `POST /api/apps/{id}/endpoints/toggle`. */
export type EndpointToggleAnswer = EndpointToggleResult;

/** `POST /api/incidents/action`. */
export type IncidentActionAnswer = IncidentActionResult;

/** `GET /api/notifications/channels`. */
export interface ChannelList {
  readonly channels: readonly ChannelView[];
}

/** `POST /api/access/tokens`: the token with its secret, shown this once. */
export interface IssuedTokenAnswer {
  readonly token: AccessTokenView & { readonly token: string };
  readonly note: string;
}

/** `GET /api/access/tokens`. */
export interface TokenList {
  readonly tokens: readonly AccessTokenView[];
}

/** `GET /api/access/tokens/{id}` and `DELETE /api/access/tokens/{id}`. */
export interface TokenAnswer {
  readonly token: AccessTokenView;
}

/** `GET /v1/stats` and `GET /admin/api/stats`. */
export type KnowledgeStatsAnswer = StoreStats;

/** `GET /api/events/active`. */
export type ActiveIncidentsAnswer = ActiveIncidents;

/** `GET /api/secrets/migration-plan`. */
export type SecretPlanAnswer = SecretPlan;

/** `GET /api/operator/auth-hints`. */
export type AuthHintsAnswer = AuthHints;

/** `GET /api/operator/actions`. */
export interface ActionCatalogAnswer {
  readonly actions: readonly ActionDescriptor[];
}

/** `GET /api/v1/production/readiness`. */
export type ProductionReadinessAnswer = ProductionReadiness;

/** `GET /api/platform/releases`. */
export type PlatformReleasesAnswer = PlatformReleaseHistory;

/** `POST /admin/api/backups` and `GET /admin/api/backups/{id}`. */
export type KnowledgeBackupAnswer = BackupRecord;

/** `GET /admin/api/backups`. */
export interface KnowledgeBackupList {
  readonly backups: readonly BackupRecord[];
}

/** `POST /admin/api/doctor/sample-write`. */
export type DoctorSampleWriteAnswer = DoctorSampleWriteReport;

/** `GET /api/v1/apps/{id}/snapshots/retention`. */
export type RetentionPreviewAnswer = RetentionPreview;

/** `POST /api/apps/{id}/snapshots/restore`. */
export type RestoreAnswer = RestoreReceipt;

/** `POST /api/v1/apps/{id}/snapshots/export`. */
export type RemoteSnapshotAnswer = RemoteSnapshot;

/** `GET /api/v1/apps/{id}/snapshots/remote`. */
export interface RemoteSnapshotList {
  readonly app: string;
  readonly objects: readonly RemoteSnapshot[];
}

/** `POST /api/v1/apps/{id}/snapshots/import`. */
export type ImportedSnapshotAnswer = SnapshotEntry;

/** `GET /api/operations/active`. */
export type ActiveOperationsAnswer = ActiveOperations;

/** `POST /api/v1/operations/{id}/cancel`. */
export type CancelledOperationAnswer = OperationAccepted;

/** `GET /v1/version`. */
export type KnowledgeVersionAnswer = VersionReport;

/** `GET /v1/features`. */
export interface FeaturesAnswer {
  readonly features: readonly Feature[];
}

/** `GET /v1/migrations`. */
export type MigrationsAnswer = MigrationsReport;

/** `GET /v1/backends`. */
export type BackendsAnswer = BackendsReport;

/** `POST /v1/namespaces/{ns}/nodes/{id}/validate` (and refute, useful, stale). */
export type FeedbackAnswer = FeedbackResult;

/** `GET /api/events/correlated`: a correlation key's timeline, oldest first. */
export interface CorrelatedEvents {
  readonly correlationKey: string;
  readonly events: readonly EventRecord[];
}

/** `GET /api/events/sinks`. */
export interface SinkList {
  readonly sinks: readonly SinkView[];
}

/** `GET /api/alerts/rules`. */
export interface AlertCatalog {
  readonly rules: readonly AlertRule[];
  readonly eventTypes: readonly EventTypeInfo[];
}
