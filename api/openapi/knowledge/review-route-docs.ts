/**
 * Route entries of the knowledge store's feedback, review, handoffs, acquisition and ingest.
 */
import {
  validateDecision,
  validateDeliver,
  validateDigestRequest,
  validateFeedback,
  validatePlan,
  validateRetry,
  validateWorkerCycle,
} from '../../knowledge/review-schemas.js';
import {
  validateAcquisitionExecute,
  validateAcquisitionPlan,
  validateCandidateDecision,
  validateGaps,
  validateIngest,
} from '../../knowledge/request-schemas.js';
import type { RouteDoc, RouteDocGroup } from '../route-doc.js';

const feedback = (summary: string): RouteDoc => ({
  summary,
  caller: 'write',
  body: { name: 'FeedbackRequest', schema: validateFeedback.schema, optional: true },
  answer: { schema: 'FeedbackAnswer' },
});
const read = (summary: string, answer: string): RouteDoc => ({
  summary,
  caller: 'read',
  answer: { description: answer },
});

export const REVIEW_ROUTE_DOCS: RouteDocGroup = {
  tag: 'review',
  description:
    'Feedback on nodes, the claim review queue, escalations, handoffs and their webhooks, the review worker.',
  routes: {
    'POST /v1/namespaces/{ns}/nodes/{id}/validate': feedback('Marks a node as validated'),
    'POST /v1/namespaces/{ns}/nodes/{id}/refute': feedback('Marks a node as refuted'),
    'POST /v1/namespaces/{ns}/nodes/{id}/useful': feedback('Marks a node as useful'),
    'POST /v1/namespaces/{ns}/nodes/{id}/stale': feedback('Marks a node as stale'),
    'GET /v1/namespaces/{ns}/feedback/events': read('Feedback audit events', 'The feedback events.'),
    'GET /v1/namespaces/{ns}/nodes/{id}/narrative': read(
      'A claim with its evidence and contradictions',
      'The narrative of the claim.',
    ),
    'GET /v1/namespaces/{ns}/review/queue': {
      summary: 'The derived claim review queue',
      caller: 'read',
      answer: { schema: 'ReviewQueueAnswer' },
    },
    'GET /v1/namespaces/{ns}/review/decisions': read('Review decisions, append-only', 'The decisions.'),
    'POST /v1/namespaces/{ns}/review/decisions': {
      summary: 'Records a review decision',
      caller: 'write',
      body: { name: 'ReviewDecisionRequest', schema: validateDecision.schema },
      answer: { status: 201, description: 'The decision.' },
    },
    'GET /v1/namespaces/{ns}/review/escalations': read('The escalation digest of open review items', 'The digest.'),
    'POST /v1/namespaces/{ns}/review/escalation-digests': {
      summary: 'Stores a durable escalation digest snapshot',
      caller: 'write',
      body: { name: 'EscalationDigestRequest', schema: validateDigestRequest.schema, optional: true },
      answer: { status: 201, description: 'The stored digest.' },
    },
    'GET /v1/namespaces/{ns}/review/escalation-digests': read('Stored escalation digests', 'The digests.'),
    'GET /v1/namespaces/{ns}/review/handoffs': read('The filtered handoff feed', 'The handoffs.'),
    'POST /v1/namespaces/{ns}/review/handoff-webhooks/plan': {
      summary: 'Plans signed handoff webhook deliveries without sending them',
      caller: 'write',
      body: { name: 'HandoffPlanRequest', schema: validatePlan.schema },
      answer: { description: 'The planned deliveries.' },
    },
    'POST /v1/namespaces/{ns}/review/handoff-webhooks/deliver': {
      summary: 'Delivers signed handoff webhooks (HMAC-SHA-256, SSRF-checked)',
      caller: 'write',
      body: { name: 'HandoffDeliverRequest', schema: validateDeliver.schema },
      answer: { description: 'The delivery receipts.' },
    },
    'GET /v1/namespaces/{ns}/review/handoff-webhooks/receipts': read(
      'Handoff webhook delivery receipts',
      'The receipts.',
    ),
    'GET /v1/namespaces/{ns}/review/handoff-webhooks/retry-candidates': read(
      'Failed handoff deliveries that may be retried',
      'The candidates.',
    ),
    'GET /v1/namespaces/{ns}/review/handoff-webhooks/retry-recommendations': read(
      'Pacing recommendations for handoff retries',
      'The recommendations.',
    ),
    'GET /v1/namespaces/{ns}/review/handoff-webhooks/retry-fatigue': read(
      'Retry fatigue per target (`format=markdown` for Markdown)',
      'The fatigue report.',
    ),
    'POST /v1/namespaces/{ns}/review/handoff-webhooks/retry': {
      summary: 'Retries chosen handoff deliveries explicitly',
      caller: 'write',
      body: { name: 'HandoffRetryRequest', schema: validateRetry.schema },
      answer: { description: 'The retry receipts.' },
    },
    'POST /v1/namespaces/{ns}/review/worker/cycle': {
      summary: 'Runs one bounded review worker cycle',
      caller: 'write',
      body: { name: 'WorkerCycleRequest', schema: validateWorkerCycle.schema, optional: true },
      answer: { description: 'The cycle summary.' },
    },
    'GET /v1/namespaces/{ns}/review/worker/runs': read('Durable summaries of review worker cycles', 'The runs.'),
  },
};

export const ACQUISITION_ROUTE_DOCS: RouteDocGroup = {
  tag: 'acquisition',
  description: 'Knowledge gaps, budgeted acquisition plans and their execution, staged evidence, and claim extraction.',
  routes: {
    'POST /v1/namespaces/{ns}/gaps': {
      summary: 'Finds knowledge gaps',
      caller: 'read',
      body: { name: 'GapsRequest', schema: validateGaps.schema, optional: true },
      answer: { description: 'The gaps.' },
    },
    'POST /v1/namespaces/{ns}/acquisition/plan': {
      summary: 'A budgeted research, crawl, verification and refresh plan',
      caller: 'read',
      body: { name: 'AcquisitionPlanRequest', schema: validateAcquisitionPlan.schema, optional: true },
      answer: { description: 'The plan.' },
    },
    'POST /v1/namespaces/{ns}/acquisition/execute': {
      summary: 'Previews (default) or executes acquisition tasks through HTTP connectors',
      caller: 'write',
      body: { name: 'AcquisitionExecuteRequest', schema: validateAcquisitionExecute.schema },
      answer: { description: 'Per task: the receipt.' },
    },
    'GET /v1/namespaces/{ns}/acquisition/connectors': read(
      'The acquisition connectors configured on the server (ids, URLs, timeouts; never their tokens)',
      'The configured connectors: `{ connectors: [{ id, url, timeout_ms, token_configured }] }`.',
    ),
    'GET /v1/namespaces/{ns}/acquisition/receipts': read(
      'Acquisition receipts with retry classification',
      'The receipts.',
    ),
    'GET /v1/namespaces/{ns}/acquisition/retry-candidates': read('Unresolved acquisition failures', 'The candidates.'),
    'GET /v1/namespaces/{ns}/acquisition/retry-recommendations': read(
      'Acquisition retry pacing',
      'The recommendations.',
    ),
    'GET /v1/namespaces/{ns}/acquisition/review/candidates': read('Evidence staged for review', 'The candidates.'),
    'POST /v1/namespaces/{ns}/acquisition/review/candidates/{id}/approve': {
      summary: 'Admits a staged candidate once',
      caller: 'write',
      body: { name: 'CandidateDecisionRequest', schema: validateCandidateDecision.schema, optional: true },
      answer: { description: 'The decided candidate.' },
      errors: [409],
    },
    'POST /v1/namespaces/{ns}/acquisition/review/candidates/{id}/reject': {
      summary: 'Rejects a staged candidate once',
      caller: 'write',
      body: { name: 'CandidateDecisionRequest', schema: validateCandidateDecision.schema, optional: true },
      answer: { description: 'The decided candidate.' },
      errors: [409],
    },
    'POST /v1/namespaces/{ns}/ingest': {
      summary: 'Extracts claims from text and writes them',
      caller: 'write',
      body: { name: 'IngestRequest', schema: validateIngest.schema },
      answer: { description: '`{ nodes_written, edges_written, rejected, nodes, ... }`.' },
    },
  },
};
