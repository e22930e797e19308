// tier: full
import fs from 'node:fs';
import http from 'node:http';
import os from 'node:os';
import path from 'node:path';
import zlib from 'node:zlib';
import test, { type ExecutionContext } from 'ava';
import YAML from 'yaml';
import { request } from '../helpers/servers.js';
import { tempDir } from '../helpers/temp-dir.js';
import { freePort, hostRequest, startWithApps, waitForState } from './wake-harness.js';

/** A local stand-in for the edge analytics API that records each request and answers hourly counts. */
async function analyticsReceiver(t: ExecutionContext, counts: () => { host: string; hour: string; count: number }[]) {
  const seen: { authorization: string | undefined; path: string; body: any }[] = [];
  const server = http.createServer((req, res) => {
    const chunks: Buffer[] = [];
    req.on('data', (c: Buffer) => chunks.push(c));
    req.on('end', () => {
      const body = JSON.parse(Buffer.concat(chunks).toString('utf8'));
      seen.push({ authorization: req.headers.authorization, path: req.url ?? '', body });
      const { start, end, hosts } = body.variables;
      const groups = counts()
        .filter((c) => c.hour >= start && c.hour < end && hosts.includes(c.host))
        .map((c) => ({ count: c.count, dimensions: { datetimeHour: c.hour, clientRequestHTTPHost: c.host } }));
      res.writeHead(200, { 'content-type': 'application/json' });
      res.end(JSON.stringify({ data: { viewer: { zones: [{ httpRequestsAdaptiveGroups: groups }] } }, errors: null }));
    });
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  t.teardown(() => new Promise<void>((resolve) => server.close(() => resolve())));
  return { url: `http://127.0.0.1:${(server.address() as { port: number }).port}/client/v4`, seen };
}

test('routing: the tunnel config follows healthy apps and toggles, corrects drift, skips unchanged writes, runs the reload command; access patterns take gateway, log push and edge analytics counts', async (t) => {
  const hour = new Date(Math.floor(Date.now() / 3_600_000) * 3_600_000 - 3_600_000).toISOString();
  let edgeCount = 40;
  const receiver = await analyticsReceiver(t, () => [
    { host: 'www.example.test', hour, count: edgeCount },
    { host: 'elsewhere.test', hour, count: 99 },
  ]);
  const reloadLog = path.join(tempDir(t), 'reloads.log');
  const port = await freePort();
  const { plane, config } = await startWithApps(t, [{ name: 'site', hostname: 'www.example.test', port, min: 1 }], {
    SVC_TUNNEL_NAME: 'edge-1',
    SVC_TUNNEL_RELOAD_COMMAND: `echo "$SVC_TUNNEL_CONFIG" >> ${reloadLog}`,
    SVC_EDGE_LOGPUSH_TOKEN: 'logpush-secret',
    SVC_EDGE_API_TOKEN: 'edge-api-token',
    SVC_EDGE_ZONE_ID: 'zone-123',
    SVC_EDGE_API_URL: receiver.url,
    SVC_EDGE_SYNC_INTERVAL: 'off',
  });
  // Routed once healthy: through the gateway (the process's own port changes with each allocation), catch-all last, Routed True.
  const routed = await waitForState(
    plane,
    async () => {
      const app = (await request(`${plane.url}/api/apps/site`)).body;
      const cond = app.conditions?.find((c: { type: string }) => c.type === 'Routed');
      return cond?.status === 'True' ? cond : undefined;
    },
    'Routed True',
    20_000,
  );
  t.is(routed.reason, 'IngressWritten');
  const ingress = (await request(`${plane.url}/api/tunnel/ingress`)).body;
  t.deepEqual(ingress.hostnames, ['www.example.test']);
  t.deepEqual(ingress.ingress, [{ hostname: 'www.example.test', service: plane.url }, { service: 'http_status:404' }]);
  const file = YAML.parse(fs.readFileSync(config.tunnelConfigFile, 'utf8'));
  t.deepEqual(file, { tunnel: 'edge-1', 'credentials-file': config.tunnelCredentialsFile, ingress: ingress.ingress });
  // The reload command ran after each change (the first write had only the catch-all), with the file path.
  const reloads = fs.readFileSync(reloadLog, 'utf8').trim().split('\n');
  t.true(reloads.length >= 1 && reloads.every((line) => line === config.tunnelConfigFile));

  // Routing an app (the deploy pipeline's `forge` step) reconciles and returns the app's rules; an unchanged file is not rewritten.
  const inode = fs.statSync(config.tunnelConfigFile).ino;
  const forged = await plane.routing.routeApp('site');
  t.deepEqual(
    forged.rules.map((r) => r.hostname),
    ['www.example.test'],
  );
  t.is(fs.statSync(config.tunnelConfigFile).ino, inode);
  t.is(fs.readFileSync(reloadLog, 'utf8').trim().split('\n').length, reloads.length);

  // A hand edit is corrected.
  fs.writeFileSync(
    config.tunnelConfigFile,
    'tunnel: edge-1\ningress:\n  - service: http_status:404\n  - hostname: evil.test\n    service: http://10.9.9.9:80\n',
  );
  await waitForState(
    plane,
    async () =>
      YAML.parse(fs.readFileSync(config.tunnelConfigFile, 'utf8'))?.ingress?.length === 2 &&
      fs.readFileSync(config.tunnelConfigFile, 'utf8').includes('www.example.test'),
    'drift corrected',
  );
  t.deepEqual(YAML.parse(fs.readFileSync(config.tunnelConfigFile, 'utf8')), file);

  // Toggle off one hostname: only it leaves the ingress; the gateway answers 404 for it; then back on.
  const off = await request(`${plane.url}/api/apps/site/endpoints/toggle`, {
    method: 'POST',
    json: { hostname: 'WWW.example.test', enabled: false },
  });
  t.is(off.status, 200, off.text);
  t.deepEqual(off.body, {
    app: 'site',
    hostname: 'www.example.test',
    enabled: false,
    outcome: 'created',
    routed: false,
  });
  t.deepEqual((await request(`${plane.url}/api/tunnel/ingress`)).body.ingress, [{ service: 'http_status:404' }]);
  const disabled = await hostRequest(`${plane.url}/`, { host: 'www.example.test' });
  t.is(disabled.status, 404);
  t.is(disabled.json().error.code, 'endpoint_disabled');
  const on = await request(`${plane.url}/api/apps/site/endpoints/toggle`, {
    method: 'POST',
    json: { hostname: 'www.example.test', enabled: true },
  });
  t.is(on.body.routed, true);
  t.deepEqual((await request(`${plane.url}/api/tunnel/ingress`)).body.hostnames, ['www.example.test']);

  // Toggle errors are 4xx with the error shape.
  const bad = [
    [
      await request(`${plane.url}/api/apps/site/endpoints/toggle`, {
        method: 'POST',
        json: { hostname: 'www.example.test' },
      }),
      400,
      'invalid_request',
    ],
    [
      await request(`${plane.url}/api/apps/site/endpoints/toggle`, {
        method: 'POST',
        json: { hostname: 'www.example.test', enabled: 'yes' },
      }),
      400,
      'invalid_request',
    ],
    [
      await request(`${plane.url}/api/apps/site/endpoints/toggle`, {
        method: 'POST',
        json: { hostname: 'other.test', enabled: false },
      }),
      400,
      'endpoint_not_declared',
    ],
    [
      await request(`${plane.url}/api/apps/site/endpoints/toggle`, {
        method: 'POST',
        json: { hostname: 'no spaces', enabled: false },
      }),
      400,
      'invalid_hostname',
    ],
    [
      await request(`${plane.url}/api/apps/nope/endpoints/toggle`, {
        method: 'POST',
        json: { hostname: 'a.test', enabled: false },
      }),
      404,
      'app_not_found',
    ],
  ] as const;
  for (const [response, status, code] of bad) {
    t.is(response.status, status, response.text);
    t.is(response.body.error.code, code);
    t.is(typeof response.body.error.message, 'string');
  }

  // Gateway traffic (warm process: ready) is counted; gateway errors are 4xx.
  const warm = await hostRequest(`${plane.url}/page`, { host: 'www.example.test:443' });
  t.is(warm.status, 200);
  t.is(warm.headers['x-svc-wake-action'], 'ready');
  for (const [url, status, code] of [
    [`${plane.url}/api/wake-gateway/unknown.test/x`, 400, 'unknown_endpoint'],
    [`${plane.url}/api/wake-gateway/www.example.test/?wakeTimeout=5m`, 400, 'invalid_wake_timeout'],
    [`${plane.url}/api/wake-gateway/bad_host!/`, 400, 'invalid_hostname'],
  ] as const) {
    const response = await hostRequest(url);
    t.is(response.status, status, `${url}: ${response.text}`);
    t.is(response.json().error.code, code);
  }
  // A Host that is no public endpoint reaches the API as usual.
  t.is((await hostRequest(`${plane.url}/api/health`, { host: 'unknown.test' })).status, 200);

  // Log push: its own secret, HTTPS only (TLS or X-Forwarded-Proto https from loopback); only counts are stored.
  const lines = [
    {
      ClientRequestHost: 'www.example.test',
      EdgeResponseStatus: 200,
      EdgeStartTimestamp: hour,
      RequestHeaders: { authorization: 'Bearer user-secret' },
    },
    { ClientRequestHost: 'www.example.test', EdgeResponseStatus: 503, EdgeStartTimestamp: hour },
    { ClientRequestHost: 'unmapped.test', EdgeResponseStatus: 200, EdgeStartTimestamp: hour },
  ]
    .map((l) => JSON.stringify(l))
    .join('\n');
  const push = (headers: Record<string, string>, body: string | Buffer = lines) =>
    hostRequest(`${plane.url}/api/access/edge/logpush`, {
      method: 'POST',
      body,
      headers: { 'content-type': 'application/x-ndjson', 'x-forwarded-proto': 'https', ...headers },
    });
  t.is((await push({})).status, 401);
  t.is((await push({ 'x-svc-logpush-token': 'wrong' })).json().error.code, 'invalid_logpush_token');
  t.is(
    (await push({ 'x-svc-logpush-token': 'logpush-secret', 'x-forwarded-proto': 'http' })).json().error.code,
    'https_required',
  );
  const accepted = await push({ 'x-svc-logpush-token': 'logpush-secret' });
  t.is(accepted.status, 202, accepted.text);
  t.deepEqual(accepted.json(), { accepted: 2, dropped: 1, buckets: 2 });
  t.is(
    (await push({ 'x-edge-log-secret': 'logpush-secret', 'content-encoding': 'gzip' }, zlib.gzipSync(lines))).status,
    202,
  );
  t.is((await push({ authorization: 'Bearer logpush-secret' })).status, 202);

  // Edge analytics sync against the local receiver: exact request, day windows, a re-run replaces values.
  const synced = await request(`${plane.url}/api/access/edge/sync`, { method: 'POST' });
  t.is(synced.status, 200, synced.text);
  t.deepEqual(synced.body.hostnames, ['www.example.test']);
  t.is(synced.body.windows.length, 1);
  t.is(synced.body.requests, 40);
  const call = receiver.seen[0]!;
  t.is(call.authorization, 'Bearer edge-api-token');
  t.is(call.path, '/client/v4/graphql');
  t.is(call.body.variables.zoneTag, 'zone-123');
  t.deepEqual(call.body.variables.hosts, ['www.example.test']);
  t.regex(call.body.query, /httpRequestsAdaptiveGroups/);
  edgeCount = 45;
  await request(`${plane.url}/api/access/edge/sync`, { method: 'POST' });
  const patterns = (await request(`${plane.url}/api/access/patterns?hours=48`)).body;
  const www = patterns.hostnames.find((h: { hostname: string }) => h.hostname === 'www.example.test');
  t.is(www.sources['edge-graphql'], 45);
  t.is(www.sources.logpush, 6);
  t.true(www.sources.gateway >= 2);
  t.deepEqual(
    www.hours.find((h: { hour: string }) => h.hour === hour),
    { hour, count: 45, statusBuckets: { '2xx': 3, '5xx': 3 } },
  );
  t.false(JSON.stringify(patterns).includes('secret'));
  t.false(
    patterns.hostnames.some(
      (h: { hostname: string }) => h.hostname === 'unmapped.test' || h.hostname === 'elsewhere.test',
    ),
  );
  t.is((await request(`${plane.url}/api/access/patterns?hours=0`)).body.error.code, 'invalid_query');

  // Operator view: public and local endpoints with readiness and the gateway URL (no fixed private
  // address: the process's port is its allocation's own, so a new one can start beside it).
  const targets = (await request(`${plane.url}/api/operator/wake-targets`)).body.targets;
  t.is(targets.length, 1);
  t.is(targets[0].readiness, 'ready');
  t.deepEqual(
    targets[0].endpoints.map((e: { scope: string }) => e.scope),
    ['public', 'local'],
  );
  t.is(targets[0].endpoints[0].wakeGatewayUrl, `${plane.url}/api/wake-gateway/www.example.test/`);
  t.regex(targets[0].endpoints[1].url, /^http:\/\/127\.0\.0\.1:\d+\/$/);

  // Capabilities list the routes.
  const capabilities = (await request(`${plane.url}/api/v1/capabilities`)).body;
  t.true(JSON.stringify(capabilities).includes('POST /api/apps/{id}/endpoints/toggle'));
});

test('the explicit wake gateway form needs the control token when one is set and never forwards it; log push stays public but refuses without its secret configured', async (t) => {
  const port = await freePort();
  const { plane } = await startWithApps(t, [{ name: 'priv', hostname: 'priv.example.test', port, min: 1 }], {
    SVC_API_TOKEN: 'control-token',
    SVC_HOST: '0.0.0.0',
  });
  await waitForState(
    plane,
    async () =>
      (await plane.reconcilers.registry.instances('priv-web')).some((i) =>
        i.checks.every((c) => c.status === 'passing'),
      ),
    'priv passing',
    20_000,
  );
  const denied = await hostRequest(`${plane.url}/api/wake-gateway/priv.example.test/`);
  t.is(denied.status, 401);
  t.is(denied.json().error.code, 'missing_credentials');
  const allowed = await hostRequest(`${plane.url}/api/wake-gateway/priv.example.test/echo`, {
    headers: { authorization: 'Bearer control-token' },
  });
  t.is(allowed.status, 200, allowed.text);
  t.is(allowed.json().headers.authorization, undefined);
  t.is(allowed.json().host, 'priv.example.test');
  // Host-based traffic belongs to the app: no control token needed, the app's own Authorization passes through.
  const hostBased = await hostRequest(`${plane.url}/x`, {
    host: 'priv.example.test',
    headers: { authorization: 'Bearer app-user' },
  });
  t.is(hostBased.json().headers.authorization, 'Bearer app-user');
  // From a peer outside the trusted (loopback) boundary, edge identity and forwarded headers are stripped.
  const external = Object.values(os.networkInterfaces())
    .flat()
    .find((i) => i !== undefined && i.family === 'IPv4' && !i.internal)?.address;
  if (external === undefined) {
    t.log('no non-loopback IPv4 address: the untrusted-peer check is skipped');
  } else {
    const forged = await hostRequest(`http://${external}:${plane.server.port}/who`, {
      host: 'priv.example.test',
      headers: {
        'edge-access-jwt-assertion': 'forged',
        'cf-access-authenticated-user-email': 'admin@example.test',
        'x-forwarded-for': '6.6.6.6',
        'x-forwarded-host': 'evil.test',
      },
    });
    t.is(forged.status, 200, forged.text);
    const headers = forged.json().headers;
    t.is(headers['edge-access-jwt-assertion'], undefined);
    t.is(headers['cf-access-authenticated-user-email'], undefined);
    t.is(headers['x-forwarded-for'], external);
    t.is(headers['x-forwarded-host'], 'priv.example.test');
    // Loopback peers (the tunnel daemon) keep them.
    const trusted = await hostRequest(`http://127.0.0.1:${plane.server.port}/who`, {
      host: 'priv.example.test',
      headers: { 'edge-access-jwt-assertion': 'from-edge' },
    });
    t.is(trusted.json().headers['edge-access-jwt-assertion'], 'from-edge');
  }
  // The routing API itself is protected.
  t.is((await request(`${plane.url}/api/tunnel/ingress`)).status, 401);
  const logpush = await request(`${plane.url}/api/access/edge/logpush`, { method: 'POST', json: [] });
  t.is(logpush.status, 503);
  t.is(logpush.body.error.code, 'logpush_disabled');
});
