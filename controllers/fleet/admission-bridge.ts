/**
 * The external-admission bridge (restricted mode): begin, admit, resume, reconcile, cleanup and
 * context, following the lifecycle of domain/fleet/admission-lifecycle.ts.
 *
 * Order matters for crash safety: begin registers the nonce hash with the evidence service before
 * anything is recorded; admit consumes the nonce and claims before live verification, then writes
 * the operation, deployment and committed state in one SQLite transaction, and only then sends the
 * evidence commit. A crash between the two leaves `commitPending`, which reconcile completes by
 * rebuilding the commit intent from stored state.
 */
import { randomBytes } from 'node:crypto';
import { canonicalDigest } from '../../domain/canonical-json.js';
import {
  ConflictError,
  NotFoundError,
  UnavailableError,
  UnprocessableError,
  ValidationError,
} from '../../domain/errors.js';
import {
  derivedIdempotencyKey,
  exactObject,
  parseLogicalIdentity,
  requestDigest,
  sha256Hex,
  type LogicalIdentity,
} from '../../domain/fleet/admission-identity.js';
import {
  AdmissionState,
  checkNonceBudget,
  CLEANUP_BINDINGS,
  decideAdmit,
  decideBegin,
  decideCleanup,
  decideResume,
  EXPIRED_NONCE_BATCH,
  NONCE_TTL_MS,
  type CleanupBindings,
} from '../../domain/fleet/admission-lifecycle.js';
import {
  checkClaimSnapshot,
  type CiContext,
  type EvidenceRegistration,
  type EvidenceService,
} from '../../domain/fleet/evidence-port.js';
import type { GitHostVerifier } from '../../domain/fleet/git-host-port.js';
import {
  parseReceiptV4,
  proofDigests,
  receiptDigest,
  receiptMismatches,
  type AdmissionBindings,
} from '../../domain/fleet/receipt-v4.js';
import type { LoggerPort } from '../../domain/logger.js';
import type { Db } from '../../store/database.js';
import {
  acknowledgeCommit,
  commitAdmission,
  completeCleanup,
  consumeNonce,
  countUnconsumedNonces,
  deleteExpiredNonces,
  getAdmission,
  getAdmissionByKey,
  getNonce,
  insertAdmission,
  markCleanupReady,
  recordClaim,
  replaceNonce,
  type AdmissionRecord,
} from '../../store/control/external-admissions.js';
import { admissionContext, type AdmissionContext } from './admission-view.js';
import type { FleetAudit } from './fleet-audit.js';

/** The workload identity calling (from its exchanged token). */
export interface AdmissionCaller extends CiContext {
  readonly tokenId: string;
}

/** A route's answer: status, body and, for the first commit, the operation's location. */
export interface AdmissionResult {
  readonly status: 200 | 201;
  readonly body: AdmissionContext & {
    readonly replayed?: boolean;
    readonly nonce?: string;
    readonly nonceExpiresAt?: string;
  };
  readonly location?: string;
}

/** The six admission calls the routes serve. */
export interface ExternalAdmissions {
  begin(app: string, caller: AdmissionCaller, clientKey: string, body: unknown): Promise<AdmissionResult>;
  admit(app: string, caller: AdmissionCaller, clientKey: string, body: unknown): Promise<AdmissionResult>;
  resume(app: string, caller: AdmissionCaller, clientKey: string, body: unknown): Promise<AdmissionResult>;
  reconcile(app: string, caller: AdmissionCaller, body: unknown): Promise<AdmissionResult>;
  cleanup(app: string, caller: AdmissionCaller, body: unknown): Promise<AdmissionResult>;
  context(app: string, caller: AdmissionCaller, admissionId: string): Promise<AdmissionContext>;
}

/** Without a configured verifier every call fails this way, and nothing is recorded. */
export function verifierUnavailable(): UnavailableError {
  return new UnavailableError(
    'external admission has no configured verifier (the SVC_EXTERNAL_FLEET_* bridge settings are not set); nothing was recorded',
    { code: 'external_deployment_verifier_unavailable' },
  );
}

/** The bridge when it is not configured. */
export const UNCONFIGURED_ADMISSIONS: ExternalAdmissions = {
  begin: () => Promise.reject(verifierUnavailable()),
  admit: () => Promise.reject(verifierUnavailable()),
  resume: () => Promise.reject(verifierUnavailable()),
  reconcile: () => Promise.reject(verifierUnavailable()),
  cleanup: () => Promise.reject(verifierUnavailable()),
  context: () => Promise.reject(verifierUnavailable()),
};

/** What the bridge is configured to admit. */
export interface BridgeSettings extends AdmissionBindings {
  readonly environment: string;
  readonly repositoryIds: readonly string[];
  readonly catalog: { readonly image: string; readonly repository: string };
}

export interface AdmissionBridgeOptions {
  readonly db: Db;
  readonly settings: BridgeSettings;
  readonly evidence: EvidenceService;
  readonly gitHost: GitHostVerifier;
  readonly audit: FleetAudit;
  readonly logger: LoggerPort;
  readonly now?: () => Date;
}

export class AdmissionBridge implements ExternalAdmissions {
  constructor(private readonly options: AdmissionBridgeOptions) {}

  async begin(app: string, caller: AdmissionCaller, clientKey: string, body: unknown): Promise<AdmissionResult> {
    const identity = this.allowedIdentity(app, parseLogicalIdentity(body));
    const digest = requestDigest(identity);
    const key = this.key(caller, app, clientKey);
    const existing = getAdmissionByKey(this.db, key);
    if (decideBegin(existing, digest).action === 'replay')
      return { status: 200, body: { ...admissionContext(existing!), replayed: true } };
    const now = this.now();
    this.pruneNonces(now);
    const runKey = this.runKey(caller);
    checkNonceBudget(countUnconsumedNonces(this.db, runKey, now), caller.runId);
    const id = `adm_${randomBytes(10).toString('hex')}`;
    const { nonce, row } = this.newNonce(1, runKey, now);
    // The evidence service learns the nonce hash first; nothing is recorded if it refuses.
    const { revision } = await this.options.evidence.register({
      admissionId: id,
      generation: 1,
      expectedRevision: 0,
      logicalIdentity: identity,
      logicalDigest: digest,
      attempt: { rootAttemptId: identity.rootAttemptId },
      ci: this.ci(caller),
      nonceSha256: row.nonceSha256,
      issuanceWindow: { notBefore: row.issuedAt, notAfter: row.expiresAt },
    });
    const record = insertAdmission(
      this.db,
      {
        id,
        app,
        idempotencyKey: key,
        requestDigest: digest,
        identity,
        repository: caller.repository,
        runId: caller.runId,
        revision,
        nonce: row,
      },
      now,
    );
    this.audit(caller, 'external_admission.begin', id, { generation: 1, logicalDigest: digest });
    return { status: 201, body: { ...admissionContext(record), nonce, nonceExpiresAt: row.expiresAt } };
  }

  async resume(app: string, caller: AdmissionCaller, clientKey: string, body: unknown): Promise<AdmissionResult> {
    const request = exactObject(body, 'body', ['admissionId', 'logicalIdentity']);
    const identity = parseLogicalIdentity(request.logicalIdentity, 'body.logicalIdentity');
    const record = this.owned(app, caller, request.admissionId);
    if (decideResume(record, this.key(caller, app, clientKey), requestDigest(identity)) === 'existing')
      return { status: 200, body: { ...admissionContext(record), replayed: true } };
    const now = this.now();
    this.pruneNonces(now);
    const runKey = this.runKey(caller);
    const current = getNonce(this.db, record.id, record.generation);
    const replaced =
      current !== undefined &&
      current.runKey === runKey &&
      current.consumedAt === null &&
      current.replacedAt === null &&
      Date.parse(current.expiresAt) > now.getTime()
        ? 1
        : 0;
    checkNonceBudget(countUnconsumedNonces(this.db, runKey, now) - replaced, caller.runId);
    const generation = record.generation + 1;
    const { nonce, row } = this.newNonce(generation, runKey, now);
    const registration = {
      admissionId: record.id,
      generation,
      expectedRevision: record.evidenceRevision,
      logicalIdentity: identity,
      logicalDigest: record.requestDigest,
      attempt: { rootAttemptId: identity.rootAttemptId },
      ci: this.ci(caller),
      nonceSha256: row.nonceSha256,
      issuanceWindow: { notBefore: row.issuedAt, notAfter: row.expiresAt },
    };
    const { revision } = await this.registerReplacement(registration, record.generation);
    const updated = replaceNonce(this.db, record.id, row, revision, now);
    this.audit(caller, 'external_admission.resume', record.id, { generation });
    return { status: 201, body: { ...admissionContext(updated), nonce, nonceExpiresAt: row.expiresAt } };
  }

  async admit(app: string, caller: AdmissionCaller, clientKey: string, body: unknown): Promise<AdmissionResult> {
    const key = this.key(caller, app, clientKey);
    const keys = typeof body === 'object' && body !== null ? Object.keys(body) : [];
    if (keys.length === 1 && keys[0] === 'admissionId') {
      const record = this.owned(app, caller, (body as { admissionId: unknown }).admissionId);
      if (record.idempotencyKey !== key)
        throw new UnprocessableError('Idempotency-Key: a receipt-free replay needs the original key', {
          code: 'idempotency_key_reused',
        });
      if (record.state === AdmissionState.registered)
        throw new ConflictError('the admission is not committed; admit it with its receipt', {
          code: 'admission_not_committed',
          details: { state: record.state },
        });
      return { status: 200, body: { ...admissionContext(record), replayed: true } };
    }
    const receipt = parseReceiptV4(exactObject(body, 'body', ['receipt']).receipt);
    const digest = receiptDigest(receipt);
    let record = this.owned(app, caller, receipt.admissionId);
    if (decideAdmit(record, key, digest, record.receiptDigest) === 'replay')
      return { status: 200, body: { ...admissionContext(record), replayed: true } };
    const proofs = proofDigests(receipt);
    if (record.receiptDigest !== digest) {
      // A claim by an earlier call with this exact receipt (interrupted before the commit) is reused.
      const nonce = getNonce(this.db, record.id, record.generation);
      const mismatches = receiptMismatches(receipt, {
        admissionId: record.id,
        generation: record.generation,
        nonceSha256: nonce?.nonceSha256 ?? '',
        identity: record.identity,
        migrationJobId: this.settings.migrationJobId,
        migrationHclSha256: this.settings.migrationHclSha256,
        runtimeJobId: this.settings.runtimeJobId,
        runtimeHclSha256: this.settings.runtimeHclSha256,
      });
      if (mismatches.length > 0)
        throw new UnprocessableError(`the receipt does not prove this admission: ${mismatches.join('; ')}`, {
          code: 'receipt_mismatch',
          details: { rules: mismatches },
        });
      if (!consumeNonce(this.db, record.id, record.generation, this.now()))
        throw new ConflictError(
          'the nonce of this generation was consumed, replaced or has expired; resume for a replacement nonce',
          { code: 'nonce_not_available', details: { generation: record.generation } },
        );
      const claim = await this.options.evidence.claim({
        admissionId: record.id,
        generation: record.generation,
        expectedRevision: record.evidenceRevision,
        receiptSha256: digest,
        proofDigests: proofs,
      });
      const snapshot = checkClaimSnapshot(claim.snapshot, {
        admissionId: record.id,
        receiptSha256: digest,
        proofDigests: proofs,
      });
      recordClaim(
        this.db,
        record.id,
        { revision: claim.revision, receiptDigest: digest, proofDigests: proofs, snapshot },
        this.now(),
      );
      this.audit(caller, 'external_admission.claimed', record.id, {
        generation: record.generation,
        receiptSha256: digest,
        snapshotDigest: snapshot.digest,
      });
      record = getAdmission(this.db, record.id)!;
    }
    await this.liveVerification(record.identity);
    const committed = this.commitLocally(record, receipt.source.sourceSha);
    this.audit(caller, 'external_admission.committed', committed.id, {
      operationId: committed.operationId,
      operationDigest: committed.operationDigest,
    });
    const acknowledged = await this.sendCommit(committed);
    return {
      status: 201,
      body: admissionContext(acknowledged),
      location: `/api/v1/operations/${committed.operationId}`,
    };
  }

  async reconcile(app: string, caller: AdmissionCaller, body: unknown): Promise<AdmissionResult> {
    const record = this.owned(app, caller, exactObject(body, 'body', ['admissionId']).admissionId);
    if (record.state === AdmissionState.registered)
      throw new ConflictError('the admission is not committed; there is no evidence commit to complete', {
        code: 'admission_not_committed',
        details: { state: record.state },
      });
    if (!record.commitPending) return { status: 200, body: admissionContext(record) };
    const done = await this.sendCommit(record, true);
    this.audit(caller, 'external_admission.reconciled', record.id, { commitPending: done.commitPending });
    return { status: 200, body: admissionContext(done) };
  }

  async cleanup(app: string, caller: AdmissionCaller, body: unknown): Promise<AdmissionResult> {
    const request = exactObject(body, 'body', ['admissionId', ...CLEANUP_BINDINGS]);
    for (const name of CLEANUP_BINDINGS)
      if (typeof request[name] !== 'string')
        throw new ValidationError(`body.${name}: must be a string`, {
          code: 'invalid_request',
          details: { field: `body.${name}` },
        });
    let record = this.owned(app, caller, request.admissionId);
    if (record.state === AdmissionState.committed) record = await this.refresh(record);
    const persisted: Partial<CleanupBindings> = {
      ...(record.operationId === null ? {} : { operationId: record.operationId }),
      ...(record.receiptDigest === null ? {} : { receiptSha256: record.receiptDigest }),
      ...(record.cleanupIntentDigest === null ? {} : { cleanupIntentSha256: record.cleanupIntentDigest }),
      ...(record.absenceProofDigest === null ? {} : { absenceProofSha256: record.absenceProofDigest }),
    };
    if (decideCleanup(record.state, persisted, request as unknown as CleanupBindings) === 'already_complete')
      return { status: 200, body: admissionContext(record) };
    const last = record.retryLineage.at(-1) ?? record.identity.rootAttemptId;
    const done = completeCleanup(
      this.db,
      record.id,
      [
        ...record.checkpoints,
        { kind: 'external_cleanup', attemptId: last, evidenceDigest: record.absenceProofDigest! },
      ],
      this.now(),
    );
    this.audit(caller, 'external_admission.cleanup', record.id, { absenceProofSha256: record.absenceProofDigest });
    return { status: 200, body: admissionContext(done) };
  }

  async context(app: string, caller: AdmissionCaller, admissionId: string): Promise<AdmissionContext> {
    const record = this.owned(app, caller, admissionId);
    return admissionContext(record.state === AdmissionState.committed ? await this.refresh(record, true) : record);
  }

  /**
   * Registers a replacement generation. A claim interrupted before it was recorded here moved the
   * evidence revision on; when the service's status shows the same, uncommitted generation, the
   * registration is retried once against the revision it reports.
   */
  private async registerReplacement(
    registration: EvidenceRegistration,
    current: number,
  ): Promise<{ revision: number }> {
    try {
      return await this.options.evidence.register(registration);
    } catch (error) {
      if (!(error instanceof ConflictError)) throw error;
      const status = await this.options.evidence.status(registration.admissionId, current);
      if (
        status.generation !== current ||
        status.state === 'committed' ||
        status.revision === registration.expectedRevision
      )
        throw error;
      this.options.logger.warn(
        { admissionId: registration.admissionId, stored: registration.expectedRevision, evidence: status.revision },
        'evidence revision moved by an interrupted claim; registering against it',
      );
      return this.options.evidence.register({ ...registration, expectedRevision: status.revision });
    }
  }

  /** Reads the evidence status of a committed admission; an absence proof makes it cleanup_ready. */
  private async refresh(record: AdmissionRecord, tolerateUnavailable = false): Promise<AdmissionRecord> {
    if (record.commitPending) return record;
    try {
      const status = await this.options.evidence.status(record.id, record.generation);
      if (status.absenceProofSha256 === undefined) return record;
      if (!/^[0-9a-f]{64}$/.test(status.absenceProofSha256))
        throw new UnavailableError('the evidence service answered an absence proof that is not a SHA-256 digest', {
          code: 'evidence_service_unavailable',
        });
      return markCleanupReady(this.db, record.id, status.absenceProofSha256, record.checkpoints, this.now());
    } catch (error) {
      if (tolerateUnavailable && error instanceof UnavailableError) {
        this.options.logger.warn(
          { admissionId: record.id, err: error.message },
          'evidence status unavailable; answering the stored context',
        );
        return record;
      }
      throw error;
    }
  }

  /** The git-host checks: the installation reaches exactly the configured repositories, and the admitted commit exists. */
  private async liveVerification(identity: LogicalIdentity): Promise<void> {
    const repositories = await this.options.gitHost.installationRepositories();
    const ids = new Set(repositories.map((r) => r.id));
    const expected = new Set(this.settings.repositoryIds);
    if (ids.size !== expected.size || [...expected].some((id) => !ids.has(id))) {
      throw new UnprocessableError(
        'live verification failed: the verifier app installation does not reach exactly the configured repositories',
        { code: 'live_verification_failed', details: { check: 'installation_repositories' } },
      );
    }
    if (!repositories.some((r) => r.fullName === identity.source.repository))
      throw new UnprocessableError(
        'live verification failed: the admitted source repository is not one of the installation repositories',
        { code: 'live_verification_failed', details: { check: 'source_repository' } },
      );
    if (!(await this.options.gitHost.commitExists(identity.source.repository, identity.source.sha)))
      throw new UnprocessableError(
        'live verification failed: the admitted commit does not exist in the source repository',
        { code: 'live_verification_failed', details: { check: 'source_commit' } },
      );
  }

  private commitLocally(record: AdmissionRecord, commit: string): AdmissionRecord {
    const operationId = `op_${randomBytes(10).toString('hex')}`;
    const deploymentId = `dep_${randomBytes(10).toString('hex')}`;
    const sagaId = `saga_${randomBytes(10).toString('hex')}`;
    const payload = {
      deploymentId,
      trigger: 'external-admission',
      admissionId: record.id,
      image: record.identity.artifact.image,
    };
    const operationDigest = canonicalDigest({
      id: operationId,
      kind: 'app.deploy',
      app: record.app,
      status: 'succeeded',
      ref: commit,
      sagaId,
      payload,
    });
    const cleanupIntentDigest = canonicalDigest({
      action: 'external_cleanup',
      admissionId: record.id,
      operationId,
      app: record.app,
      namespace: this.settings.namespace,
      jobs: [this.settings.migrationJobId, this.settings.runtimeJobId],
    });
    const regions = [...new Set(record.snapshot!.allocations.map((a) => a.region))].sort();
    return commitAdmission(
      this.db,
      record.app,
      {
        admissionId: record.id,
        operationId,
        operationDigest,
        operationPayload: payload,
        deploymentId,
        sagaId,
        commit,
        image: record.identity.artifact.image,
        regions,
        cleanupIntentDigest,
        message: `admitted externally (admission ${record.id}, snapshot ${record.snapshotDigest!.slice(0, 12)})`,
      },
      this.now(),
    );
  }

  /**
   * Sends the evidence commit, rebuilt from stored state. A revision conflict whose status shows the
   * same snapshot committed means an earlier commit landed and only its answer was lost.
   */
  private async sendCommit(record: AdmissionRecord, reconciling = false): Promise<AdmissionRecord> {
    const intent = {
      admissionId: record.id,
      generation: record.generation,
      expectedRevision: record.evidenceRevision,
      snapshotDigest: record.snapshotDigest!,
      receiptSha256: record.receiptDigest!,
      proofDigests: record.proofDigests!,
      operationId: record.operationId!,
      operationDigest: record.operationDigest!,
      cleanupIntentDigest: record.cleanupIntentDigest!,
    };
    try {
      const { revision } = await this.options.evidence.commit(intent);
      return acknowledgeCommit(this.db, record.id, revision, this.now());
    } catch (error) {
      if (error instanceof ConflictError) {
        const status = await this.options.evidence.status(record.id, record.generation);
        if (status.state === 'committed' && status.snapshotDigest === record.snapshotDigest)
          return acknowledgeCommit(this.db, record.id, status.revision, this.now());
        throw error;
      }
      if (reconciling || !(error instanceof UnavailableError)) throw error;
      // The operation is committed locally; the caller sees commitPending and reconciles later.
      this.options.logger.warn(
        { admissionId: record.id, err: error.message },
        'evidence commit not acknowledged; the admission stays commit-pending until reconciled',
      );
      return record;
    }
  }

  private allowedIdentity(app: string, identity: LogicalIdentity): LogicalIdentity {
    const s = this.settings;
    if (app !== s.app)
      throw new NotFoundError(`app ${app} is not the external admission app`, {
        code: 'app_not_found',
        details: { app },
      });
    const broken: string[] = [];
    if (identity.candidate.app !== app) broken.push('candidate.app must be the app of the path');
    if (identity.candidate.environment !== s.environment) broken.push(`candidate.environment must be ${s.environment}`);
    if (identity.plan.namespace !== s.namespace) broken.push(`plan.namespace must be ${s.namespace}`);
    if (identity.source.repository !== s.catalog.repository)
      broken.push("source.repository must be the catalog app's canonical source");
    if (identity.artifact.image !== s.catalog.image)
      broken.push("artifact.image must be the catalog app's pinned image");
    if (broken.length > 0)
      throw new UnprocessableError(`the logical identity is not admissible: ${broken.join('; ')}`, {
        code: 'admission_not_allowed',
        details: { rules: broken },
      });
    return identity;
  }

  /** The admission of this app and this caller's repository (others read as absent). */
  private owned(app: string, caller: AdmissionCaller, id: unknown): AdmissionRecord {
    if (typeof id !== 'string' || !/^adm_[0-9a-f]{20}$/.test(id))
      throw new ValidationError('admissionId: must be an admission id (adm_ and 20 hex characters)', {
        code: 'invalid_request',
        details: { field: 'admissionId' },
      });
    const record = getAdmission(this.db, id);
    if (record === undefined || record.app !== app || record.repository !== caller.repository)
      throw new NotFoundError(`no admission ${id} of app ${app} for this repository`, {
        code: 'admission_not_found',
        details: { admissionId: id },
      });
    return record;
  }

  private newNonce(
    generation: number,
    runKey: string,
    now: Date,
  ): {
    nonce: string;
    row: { nonceSha256: string; generation: number; runKey: string; issuedAt: string; expiresAt: string };
  } {
    const nonce = randomBytes(32).toString('base64url');
    return {
      nonce,
      row: {
        nonceSha256: sha256Hex(nonce),
        generation,
        runKey,
        issuedAt: now.toISOString(),
        expiresAt: new Date(now.getTime() + NONCE_TTL_MS).toISOString(),
      },
    };
  }

  private pruneNonces(now: Date): void {
    const removed = deleteExpiredNonces(this.db, now, EXPIRED_NONCE_BATCH);
    if (removed > 0) this.options.logger.info({ removed }, 'expired admission nonces removed');
  }

  private key(caller: AdmissionCaller, app: string, clientKey: string): string {
    return derivedIdempotencyKey({
      repository: caller.repository,
      environment: this.settings.environment,
      app,
      clientKey,
    });
  }

  private runKey(caller: AdmissionCaller): string {
    return `${caller.repository}#${caller.runId}`;
  }

  private ci(caller: AdmissionCaller) {
    return {
      repository: caller.repository,
      runId: caller.runId,
      runAttempt: caller.runAttempt,
      workflowRef: caller.workflowRef,
      ref: caller.ref,
      sha: caller.sha,
    };
  }

  private audit(caller: AdmissionCaller, action: string, subject: string, details: Record<string, unknown>): void {
    this.options.audit.record(`workflow:${caller.repository}#${caller.runId}`, action, subject, details);
    this.options.logger.info({ admissionId: subject, action }, 'external admission');
  }

  private get settings(): BridgeSettings {
    return this.options.settings;
  }

  private get db(): Db {
    return this.options.db;
  }

  private now(): Date {
    return (this.options.now ?? (() => new Date()))();
  }
}
