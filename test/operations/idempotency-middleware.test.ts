// tier: full
import test from 'ava';
import Koa from 'koa';
import Router from '@koa/router';
import { idempotency } from '../../api/http/idempotency.js';
import { errorMiddleware } from '../../api/http/error-middleware.js';
import { jsonBodyParser } from '../../api/http/body-parser.js';
import { sqliteIdempotencyKeys } from '../../controllers/operations/index.js';
import { silentLogger } from '../../platform/logger.js';
import { openDatabase } from '../../store/database.js';
import { migrate } from '../../store/migrate.js';
import { CONTROL_MIGRATIONS } from '../../store/control/migrations.js';
import { request, serveApp } from '../helpers/servers.js';

test('a request in flight makes a concurrent one with the same key answer 409, and exactly one runs', async (t) => {
  const db = openDatabase(':memory:');
  migrate(db, CONTROL_MIGRATIONS);
  let runs = 0;
  let release!: () => void;
  const gate = new Promise<void>((resolve) => (release = resolve));
  const router = new Router();
  router.post('/things', idempotency({ keys: sqliteIdempotencyKeys(db), required: true }), async (ctx) => {
    runs += 1;
    await gate;
    ctx.status = 201;
    ctx.body = { id: `thing-${runs}` };
  });
  const app = new Koa();
  app.use(errorMiddleware(silentLogger()));
  app.use(jsonBodyParser(1024 * 1024));
  app.use(router.routes());
  const server = await serveApp(t, app);
  const headers = { 'idempotency-key': 'k' };
  const first = request(`${server.url}/things`, { method: 'POST', json: { a: 1 }, headers });
  // Wait until the first request holds the key.
  while ((db.prepare('SELECT COUNT(*) AS n FROM idempotency_keys').get() as { n: number }).n === 0)
    await new Promise((r) => setImmediate(r));
  const concurrent = await Promise.all(
    [1, 2, 3].map(() => request(`${server.url}/things`, { method: 'POST', json: { a: 1 }, headers })),
  );
  t.deepEqual(
    concurrent.map((c) => c.status),
    [409, 409, 409],
  );
  t.is(concurrent[0]!.body.error.code, 'idempotency_request_in_flight');
  t.is(concurrent[0]!.headers.get('retry-after'), '1');
  release();
  t.is((await first).status, 201);
  const replay = await request(`${server.url}/things`, { method: 'POST', json: { a: 1 }, headers });
  t.is(replay.status, 201);
  t.deepEqual(replay.body, { id: 'thing-1' });
  t.is(runs, 1);
  const missing = await request(`${server.url}/things`, { method: 'POST', json: { a: 1 } });
  t.is(missing.status, 400);
  t.is(missing.body.error.code, 'idempotency_key_required');
  db.close();
});
