/**
 * Route entries of the control plane's routing, access analytics, cron, functions, logs and exec.
 */
import { ENDPOINT_TOGGLE_SCHEMA } from '../../control/routing/routing-routes.js';
import { actionSchema as CRON_ACTION_SCHEMA, parseSchedule } from '../../control/jobs/cron-routes.js';
import { parseProcessForm } from '../../control/jobs/functions-routes.js';
import { parseChallenge, parseCommand, parseCreate, parseProof } from '../../control/exec/exec-routes.js';
import { parseEnroll } from '../../control/exec/device-routes.js';
import type { RouteDocGroup } from '../route-doc.js';

export const ROUTING_ROUTE_DOCS: RouteDocGroup = {
  tag: 'routing',
  description: 'The tunnel ingress, endpoint toggles, wake targets and access analytics.',
  routes: {
    'GET /api/tunnel/ingress': {
      summary: "Routed hostnames, rules, the tunnel file's ingress, toggled-off hostnames and the last reconcile",
      answer: { description: 'Routed hostnames, rules, the ingress and the last reconcile.' },
    },
    'POST /api/apps/{id}/endpoints/toggle': {
      summary: "Turns one of the app's public hostnames on or off",
      body: { name: 'EndpointToggleRequest', schema: ENDPOINT_TOGGLE_SCHEMA },
      answer: { schema: 'EndpointToggleAnswer' },
    },
    'GET /api/operator/wake-targets': {
      summary: 'Per process with a port: readiness, URLs, the wake gateway URL and its counters',
      answer: { description: '`{ targets }`.' },
    },
    'GET /api/access/patterns': {
      summary: 'Per hostname hourly request counts and status buckets',
      query: [
        { name: 'hours', description: 'The window in hours (default 24).' },
        { name: 'hostname', description: 'Only this hostname.' },
      ],
      answer: { description: 'Hourly buckets per hostname.' },
    },
    'POST /api/access/edge/logpush': {
      summary: "The edge's log push: NDJSON or JSON (gzip) request logs, counted only",
      description:
        'Public to the bearer check; it needs its own secret (`X-Svc-Logpush-Token`, `X-Edge-Log-Secret` or Bearer) and HTTPS.',
      body: {
        name: 'LogpushBatch',
        contentType: 'application/x-ndjson',
        schema: { type: 'string', description: 'Newline-delimited JSON request log records, optionally gzip.' },
      },
      answer: { status: 202, description: '`{ accepted, dropped, buckets }`.' },
      errors: [413],
    },
    'POST /api/access/edge/sync': {
      summary: 'Runs the edge analytics sync now',
      answer: { description: '`{ windows, hostnames, buckets, requests }`.' },
    },
  },
};

export const JOBS_ROUTE_DOCS: RouteDocGroup = {
  tag: 'jobs',
  description: 'Operator actions on periodic processes, and functions (batch jobs) with their history.',
  routes: {
    'POST /api/apps/{id}/cron/trigger': {
      summary: 'Runs a periodic process now (event `job.triggered`)',
      body: { name: 'CronActionRequest', schema: CRON_ACTION_SCHEMA, optional: true },
      answer: { status: 202, schema: 'CronTriggerAnswer' },
      idempotencyKey: 'optional',
    },
    'POST /api/apps/{id}/cron/pause': {
      summary: 'Pauses a periodic process (event `job.paused`)',
      body: { name: 'CronActionRequest', schema: CRON_ACTION_SCHEMA, optional: true },
      answer: { schema: 'CronPauseAnswer' },
      idempotencyKey: 'optional',
    },
    'POST /api/apps/{id}/cron/resume': {
      summary: 'Resumes a paused periodic process (event `job.resumed`)',
      body: { name: 'CronActionRequest', schema: CRON_ACTION_SCHEMA, optional: true },
      answer: { schema: 'CronPauseAnswer' },
      idempotencyKey: 'optional',
    },
    'PUT /api/apps/{id}/cron/schedule': {
      summary: "Overrides a periodic process's schedule until the committed one changes (null returns to it)",
      body: { name: 'CronScheduleRequest', schema: parseSchedule.schema },
      answer: { schema: 'CronScheduleAnswer' },
      idempotencyKey: 'optional',
    },
    'POST /api/apps/{id}/invoke': {
      summary:
        'Invokes a function: the process form answers 202 with the execution; the legacy form waits for the output',
      description:
        "Process form `{ process, body? }`; any other body is the input of the app's only function (legacy form), answered 200 with its stdout, 502 `function_failed` or 504 `function_timed_out`.",
      body: { name: 'InvokeProcessRequest', schema: parseProcessForm.schema },
      answer: { status: 202, description: 'The execution: `executionId`, `jobId` and links.' },
      idempotencyKey: 'optional',
      errors: [413, 502, 504],
    },
    'GET /api/apps/{id}/function/history': {
      summary: "The app's function executions, newest first",
      query: [
        { name: 'limit', description: 'At most this many (default 20, ≤ 100).' },
        { name: 'process', description: 'Only this function process.' },
        { name: 'execution', description: 'Only this execution.' },
      ],
      answer: { schema: 'FunctionHistory' },
    },
  },
};

export const LOGS_ROUTE_DOCS: RouteDocGroup = {
  tag: 'logs',
  description: "Every allocation's stdout and stderr, kept per app.",
  routes: {
    'GET /api/v1/apps/{id}/logs': {
      summary: "The app's log lines, filtered; `follow=true` streams them as Server-Sent Events",
      query: [
        { name: 'process', description: 'Only this process.' },
        { name: 'allocation', description: 'Only this allocation.' },
        { name: 'release', description: 'Only this release.' },
        { name: 'stream', description: '`stdout` or `stderr`.' },
        { name: 'since', description: 'From this time.' },
        { name: 'until', description: 'Before this time (not with follow).' },
        { name: 'grep', description: 'Only lines with this text.' },
        { name: 'limit', description: 'At most this many lines.' },
        { name: 'follow', description: '`true`: a Server-Sent Events stream of new lines.' },
      ],
      answer: { schema: 'LogPage' },
    },
  },
};

export const EXEC_ROUTE_DOCS: RouteDocGroup = {
  tag: 'exec',
  description: "Exec sessions into an app's running allocation, the device-key step-up and device enrollment.",
  routes: {
    'POST /api/v1/exec-sessions': {
      summary: 'Creates an exec session (201 with the attach link)',
      body: { name: 'CreateExecSessionRequest', schema: parseCreate.schema },
      answer: { status: 201, description: 'The session with its attach link.' },
      errors: [409, 429],
    },
    'GET /api/v1/exec-sessions': { summary: 'Exec sessions of the caller', answer: { description: '`{ sessions }`.' } },
    'GET /api/v1/exec-sessions/{id}': { summary: 'One exec session', answer: { description: 'The session.' } },
    'DELETE /api/v1/exec-sessions/{id}': {
      summary: 'Ends an exec session',
      answer: { status: 204, description: 'Ended.' },
    },
    'POST /api/v1/exec-sessions/step-up/challenge': {
      summary: 'A nonce for the device-key step-up of one app',
      body: { name: 'StepUpChallengeRequest', schema: parseChallenge.schema },
      answer: { status: 201, description: 'The nonce to sign.' },
    },
    'POST /api/v1/exec-sessions/step-up': {
      summary: 'Trades a signed nonce for a one-use step-up capability bound to the app',
      body: { name: 'StepUpProofRequest', schema: parseProof.schema },
      answer: { status: 201, description: 'The one-use capability.' },
    },
    'POST /api/apps/{id}/exec': {
      summary: 'Compatibility exec: runs one command and answers its exit code and output',
      body: { name: 'ExecCommandRequest', schema: parseCommand.schema },
      answer: { description: '`{ exitCode, stdout, stderr, ... }`.' },
      errors: [409, 429],
    },
    'POST /api/v1/fleet/devices/enroll': {
      summary: 'Asks to enroll a device key (public; grants nothing until an administrator approves)',
      body: { name: 'DeviceEnrollRequest', schema: parseEnroll.schema },
      answer: { status: 201, description: 'The enrollment request.' },
    },
    'GET /api/v1/fleet/devices/enroll/{id}': {
      summary: 'The state of one enrollment request (public)',
      answer: { description: 'The enrollment request.' },
    },
    'GET /api/v1/fleet/devices/enrollments': {
      summary: 'Device enrollment requests',
      answer: { description: '`{ enrollments }`.' },
    },
    'POST /api/v1/fleet/devices/enrollments/{id}/approve': {
      summary: 'Approves a device enrollment request (decided once)',
      answer: { description: 'The decided enrollment.' },
      errors: [409],
    },
    'POST /api/v1/fleet/devices/enrollments/{id}/reject': {
      summary: 'Rejects a device enrollment request (decided once)',
      answer: { description: 'The decided enrollment.' },
      errors: [409],
    },
  },
};
