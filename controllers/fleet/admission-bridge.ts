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
import { ConflictError, NotFoundError, UnprocessableError, ValidationError } from '../../domain/errors.js';
import {
  derivedIdempotencyKey,
  exactObject,
  parseLogicalIdentity,
  requestDigest,
  sha256Hex,
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
import { checkClaimSnapshot, type EvidenceService } from '../../domain/fleet/evidence-port.js';
import type { GitHostVerifier } from '../../domain/fleet/git-host-port.js';
import { parseReceiptV4, proofDigests, receiptDigest, receiptMismatches } from '../../domain/fleet/receipt-v4.js';
import type { LoggerPort } from '../../domain/logger.js';
import type { Db } from '../../store/database.js';
import {
  commitAdmission,
  completeCleanup,
  consumeNonce,
  countUnconsumedNonces,
  deleteExpiredNonces,
  getAdmission,
  getAdmissionByKey,
  getNonce,
  insertAdmission,
  recordClaim,
  replaceNonce,
  type AdmissionRecord,
} from '../../store/control/external-admissions.js';
import { admissionContext, type AdmissionContext } from './admission-view.js';
import { refreshAdmission, registerReplacement, sendCommit, type EvidenceExchange } from './admission-evidence.js';
import { allowedIdentity, liveVerification, type BridgeSettings } from './admission-verification.js';
import type { AdmissionCaller, AdmissionResult, ExternalAdmissions } from './external-admissions.js';
import type { FleetAudit } from './fleet-audit.js';

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
    const identity = allowedIdentity(this.settings, app, parseLogicalIdentity(body));
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
    const { revision } = await registerReplacement(this.exchange, registration, record.generation);
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
    await liveVerification(this.options.gitHost, this.settings, record.identity);
    const committed = this.commitLocally(record, receipt.source.sourceSha);
    this.audit(caller, 'external_admission.committed', committed.id, {
      operationId: committed.operationId,
      operationDigest: committed.operationDigest,
    });
    const acknowledged = await sendCommit(this.exchange, committed);
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
    const done = await sendCommit(this.exchange, record, true);
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
    if (record.state === AdmissionState.committed) record = await refreshAdmission(this.exchange, record);
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
    return admissionContext(
      record.state === AdmissionState.committed ? await refreshAdmission(this.exchange, record, true) : record,
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

  private get exchange(): EvidenceExchange {
    return { db: this.db, evidence: this.options.evidence, logger: this.options.logger, now: () => this.now() };
  }

  private get db(): Db {
    return this.options.db;
  }

  private now(): Date {
    return (this.options.now ?? (() => new Date()))();
  }
}
