// tier: quick
import fs from 'node:fs';
import http from 'node:http';
import path from 'node:path';
import test from 'ava';
import { UnavailableError } from '../../domain/errors.js';
import { CATCH_ALL_SERVICE } from '../../domain/routing/index.js';
import {
  fetchHourlyCounts,
  readTunnelConfigFile,
  renderTunnelConfig,
  runReloadCommand,
  writeFileAtomic,
} from '../../platform/edge/index.js';
import { openControlStore } from '../../store/open-stores.js';
import { addAccessCounts, listAccessBuckets, replaceAccessWindow } from '../../store/control/access-buckets.js';
import { listEndpointToggles, setEndpointToggle } from '../../store/control/routing-toggles.js';
import { tempDir } from '../helpers/temp-dir.js';

const config = {
  tunnel: 'svc',
  'credentials-file': '/c.json',
  ingress: [{ hostname: 'a.test', service: 'http://127.0.0.1:1' }, { service: CATCH_ALL_SERVICE }],
};

test('the tunnel config file round-trips, is written atomically without leftovers, and reads missing or unreadable files as such', (t) => {
  const dir = tempDir(t);
  const file = path.join(dir, 'edge', 'tunnel.yml');
  t.deepEqual(readTunnelConfigFile(file), { state: 'missing' });
  writeFileAtomic(file, renderTunnelConfig(config));
  const read = readTunnelConfigFile(file);
  t.is(read.state, 'ok');
  t.deepEqual(read.state === 'ok' ? read.config : undefined, config);
  t.deepEqual(fs.readdirSync(path.dirname(file)), ['tunnel.yml']);
  fs.writeFileSync(file, 'ingress: [unclosed');
  t.is(readTunnelConfigFile(file).state, 'unreadable');
  fs.writeFileSync(file, '- a list\n');
  t.deepEqual(readTunnelConfigFile(file), { state: 'unreadable', reason: 'not a mapping' });
});

test('the reload command runs with the tunnel variables and reports a failure without throwing', async (t) => {
  const ok = await runReloadCommand('echo "$SVC_TUNNEL_NAME"', { SVC_TUNNEL_NAME: 'svc' });
  t.deepEqual(ok, { ok: true, exitCode: 0, output: 'svc' });
  const failed = await runReloadCommand('echo nope >&2; exit 3', {});
  t.deepEqual(failed, { ok: false, exitCode: 3, output: 'nope' });
});

test('migration 5 creates the routing tables; toggles report created, unchanged and updated', (t) => {
  const store = openControlStore(tempDir(t));
  t.teardown(() => store.db.close());
  t.true(store.migrations.applied.some((m) => m.version === 5 && m.name === 'routing-and-access'));
  t.is(setEndpointToggle(store.db, 'a', 'a.test', false), 'created');
  t.is(setEndpointToggle(store.db, 'a', 'a.test', false), 'unchanged');
  t.is(setEndpointToggle(store.db, 'a', 'a.test', true), 'updated');
  t.deepEqual(
    listEndpointToggles(store.db).map((x) => [x.app, x.hostname, x.enabled]),
    [['a', 'a.test', true]],
  );
});

test('access counts add up for gateway and log push and are replaced per window for the edge sync', (t) => {
  const store = openControlStore(tempDir(t));
  t.teardown(() => store.db.close());
  const hour = '2026-03-10T12:00:00.000Z';
  addAccessCounts(store.db, 'gateway', [{ hostname: 'a.test', hour, statusBucket: '2xx', count: 2 }]);
  addAccessCounts(store.db, 'gateway', [{ hostname: 'a.test', hour, statusBucket: '2xx', count: 3 }]);
  const window = { start: '2026-03-10T00:00:00.000Z', end: '2026-03-11T00:00:00.000Z' };
  replaceAccessWindow(store.db, 'edge-graphql', ['a.test'], window, [
    { hostname: 'a.test', hour, statusBucket: 'total', count: 10 },
    { hostname: 'a.test', hour: '2026-03-10T13:00:00.000Z', statusBucket: 'total', count: 1 },
  ]);
  replaceAccessWindow(store.db, 'edge-graphql', ['a.test'], window, [
    { hostname: 'a.test', hour, statusBucket: 'total', count: 12 },
  ]);
  t.deepEqual(
    listAccessBuckets(store.db, { since: window.start }).map((b) => [b.source, b.hour, b.count]),
    [
      ['edge-graphql', hour, 12],
      ['gateway', hour, 5],
    ],
  );
});

test('fetchHourlyCounts reads hourly groups and maps API failures to UnavailableError without the token in the message', async (t) => {
  let mode: 'ok' | 'error' | 'graphql-error' = 'ok';
  const server = http.createServer((req, res) => {
    req.resume();
    req.on('end', () => {
      if (mode === 'error') {
        res.writeHead(500);
        res.end('boom');
        return;
      }
      res.writeHead(200, { 'content-type': 'application/json' });
      res.end(
        JSON.stringify(
          mode === 'graphql-error'
            ? { data: null, errors: [{ message: 'zone not authorized' }] }
            : {
                data: {
                  viewer: {
                    zones: [
                      {
                        httpRequestsAdaptiveGroups: [
                          {
                            count: 7,
                            dimensions: { datetimeHour: '2026-03-10T12:00:00Z', clientRequestHTTPHost: 'A.test' },
                          },
                          { count: 'x', dimensions: {} },
                        ],
                      },
                    ],
                  },
                },
              },
        ),
      );
    });
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  t.teardown(() => server.close());
  const options = {
    apiUrl: `http://127.0.0.1:${(server.address() as { port: number }).port}`,
    apiToken: 'very-secret',
    zoneId: 'z',
  };
  const window = { start: '2026-03-10T00:00:00.000Z', end: '2026-03-11T00:00:00.000Z' };
  t.deepEqual(await fetchHourlyCounts(options, window, ['a.test']), [
    { hostname: 'a.test', hour: '2026-03-10T12:00:00.000Z', count: 7 },
  ]);
  mode = 'error';
  const http500 = await t.throwsAsync(fetchHourlyCounts(options, window, ['a.test']), {
    instanceOf: UnavailableError,
    message: /HTTP 500/,
  });
  t.false(http500.message.includes('very-secret'));
  mode = 'graphql-error';
  await t.throwsAsync(fetchHourlyCounts(options, window, ['a.test']), {
    instanceOf: UnavailableError,
    message: /zone not authorized/,
  });
});
