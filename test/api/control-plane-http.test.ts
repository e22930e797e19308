// tier: full
import test from 'ava';
import Router from '@koa/router';
import { createControlApp } from '../../api/control/server/control-app.js';
import { ConflictError } from '../../domain/errors.js';
import { silentLogger } from '../../platform/logger.js';
import { request, serveApp, startTestControlPlane } from '../helpers/servers.js';
import { testConfig } from '../helpers/test-config.js';

test('the control plane answers health, version and capabilities over a real socket', async (t) => {
  const plane = await startTestControlPlane(t);
  const health = await request(`${plane.url}/api/health`);
  t.is(health.status, 200);
  t.is(health.body.status, 'ok');
  t.is(health.body.checks.database, 'pass');
  t.truthy(health.headers.get('x-request-id'));

  const version = await request(`${plane.url}/api/version`);
  t.is(version.status, 200);
  t.regex(version.body.label, /^v\d+\.\d+\.\d+-platform/);
  t.deepEqual(version.body.apiVersions, ['v1']);

  const caps = await request(`${plane.url}/api/v1/capabilities`);
  t.is(caps.status, 200);
  t.is(caps.body.apiVersion, 'v1');
  t.true(caps.body.capabilities.some((c: { name: string }) => c.name === 'meta'));
});

test('an unknown route is a JSON 404 and a wrong method a JSON 405', async (t) => {
  const plane = await startTestControlPlane(t);
  const missing = await request(`${plane.url}/api/nope`);
  t.is(missing.status, 404);
  t.is(missing.body.error.code, 'route_not_found');
  const wrong = await request(`${plane.url}/api/health`, { method: 'DELETE' });
  t.is(wrong.status, 405);
  t.is(wrong.body.error.code, 'method_not_allowed');
});

test('the control token guards protected routes and leaves public ones open', async (t) => {
  const plane = await startTestControlPlane(t, testConfig(t, { SVC_API_TOKEN: 'sekret-token' }));
  t.is((await request(`${plane.url}/api/health`)).status, 200);
  t.is((await request(`${plane.url}/api/version`)).status, 200);
  const anonymous = await request(`${plane.url}/api/v1/capabilities`);
  t.is(anonymous.status, 401);
  t.deepEqual(Object.keys(anonymous.body.error).sort(), ['code', 'details', 'message']);
  t.is(anonymous.body.error.code, 'missing_credentials');
  const wrong = await request(`${plane.url}/api/v1/capabilities`, { headers: { authorization: 'Bearer nope' } });
  t.is(wrong.status, 401);
  t.is(wrong.body.error.code, 'invalid_credentials');
  t.false(wrong.text.includes('sekret-token'));
  const ok = await request(`${plane.url}/api/v1/capabilities`, { headers: { authorization: 'Bearer sekret-token' } });
  t.is(ok.status, 200);
});

test('the error middleware maps domain errors, bad bodies and unexpected errors', async (t) => {
  const router = new Router();
  router.post('/api/echo', (ctx) => {
    ctx.body = { got: ctx.request.body };
  });
  router.get('/api/conflict', () => {
    throw new ConflictError('app "web" already has an operation in flight', {
      code: 'operation_in_flight',
      details: { app: 'web' },
    });
  });
  router.get('/api/boom', () => {
    throw new Error('database password is hunter2');
  });
  const app = createControlApp({
    logger: silentLogger(),
    bodyLimitBytes: 1024,
    apiToken: undefined,
    requireExplicitAuth: false,
    routers: [router],
  });
  const server = await serveApp(t, app);

  const conflict = await request(`${server.url}/api/conflict`);
  t.is(conflict.status, 409);
  t.deepEqual(conflict.body, {
    error: {
      code: 'operation_in_flight',
      message: 'app "web" already has an operation in flight',
      details: { app: 'web' },
    },
  });

  const boom = await request(`${server.url}/api/boom`);
  t.is(boom.status, 500);
  t.is(boom.body.error.message, 'internal server error');
  t.false(boom.text.includes('hunter2'));
  t.is(boom.body.error.details.requestId, boom.headers.get('x-request-id'));

  const badJson = await request(`${server.url}/api/echo`, {
    method: 'POST',
    body: '{"a":',
    headers: { 'content-type': 'application/json' },
  });
  t.is(badJson.status, 400);
  t.is(badJson.body.error.code, 'invalid_json');

  const tooLarge = await request(`${server.url}/api/echo`, { method: 'POST', json: { blob: 'x'.repeat(4096) } });
  t.is(tooLarge.status, 413);
  t.is(tooLarge.body.error.code, 'payload_too_large');

  const fine = await request(`${server.url}/api/echo`, { method: 'POST', json: { a: 1 } });
  t.deepEqual(fine.body, { got: { a: 1 } });
});

test('closing the control plane lets an in-flight request finish', async (t) => {
  const router = new Router();
  let release!: () => void;
  const gate = new Promise<void>((resolve) => (release = resolve));
  let entered!: () => void;
  const inside = new Promise<void>((resolve) => (entered = resolve));
  router.get('/api/slow', async (ctx) => {
    entered();
    await gate;
    ctx.body = { done: true };
  });
  const app = createControlApp({
    logger: silentLogger(),
    bodyLimitBytes: 1024,
    apiToken: undefined,
    requireExplicitAuth: false,
    routers: [router],
  });
  const server = await serveApp(t, app);
  const pending = request(`${server.url}/api/slow`);
  await inside;
  const closed = server.close(5000);
  release();
  const response = await pending;
  await closed;
  t.is(response.status, 200);
  t.deepEqual(response.body, { done: true });
  await t.throwsAsync(() => fetch(`${server.url}/api/slow`));
});
