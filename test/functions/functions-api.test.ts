// tier: full
import fs from 'node:fs';
import path from 'node:path';
import anyTest, { type TestFn } from 'ava';
import { FUNCTION_BODY_LIMIT_BYTES } from '../../controllers/functions/index.js';
import { runSvc } from '../helpers/cli.js';
import { request } from '../helpers/servers.js';
import { waitForReconciled } from '../helpers/wait-for.js';
import {
  git,
  SPECS,
  startFunctionPlane,
  waitForExecution,
  type ExecutionView,
  type FunctionPlane,
} from './functions-harness.js';

// One plane for the file (building releases and starting jobs is the slow part); serial, so the
// history order is the order of the tests' invocations.
const test = anyTest as TestFn<{ env: FunctionPlane }>;

test.before(async (t) => {
  t.context.env = await startFunctionPlane();
});

test.after.always(async (t) => {
  await t.context.env?.close();
});

const invoke = (t: { context: { env: FunctionPlane } }, app: string, init: RequestInit & { json?: unknown } = {}) =>
  request(`${t.context.env.plane.url}/api/apps/${app}/invoke`, { method: 'POST', ...init });

const history = async (t: { context: { env: FunctionPlane } }, app: string, query = '') =>
  request(`${t.context.env.plane.url}/api/apps/${app}/function/history${query}`);

test.serial('the capabilities list the function routes', async (t) => {
  const caps = await request(`${t.context.env.plane.url}/api/v1/capabilities`);
  const functions = (caps.body.capabilities as { name: string; routes: string[] }[]).find(
    (c) => c.name === 'functions',
  );
  t.deepEqual(functions?.routes, ['POST /api/apps/{id}/invoke', 'GET /api/apps/{id}/function/history']);
});

test.serial(
  'invoke (process form) answers 202 at once and records the run: stdout is the output, exit code 0 succeeded',
  async (t) => {
    const started = await invoke(t, 'fns', { json: { process: 'echo', body: { greeting: 'hi', n: [1, 2] } } });
    t.is(started.status, 202, started.text);
    t.regex(started.body.executionId, /^exec-/);
    t.is(started.body.jobId, 'fns-echo');
    t.is(started.body.process, 'echo');
    t.is(started.body.status, 'running');
    t.is(started.body.timeoutMs, 30_000);
    t.is(started.headers.get('location'), `/api/apps/fns/function/history?execution=${started.body.executionId}`);

    const record = await waitForExecution(t.context.env, 'fns', started.body.executionId);
    t.is(record.status, 'succeeded');
    t.is(record.exitCode, 0);
    t.is(record.jobId, 'fns-echo');
    t.is(record.region, 'local');
    t.truthy(record.allocationId);
    t.true(typeof record.durationMs === 'number' && record.durationMs >= 0);
    t.true(Date.parse(record.finishedAt!) >= Date.parse(record.startedAt));
    t.false(record.outputTruncated);
    const echoed = JSON.parse(record.output);
    t.deepEqual(echoed, {
      body: '{"greeting":"hi","n":[1,2]}',
      bytes: 27,
      method: 'POST',
      path: '/api/apps/fns/invoke',
      greeting: 'hello from fns',
      job: 'fns-echo',
    });
  },
);

test.serial(
  'the function gets the app env and SVC_REQUEST_BODY, SVC_REQUEST_METHOD, SVC_REQUEST_PATH; an omitted body is JSON null',
  async (t) => {
    const started = await invoke(t, 'fns', { json: { process: 'echo' } });
    t.is(started.status, 202, started.text);
    const record = await waitForExecution(t.context.env, 'fns', started.body.executionId);
    t.deepEqual(JSON.parse(record.output), {
      body: 'null',
      bytes: 4,
      method: 'POST',
      path: '/api/apps/fns/invoke',
      greeting: 'hello from fns',
      job: 'fns-echo',
    });
  },
);

test.serial('a function that exits 1 is recorded failed with its exit code and standard error', async (t) => {
  const started = await invoke(t, 'fns', { json: { process: 'echo', body: { fail: true } } });
  t.is(started.status, 202);
  const record = await waitForExecution(t.context.env, 'fns', started.body.executionId);
  t.is(record.status, 'failed');
  t.is(record.exitCode, 1);
  t.is(record.output, '');
  t.regex(record.errorOutput, /boom: asked to fail/);
});

test.serial('a function that outlives its timeout is stopped and recorded timed_out', async (t) => {
  const started = await invoke(t, 'fns', { json: { process: 'slow', body: { hang: true } } });
  t.is(started.status, 202);
  t.is(started.body.timeoutMs, 1000);
  const record = await waitForExecution(t.context.env, 'fns', started.body.executionId);
  t.is(record.status, 'timed_out');
  t.is(record.jobId, 'fns-slow');
  t.true(record.durationMs! >= 1000);
});

test.serial('history lists executions newest first, honours limit and process, and caps the page', async (t) => {
  const ids: string[] = [];
  for (const n of [1, 2, 3]) {
    const started = await invoke(t, 'fns', { json: { process: 'echo', body: { n } } });
    ids.push(started.body.executionId);
    await waitForExecution(t.context.env, 'fns', started.body.executionId);
  }
  const two = await history(t, 'fns', '?limit=2');
  t.is(two.status, 200);
  t.is(two.body.app, 'fns');
  t.deepEqual(two.body.functions, ['echo', 'slow']);
  t.deepEqual(
    two.body.executions.map((e: ExecutionView) => e.executionId),
    [ids[2], ids[1]],
  );
  const all = await history(t, 'fns');
  const startedAt = (all.body.executions as ExecutionView[]).map((e) => Date.parse(e.startedAt));
  t.deepEqual(
    startedAt,
    [...startedAt].sort((a, b) => b - a),
  );
  t.true(all.body.executions.length >= 7);
  const slow = await history(t, 'fns', '?process=slow');
  t.deepEqual(
    slow.body.executions.map((e: ExecutionView) => e.status),
    ['timed_out'],
  );
  const capped = await history(t, 'fns', '?limit=100000');
  t.is(capped.status, 200);
  t.is(capped.body.executions.length, all.body.executions.length);
  for (const query of ['?limit=0', '?limit=-1', '?limit=ten', '?limit=1&limit=2', '?limt=5', '?process=..']) {
    const bad = await history(t, 'fns', query);
    t.is(bad.status, 400, query);
    t.is(bad.body.error.code, 'invalid_request', query);
    t.truthy(bad.body.error.message, query);
  }
});

test.serial(
  'legacy form: the body itself is the input of the only function, and the answer is its standard output',
  async (t) => {
    const json = await invoke(t, 'solo', { json: { order: 7 } });
    t.is(json.status, 200, json.text);
    t.regex(json.headers.get('content-type') ?? '', /application\/json/);
    t.deepEqual(json.body, {
      body: '{"order":7}',
      bytes: 11,
      method: 'POST',
      path: '/api/apps/solo/invoke',
      greeting: 'hello from solo',
      job: 'solo-handler',
    });
    const executionId = json.headers.get('x-svc-execution-id');
    t.regex(executionId ?? '', /^exec-/);
    t.is(json.headers.get('x-svc-job-id'), 'solo-handler');
    const text = await invoke(t, 'solo', { body: 'plain words', headers: { 'content-type': 'text/plain' } });
    t.is(text.status, 200);
    t.is(JSON.parse(text.text).body, '"plain words"');
    const empty = await invoke(t, 'solo');
    t.is(JSON.parse(empty.text).body, 'null');
    const listed = await history(t, 'solo', `?execution=${executionId}`);
    t.is(listed.body.executions[0].status, 'succeeded');
    t.deepEqual(JSON.parse(listed.body.executions[0].output), json.body);
  },
);

test.serial(
  'legacy form: a failing function answers 502 function_failed with the execution in the details',
  async (t) => {
    const failed = await invoke(t, 'solo', { json: { fail: true } });
    t.is(failed.status, 502);
    t.is(failed.body.error.code, 'function_failed');
    t.is(failed.body.error.details.exitCode, 1);
    t.is(failed.body.error.details.status, 'failed');
    const [record] = (await history(t, 'solo', `?execution=${failed.body.error.details.executionId}`)).body
      .executions as ExecutionView[];
    t.is(record?.status, 'failed');
  },
);

test.serial('an Idempotency-Key replays the original invocation instead of running again', async (t) => {
  const headers = { 'idempotency-key': 'invoke-once-1' };
  const first = await invoke(t, 'fns', { json: { process: 'echo', body: 'once' }, headers });
  const second = await invoke(t, 'fns', { json: { process: 'echo', body: 'once' }, headers });
  t.is(second.status, 202);
  t.is(second.headers.get('idempotent-replayed'), 'true');
  t.is(second.body.executionId, first.body.executionId);
  await waitForExecution(t.context.env, 'fns', first.body.executionId);
});

test.serial('bad input is a 4xx with the error body, never a 5xx, and starts nothing', async (t) => {
  const before = (await history(t, 'fns', '?limit=100')).body.executions.length;
  const cases: Array<[string, RequestInit & { json?: unknown }, number, string]> = [
    ['fns', { json: { process: 5 } }, 400, 'invalid_request'],
    ['fns', { json: { process: '' } }, 400, 'invalid_request'],
    ['fns', { json: { process: 'echo', extra: true } }, 400, 'invalid_request'],
    ['fns', { json: { anything: 1 } }, 400, 'process_required'],
    ['fns', { body: '{"process": ', headers: { 'content-type': 'application/json' } }, 400, 'invalid_json'],
    [
      'fns',
      { body: 'a=1', headers: { 'content-type': 'application/x-www-form-urlencoded' } },
      400,
      'unsupported_media_type',
    ],
    ['fns', { json: { process: 'echo', body: 'x'.repeat(FUNCTION_BODY_LIMIT_BYTES) } }, 413, 'function_body_too_large'],
    ['fns', { json: { process: 'nightly' } }, 422, 'not_a_function'],
    ['plain', { json: { input: 1 } }, 422, 'no_function_process'],
    ['idle', { json: { process: 'job' } }, 409, 'function_not_deployed'],
    ['fns', { json: { process: 'nope' } }, 404, 'process_not_found'],
    ['ghost', { json: { process: 'echo' } }, 404, 'app_not_found'],
  ];
  for (const [app, init, status, code] of cases) {
    const answer = await invoke(t, app, init);
    const what = `${app} ${JSON.stringify(init.json ?? init.body).slice(0, 60)}`;
    t.is(answer.status, status, what);
    t.is(answer.body.error?.code, code, what);
    t.is(typeof answer.body.error.message, 'string', what);
    t.is(typeof answer.body.error.details, 'object', what);
  }
  const ghost = await history(t, 'ghost');
  t.is(ghost.status, 404);
  t.is(ghost.body.error.code, 'app_not_found');
  t.is((await history(t, 'fns', '?limit=100')).body.executions.length, before);
});

test.serial('the function body limit is the largest environment string the kernel accepts', async (t) => {
  // The largest input that fits: a JSON string of exactly the limit (two quotes included).
  const started = await invoke(t, 'fns', {
    json: { process: 'echo', body: 'y'.repeat(FUNCTION_BODY_LIMIT_BYTES - 2) },
  });
  t.is(started.status, 202, started.text);
  const record = await waitForExecution(t.context.env, 'fns', started.body.executionId);
  t.is(record.status, 'succeeded');
  t.is(JSON.parse(record.output).bytes, FUNCTION_BODY_LIMIT_BYTES);
});

test.serial('svc invoke waits and prints the output; svc functions history lists the runs', async (t) => {
  const api = t.context.env.plane.url;
  const ok = await runSvc(['invoke', 'solo', '--body', '{"cli":true}', '--api', api]);
  t.is(ok.code, 0, ok.stderr);
  t.is(JSON.parse(ok.stdout).body, '{"cli":true}');
  const failed = await runSvc(['invoke', 'fns', '--process', 'echo', '--body', '{"fail":true}', '--api', api]);
  t.is(failed.code, 1);
  t.regex(failed.stderr, /boom: asked to fail/);
  t.regex(failed.stderr, /function fns\/echo failed \(exit code 1\)/);
  const ambiguous = await runSvc(['invoke', 'fns', '--api', api]);
  t.is(ambiguous.code, 2);
  t.regex(ambiguous.stderr, /several function processes \(echo, slow\)/);
  const listed = await runSvc(['functions', 'history', 'fns', '--limit', '2', '--api', api]);
  t.is(listed.code, 0, listed.stderr);
  t.regex(listed.stdout, /^EXECUTION\s+PROCESS\s+STATUS/);
  t.regex(listed.stdout.split('\n')[1] ?? '', /echo\s+failed\s+1/);
  const unknown = await runSvc(['functions', 'history', 'ghost', '--api', api]);
  t.is(unknown.code, 4);
});

// Last: it restarts the plane and stops `solo`.
test.serial(
  'history is durable: a run that ends after an API restart is completed by the new plane, and records outlive their job',
  async (t) => {
    const env = t.context.env;
    const started = await invoke(t, 'fns', { json: { process: 'slow', body: { hang: true } } });
    t.is(started.status, 202);
    await env.restart();
    // The new plane never saw the invocation: the history read reconciles the record with the scheduler.
    const record = await waitForExecution(env, 'fns', started.body.executionId);
    t.is(record.status, 'timed_out');

    const before = (await history(t, 'solo', '?limit=100')).body.executions as ExecutionView[];
    t.true(before.length >= 5);
    fs.writeFileSync(
      path.join(env.config.appsDir, 'solo', 'infraspec.yaml'),
      SPECS.solo!.replace('deploy: true', 'deploy: false'),
    );
    git(env.config.appsDir, 'commit', '-q', '-am', 'stop solo');
    const controllers = [env.plane.reconcilers.specController, env.plane.reconcilers.appController];
    await waitForReconciled(controllers, async () => (await env.scheduler.getJob('solo-handler')) === undefined, {
      what: 'solo-handler purged',
    });
    t.deepEqual(
      await env.scheduler.listExecutions('solo-handler'),
      [],
      'the scheduler forgot the executions with the job',
    );
    const after = (await history(t, 'solo', '?limit=100')).body.executions as ExecutionView[];
    t.deepEqual(
      after.map((e) => [e.executionId, e.status]),
      before.map((e) => [e.executionId, e.status]),
    );
    const refused = await invoke(t, 'solo', { json: { input: 1 } });
    t.is(refused.status, 409);
    t.is(refused.body.error.code, 'function_not_deployed');
  },
);
