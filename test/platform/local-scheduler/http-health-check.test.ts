// tier: quick
import http from 'node:http';
import net from 'node:net';
import test from 'ava';
import { instanceHealth, type HealthChange, type ServiceInstance } from '../../../domain/registry/index.js';
import { LocalRegistry } from '../../../platform/local-registry/index.js';
import {
  HttpHealthCheck,
  STARTUP_MAX_RETRY_MS,
} from '../../../platform/local-scheduler/allocations/http-health-check.js';

async function freePort(): Promise<number> {
  const server = net.createServer();
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const port = (server.address() as net.AddressInfo).port;
  await new Promise<void>((resolve) => server.close(() => resolve()));
  return port;
}

function registered(registry: LocalRegistry, port: number): void {
  registry.register({
    id: 'i1',
    service: 'demo-web',
    app: 'demo',
    process: 'web',
    allocationId: 'a1',
    address: '127.0.0.1',
    port,
    tags: [],
    checks: [{ id: 'c1', name: 'HTTP GET /healthz', status: 'critical', output: 'starting', starting: true }],
  });
}

/** Resolves with the first instance state that satisfies `accept`, from registry changes. */
function nextState(registry: LocalRegistry, accept: (i: ServiceInstance) => boolean): Promise<ServiceInstance> {
  return new Promise((resolve) => {
    const stop = registry.watch((change: HealthChange) => {
      if (change.instance && accept(change.instance)) {
        stop();
        resolve(change.instance);
      }
    });
  });
}

test('a check probes at once and retries after 50 ms doubling, so an instance that listens late passes long before its 10 s interval, reading starting until then', async (t) => {
  const registry = new LocalRegistry();
  const port = await freePort();
  registered(registry, port);
  const check = new HttpHealthCheck({
    registry,
    instanceId: 'i1',
    checkId: 'c1',
    url: `http://127.0.0.1:${port}/healthz`,
    intervalMs: 10_000,
    timeoutMs: 1000,
  });
  t.teardown(() => check.stop());
  const started = Date.now();
  const refused = nextState(registry, (i) => i.checks[0]!.output.includes('ECONNREFUSED'));
  check.start();
  const early = await refused;
  t.is(instanceHealth(early), 'starting');
  t.true(early.checks[0]!.starting);
  const server = http.createServer((_req, res) => res.end('ok'));
  t.teardown(() => server.close());
  const passing = nextState(registry, (i) => i.checks[0]!.status === 'passing');
  await new Promise<void>((resolve) => server.listen(port, '127.0.0.1', resolve));
  const passed = await passing;
  t.is(instanceHealth(passed), 'passing');
  t.is(passed.checks[0]!.starting, undefined);
  t.true(Date.now() - started < 3000, `passed after ${Date.now() - started} ms`);
});

test('a check that has not passed when its start-up window ends reports critical plainly, as a real failure', async (t) => {
  const registry = new LocalRegistry();
  const server = http.createServer((_req, res) => {
    res.statusCode = 500;
    res.end('broken');
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  t.teardown(() => server.close());
  const port = (server.address() as net.AddressInfo).port;
  registered(registry, port);
  const check = new HttpHealthCheck({
    registry,
    instanceId: 'i1',
    checkId: 'c1',
    url: `http://127.0.0.1:${port}/healthz`,
    intervalMs: 100,
    timeoutMs: 1000,
    startupWindowMs: 1500,
  });
  t.teardown(() => check.stop());
  const first = nextState(registry, (i) => i.checks[0]!.output.includes(': 500'));
  const plain = nextState(registry, (i) => i.checks[0]!.starting !== true);
  check.start();
  t.is(instanceHealth(await first), 'starting');
  const after = await plain;
  t.is(instanceHealth(after), 'critical');
  t.regex(after.checks[0]!.output, /: 500/);
});

test('the registry counts the callers awaiting a service: awaited until the last one lets go, each letting go once', (t) => {
  const registry = new LocalRegistry();
  const woken: string[] = [];
  const off = registry.onAwaited('demo-web', () => woken.push('demo-web'));
  const first = registry.markAwaited('demo-web');
  const second = registry.markAwaited('demo-web');
  t.deepEqual(woken, ['demo-web'], 'told once, when the first caller begins to wait');
  t.true(registry.isAwaited('demo-web'));
  t.false(registry.isAwaited('other-web'));
  first();
  first();
  t.true(registry.isAwaited('demo-web'), 'a second release by the same caller does not count');
  second();
  t.false(registry.isAwaited('demo-web'));
  off();
  registry.markAwaited('demo-web')();
  t.deepEqual(woken, ['demo-web']);
});

test('while a caller awaits its service, a starting check sees the port the moment it accepts, not at its next start-up retry', async (t) => {
  const registry = new LocalRegistry();
  const port = await freePort();
  registered(registry, port);
  const server = http.createServer((_req, res) => res.end('ok'));
  t.teardown(() => server.close());
  let results = 0;
  let listenedAt = 0;
  const passed = new Promise<number>((resolve) => {
    const check = new HttpHealthCheck({
      ...demoCheck(registry, port),
      intervalMs: 10_000,
      timeoutMs: 1000,
      onResult: (status) => {
        results += 1;
        if (status === 'passing') {
          resolve(Date.now() - listenedAt);
          return;
        }
        // After 50, 100 and 200 ms the start-up backoff has reached its cap: right after this refused
        // probe the next one is STARTUP_MAX_RETRY_MS away. A wake begins, then the app listens.
        if (results === 4) {
          const unmark = registry.markAwaited('demo-web');
          t.teardown(unmark);
          setImmediate(() =>
            server.listen(port, '127.0.0.1', () => {
              listenedAt = Date.now();
            }),
          );
        }
      },
    });
    t.teardown(() => check.stop());
    check.start();
  });
  const afterListening = await passed;
  t.true(
    afterListening < STARTUP_MAX_RETRY_MS,
    `passed ${afterListening} ms after the port accepted; the start-up backoff would have waited ${STARTUP_MAX_RETRY_MS} ms`,
  );
});

test('a wake that begins while a starting check backs off makes it probe at once', async (t) => {
  const registry = new LocalRegistry();
  const server = http.createServer((_req, res) => res.end('ok'));
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  t.teardown(() => server.close());
  const port = (server.address() as net.AddressInfo).port;
  registered(registry, port);
  // A path the server answers 404 on first: the check backs off (not refused, so no port polling).
  let healthy = false;
  server.removeAllListeners('request');
  server.on('request', (_req: http.IncomingMessage, res: http.ServerResponse) => {
    res.statusCode = healthy ? 200 : 503;
    res.end();
  });
  let markedAt = 0;
  const passed = new Promise<number>((resolve) => {
    let results = 0;
    const check = new HttpHealthCheck({
      ...demoCheck(registry, port),
      intervalMs: 10_000,
      timeoutMs: 1000,
      onResult: (status) => {
        results += 1;
        if (status === 'passing') resolve(Date.now() - markedAt);
        else if (results === 4) {
          // The next retry is STARTUP_MAX_RETRY_MS away; the app turns healthy and a wake begins.
          healthy = true;
          setImmediate(() => {
            markedAt = Date.now();
            t.teardown(registry.markAwaited('demo-web'));
          });
        }
      },
    });
    t.teardown(() => check.stop());
    check.start();
  });
  const afterMark = await passed;
  t.true(afterMark < STARTUP_MAX_RETRY_MS, `passed ${afterMark} ms after the wake began`);
});

test('while a caller awaits its service, the probe goes on the connection the port poll opened: the app accepts one connection, not two', async (t) => {
  const registry = new LocalRegistry();
  const port = await freePort();
  registered(registry, port);
  t.teardown(registry.markAwaited('demo-web'));
  const server = http.createServer((_req, res) => res.end('ok'));
  let connections = 0;
  server.on('connection', () => (connections += 1));
  t.teardown(() => server.close());
  let refused = 0;
  const passed = new Promise<void>((resolve) => {
    const check = new HttpHealthCheck({
      ...demoCheck(registry, port),
      intervalMs: 10_000,
      timeoutMs: 1000,
      onResult: (status) => {
        if (status === 'passing') resolve();
        // The first probe was refused: from now on the check polls the port; the app listens later.
        else if ((refused += 1) === 1) setTimeout(() => server.listen(port, '127.0.0.1'), 30);
      },
    });
    t.teardown(() => check.stop());
    check.start();
  });
  await passed;
  t.is(refused, 1, 'one refused probe, then connection attempts only');
  t.is(connections, 1);
});

/** The check of the registered `demo-web` instance `i1` at `port`'s `/healthz`. */
function demoCheck(registry: LocalRegistry, port: number) {
  return { registry, service: 'demo-web', instanceId: 'i1', checkId: 'c1', url: `http://127.0.0.1:${port}/healthz` };
}
