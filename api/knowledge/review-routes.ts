/**
 * REST routes of feedback, narratives, the review queue, decisions, escalations, handoff webhooks
 * and the review worker, under `/v1/namespaces/{ns}`: validate, call the service, serialize.
 */
import Router from '@koa/router';
import type { Context } from 'koa';
import {
  ESCALATION_LEVELS,
  REVIEW_STATUSES,
  REVIEW_TYPES,
  type ReviewType,
} from '../../domain/knowledge/review-rules.js';
import { ValidationError } from '../../domain/errors.js';
import type { FeedbackAction } from '../../domain/knowledge/feedback-rules.js';
import { narrativeRest, type KnowledgeServices } from '../../knowledge/index.js';
import { requirePermission } from './auth.js';
import { enumParam, intParam, listParam, numberParam, stringParam } from './query-params.js';
import {
  validateDecision,
  validateDeliver,
  validateDigestRequest,
  validateFeedback,
  validatePlan,
  validateRetry,
  validateWorkerCycle,
} from './review-schemas.js';
import { applyMode, present, presentList } from './origin-compat.js';
import { retryFatigueMarkdown } from '../../domain/knowledge/retry-fatigue-markdown.js';

/** Forms of the retry-fatigue report: `json` (default) or `markdown` (also chosen by `Accept: text/markdown`). */
const FATIGUE_FORMATS = ['json', 'markdown'] as const;

/** Queue thresholds from snake_case query parameters. */
function thresholdParams(ctx: Context) {
  return {
    lowConfidenceThreshold: numberParam(ctx, 'low_confidence_threshold'),
    sourceTrustDropThreshold: numberParam(ctx, 'source_trust_drop_threshold'),
    sourceRefutationThreshold: numberParam(ctx, 'source_refutation_threshold'),
    escalationAfterHours: numberParam(ctx, 'escalation_after_hours'),
    sourceAnomalyEscalationPriority: numberParam(ctx, 'source_anomaly_escalation_priority'),
  };
}

/** `types` (or the origin's `type`), comma separated or repeated. */
function typesParam(ctx: Context): ReviewType[] | undefined {
  const types = listParam(ctx, 'types') ?? listParam(ctx, 'type');
  for (const t of types ?? []) {
    if (!(REVIEW_TYPES as readonly string[]).includes(t))
      throw new ValidationError(`types: "${t.slice(0, 64)}" is not one of ${REVIEW_TYPES.join(', ')}`, {
        code: 'invalid_request',
      });
  }
  return types as ReviewType[] | undefined;
}

/** The review-side routes. */
export function reviewRoutes(services: KnowledgeServices): Router {
  const router = new Router({ prefix: '/v1/namespaces/:ns' });
  const ns = (ctx: Context) => String(ctx.params.ns);

  for (const action of ['validate', 'refute', 'useful', 'stale'] as const satisfies readonly FeedbackAction[]) {
    router.post(`/nodes/:id/${action}`, async (ctx) => {
      const { tenant } = requirePermission(ctx, 'write');
      const body = validateFeedback(ctx.request.body ?? {});
      applyMode(services, tenant, ns(ctx), body.mode);
      const reason = present(body.reason);
      // The origin's quality 0 is its "unset"; it grades `useful` only.
      const quality = action === 'useful' && body.quality !== undefined && body.quality > 0 ? body.quality : undefined;
      ctx.body = await services.feedback.record(tenant, ns(ctx), String(ctx.params.id), action, {
        ...(reason !== undefined ? { reason } : {}),
        ...(quality !== undefined ? { quality } : {}),
      });
    });
  }

  router.get('/feedback/events', (ctx) => {
    const { tenant } = requirePermission(ctx, 'read');
    ctx.body = {
      events: services.feedback.events(
        tenant,
        ns(ctx),
        stringParam(ctx, 'after'),
        intParam(ctx, 'limit', 1000, 10_000, 1),
      ),
    };
  });

  router.get('/nodes/:id/narrative', (ctx) => {
    const { tenant } = requirePermission(ctx, 'read');
    ctx.body = narrativeRest(services.narratives.narrative(tenant, ns(ctx), String(ctx.params.id)));
  });

  router.get('/review/queue', (ctx) => {
    const { tenant } = requirePermission(ctx, 'read');
    ctx.body = services.review.queue(
      tenant,
      ns(ctx),
      thresholdParams(ctx),
      {
        types: typesParam(ctx),
        sourceId: stringParam(ctx, 'source') ?? stringParam(ctx, 'source_id'),
        status: enumParam(ctx, 'status', REVIEW_STATUSES),
        owner: stringParam(ctx, 'owner'),
        escalationLevel: enumParam(ctx, 'escalation_level', ESCALATION_LEVELS),
      },
      intParam(ctx, 'limit', 100, 1000, 1),
    );
  });

  router.get('/review/decisions', (ctx) => {
    const { tenant } = requirePermission(ctx, 'read');
    ctx.body = {
      decisions: services.review.decisions(
        tenant,
        ns(ctx),
        stringParam(ctx, 'review_id'),
        intParam(ctx, 'limit', 1000, 10_000, 1),
        intParam(ctx, 'offset', 0, 1e9),
      ),
    };
  });

  router.post('/review/decisions', (ctx) => {
    const { tenant } = requirePermission(ctx, 'write');
    const { mode, ...body } = validateDecision(ctx.request.body);
    applyMode(services, tenant, ns(ctx), mode);
    ctx.status = 201;
    ctx.body = services.review.decide(tenant, ns(ctx), body);
  });

  router.get('/review/escalations', (ctx) => {
    const { tenant } = requirePermission(ctx, 'read');
    ctx.body = services.escalations.digest(tenant, ns(ctx), {
      escalationAfterHours: numberParam(ctx, 'escalation_after_hours'),
      owner: stringParam(ctx, 'owner'),
      escalationLevel: enumParam(ctx, 'escalation_level', ESCALATION_LEVELS),
    });
  });

  router.post('/review/escalation-digests', (ctx) => {
    const { tenant } = requirePermission(ctx, 'write');
    const body = validateDigestRequest(ctx.request.body ?? {});
    applyMode(services, tenant, ns(ctx), body.mode);
    ctx.status = 201;
    ctx.body = services.escalations.recordSnapshot(
      tenant,
      ns(ctx),
      { escalationAfterHours: body.escalation_after_hours, owner: body.owner, escalationLevel: body.escalation_level },
      body.note,
    );
  });

  router.get('/review/escalation-digests', (ctx) => {
    const { tenant } = requirePermission(ctx, 'read');
    ctx.body = {
      digests: services.escalations.snapshots(
        tenant,
        ns(ctx),
        intParam(ctx, 'limit', 100, 1000, 1),
        intParam(ctx, 'offset', 0, 1e9),
      ),
    };
  });

  router.get('/review/handoffs', (ctx) => {
    const { tenant } = requirePermission(ctx, 'read');
    ctx.body = {
      handoffs: services.escalations.handoffs(
        tenant,
        ns(ctx),
        stringParam(ctx, 'owner'),
        enumParam(ctx, 'escalation_level', ESCALATION_LEVELS),
        intParam(ctx, 'limit', 100, 1000, 1),
      ),
    };
  });

  router.post('/review/handoff-webhooks/plan', async (ctx) => {
    const { tenant } = requirePermission(ctx, 'write');
    const b = validatePlan(ctx.request.body);
    applyMode(services, tenant, ns(ctx), b.mode);
    ctx.body = await services.handoffs.plan(tenant, ns(ctx), {
      targetUrl: b.target_url,
      secret: b.secret,
      owner: b.owner,
      escalationLevel: b.escalation_level,
      escalationAfterHours: b.escalation_after_hours,
    });
  });

  router.post('/review/handoff-webhooks/deliver', async (ctx) => {
    const { tenant } = requirePermission(ctx, 'write');
    const b = validateDeliver(ctx.request.body);
    applyMode(services, tenant, ns(ctx), b.mode);
    ctx.body = await services.handoffs.deliver(tenant, ns(ctx), {
      targetUrl: b.target_url,
      secret: b.secret,
      execute: b.execute,
      owner: b.owner,
      escalationLevel: b.escalation_level,
      escalationAfterHours: b.escalation_after_hours,
      timeoutMs: b.timeout_ms,
    });
  });

  router.get('/review/handoff-webhooks/receipts', (ctx) => {
    const { tenant } = requirePermission(ctx, 'read');
    ctx.body = {
      receipts: services.handoffs.receipts(
        tenant,
        ns(ctx),
        intParam(ctx, 'limit', 1000, 10_000, 1),
        intParam(ctx, 'offset', 0, 1e9),
      ),
    };
  });

  router.get('/review/handoff-webhooks/retry-candidates', (ctx) => {
    const { tenant } = requirePermission(ctx, 'read');
    ctx.body = { candidates: services.handoffs.retryCandidates(tenant, ns(ctx)) };
  });

  router.get('/review/handoff-webhooks/retry-recommendations', (ctx) => {
    const { tenant } = requirePermission(ctx, 'read');
    ctx.body = { recommendations: services.handoffs.retryRecommendations(tenant, ns(ctx)) };
  });

  router.get('/review/handoff-webhooks/retry-fatigue', (ctx) => {
    const { tenant } = requirePermission(ctx, 'read');
    const format =
      enumParam(ctx, 'format', FATIGUE_FORMATS) ??
      (ctx.accepts('json', 'text/markdown') === 'text/markdown' ? 'markdown' : 'json');
    const report = services.handoffs.retryFatigue(tenant, ns(ctx), {
      preset: stringParam(ctx, 'preset'),
      owner: stringParam(ctx, 'owner'),
      escalationLevel: enumParam(ctx, 'escalation_level', ESCALATION_LEVELS),
    });
    if (format === 'markdown') {
      // The Markdown form (review-handoff-retry-fatigue-markdown): the same report, rendered (ADR 0178).
      ctx.type = 'text/markdown; charset=utf-8';
      ctx.body = retryFatigueMarkdown({
        namespace: ns(ctx),
        ...report,
        generatedAt: new Date(services.core.now()).toISOString(),
      });
      return;
    }
    ctx.body = report;
  });

  router.post('/review/handoff-webhooks/retry', async (ctx) => {
    const { tenant } = requirePermission(ctx, 'write');
    const b = validateRetry(ctx.request.body);
    applyMode(services, tenant, ns(ctx), b.mode);
    ctx.body = await services.handoffs.retry(tenant, ns(ctx), {
      digestEventId: b.digest_event_id,
      targetUrl: b.target_url,
      secret: b.secret,
      execute: b.execute,
      timeoutMs: b.timeout_ms,
    });
  });

  router.post('/review/worker/cycle', async (ctx) => {
    const { tenant } = requirePermission(ctx, 'write');
    const { mode, allowed_actions: allowedActions, ...body } = validateWorkerCycle(ctx.request.body ?? {});
    applyMode(services, tenant, ns(ctx), mode);
    // The origin's Python SDK sends allowed_actions: [] for "the default set".
    const allowed = presentList(allowedActions);
    ctx.body = await services.worker.cycle(
      tenant,
      ns(ctx),
      allowed === undefined ? body : { ...body, allowed_actions: allowed },
    );
  });

  router.get('/review/worker/runs', (ctx) => {
    const { tenant } = requirePermission(ctx, 'read');
    ctx.body = {
      runs: services.worker.runs(
        tenant,
        ns(ctx),
        intParam(ctx, 'limit', 100, 1000, 1),
        intParam(ctx, 'offset', 0, 1e9),
      ),
    };
  });

  return router;
}
