/**
 * The push webhook receiver: persists every delivery before any decision, verifies the
 * HMAC-SHA-256 signature with SVC_WEBHOOK_SECRET in constant time, ignores redeliveries and pushes
 * that match no app with autoDeploy, refuses to re-apply a commit that was rolled back, and
 * deploys the pushed commit of every matching app.
 */
import { createHmac, timingSafeEqual } from 'node:crypto';
import { UnauthorizedError, UnavailableError, isDomainError } from '../../domain/errors.js';
import type { Logger } from '../../platform/logger.js';
import type { Db } from '../../store/database.js';
import { listApps } from '../../store/control/apps.js';
import { wasRolledBack } from '../../store/control/deployments.js';
import {
  decideDelivery,
  deliveryAlreadyHandled,
  listDeliveries,
  recordDelivery,
  type WebhookDelivery,
} from '../../store/control/webhooks.js';
import type { DeployService } from '../pipeline/deploy-service.js';
import { pushFacts, repositoryMatches } from './push-payload.js';

/** Supported providers: GitHub's push event, and a generic form signed the same way. */
export const WebhookProvider = { github: 'github', generic: 'generic' } as const;
export type WebhookProvider = (typeof WebhookProvider)[keyof typeof WebhookProvider];

/** One received request. */
export interface WebhookRequest {
  readonly provider: WebhookProvider;
  /** Lower-case header names. */
  readonly headers: Readonly<Record<string, string | undefined>>;
  /** The body exactly as received (the signature covers these bytes). */
  readonly rawBody: string;
}

/** The receiver's options. */
export interface WebhookReceiverOptions {
  readonly db: Db;
  readonly deploys: DeployService;
  /** SVC_WEBHOOK_SECRET; without it every delivery is recorded and refused. */
  readonly secret: string | undefined;
  readonly logger: Logger;
}

/** Verifies `sha256=<hex>` against the HMAC-SHA-256 of `body` in constant time. */
export function verifySignature(secret: string, body: string, header: string | undefined): boolean {
  if (!header?.startsWith('sha256=')) return false;
  const given = Buffer.from(header.slice('sha256='.length), 'hex');
  const expected = createHmac('sha256', secret).update(body, 'utf8').digest();
  return given.length === expected.length && timingSafeEqual(given, expected);
}

/** The push webhook receiver. */
export class WebhookReceiver {
  constructor(private readonly options: WebhookReceiverOptions) {}

  /** Records and decides one delivery; throws 401 for a bad signature and 503 when no secret is configured, after recording. */
  receive(request: WebhookRequest): WebhookDelivery {
    const { db } = this.options;
    const h = request.headers;
    const github = request.provider === 'github';
    const event = (github ? h['x-github-event'] : (h['x-svc-event'] ?? 'push')) ?? null;
    const deliveryId = (github ? h['x-github-delivery'] : h['x-svc-delivery']) ?? null;
    const signature = h['x-hub-signature-256'] ?? h['x-svc-signature-256'];
    let payload: unknown = null;
    let parseError: string | null = null;
    try {
      payload = request.rawBody.length > 0 ? JSON.parse(request.rawBody) : null;
    } catch (error) {
      parseError = `the body is not JSON: ${(error as Error).message}`;
    }
    const facts = pushFacts(payload);
    const delivery = recordDelivery(db, {
      provider: request.provider,
      event,
      deliveryId,
      repository: facts.repository,
      ref: facts.ref,
      branch: facts.branch,
      commit: facts.commit,
      payload,
      metadata: {
        userAgent: h['user-agent'] ?? null,
        contentType: h['content-type'] ?? null,
        signaturePresent: signature !== undefined,
        bodyBytes: Buffer.byteLength(request.rawBody),
      },
    });
    if (this.options.secret === undefined) {
      decideDelivery(db, delivery.id, {
        status: 'rejected',
        reason: 'SVC_WEBHOOK_SECRET is not configured: webhooks are refused',
      });
      throw new UnavailableError('webhooks are disabled: SVC_WEBHOOK_SECRET is not configured', {
        code: 'webhooks_disabled',
        details: { deliveryRecordId: delivery.id },
      });
    }
    if (!verifySignature(this.options.secret, request.rawBody, signature)) {
      decideDelivery(db, delivery.id, {
        status: 'rejected',
        reason: signature === undefined ? 'missing X-Hub-Signature-256' : 'invalid signature',
      });
      throw new UnauthorizedError('the webhook signature does not verify with SVC_WEBHOOK_SECRET', {
        code: 'invalid_signature',
        details: { deliveryRecordId: delivery.id },
      });
    }
    if (parseError) return decideDelivery(db, delivery.id, { status: 'ignored', reason: parseError });
    if (event !== 'push')
      return decideDelivery(db, delivery.id, { status: 'ignored', reason: `event ${event ?? '(none)'} is not a push` });
    if (deliveryId) {
      const earlier = deliveryAlreadyHandled(db, request.provider, deliveryId, delivery.id);
      if (earlier)
        return decideDelivery(db, delivery.id, {
          status: 'duplicate',
          reason: `delivery ${deliveryId} was already handled (${earlier.id}: ${earlier.status})`,
          matchedApp: earlier.matchedApp,
          sagaId: earlier.sagaId,
          operationId: earlier.operationId,
        });
    }
    if (facts.deleted)
      return decideDelivery(db, delivery.id, { status: 'ignored', reason: `${facts.ref ?? 'the ref'} was deleted` });
    if (!facts.branch || !facts.commit)
      return decideDelivery(db, delivery.id, {
        status: 'ignored',
        reason: `${facts.ref ?? 'the ref'} is not a branch push with a head commit`,
      });
    const matches = listApps(db).filter((app) => {
      const spec = app.spec;
      return (
        app.deletedAt === null &&
        spec?.deploy === true &&
        spec.repo?.autoDeploy === true &&
        spec.repo.url !== undefined &&
        spec.repo.branch === facts.branch &&
        repositoryMatches(spec.repo.url, facts.repositories)
      );
    });
    if (matches.length === 0)
      return decideDelivery(db, delivery.id, {
        status: 'ignored',
        reason: `no app with repo.autoDeploy true follows ${facts.repository ?? 'this repository'} branch ${facts.branch}`,
      });
    const deployed: { app: string; sagaId: string; operationId: string }[] = [];
    const skipped: { app: string; reason: string }[] = [];
    for (const app of matches) {
      if (wasRolledBack(db, app.name, facts.commit)) {
        skipped.push({
          app: app.name,
          reason: `commit ${facts.commit.slice(0, 12)} was rolled back; auto-deploy does not re-apply it`,
        });
        continue;
      }
      try {
        const queued = this.options.deploys.deploy(app.name, { ref: facts.commit, trigger: `webhook:${delivery.id}` });
        deployed.push({ app: app.name, sagaId: queued.sagaId, operationId: queued.operation.id });
      } catch (error) {
        if (!isDomainError(error)) throw error;
        skipped.push({ app: app.name, reason: error.message });
      }
    }
    const first = deployed[0];
    if (!first)
      return decideDelivery(db, delivery.id, {
        status: 'ignored',
        reason: skipped.map((s) => `${s.app}: ${s.reason}`).join('; '),
        matchedApp: matches[0]?.name ?? null,
        metadata: { skipped },
      });
    this.options.logger.info({ delivery: delivery.id, deployed }, 'push webhook deploys');
    return decideDelivery(db, delivery.id, {
      status: 'deployed',
      reason: `deploying ${facts.commit.slice(0, 12)} to ${deployed.map((d) => d.app).join(', ')}`,
      matchedApp: first.app,
      sagaId: first.sagaId,
      operationId: first.operationId,
      metadata: { deployed, skipped },
    });
  }

  /** The inbox, newest first. */
  deliveries(options: { limit?: number; offset?: number }): WebhookDelivery[] {
    return listDeliveries(this.options.db, options);
  }
}
