// tier: full
import test from 'ava';
import { planNotificationBootstrap } from '../../domain/events/notification-bootstrap.js';
import { runSvc } from '../helpers/cli.js';
import { request, startTestControlPlane } from '../helpers/servers.js';
import { testConfig } from '../helpers/test-config.js';

const gateway = { service: 'ops-event-sink', instances: [{ address: '10.0.0.9', port: 8088, status: 'passing' }] };

test('notification bootstrap plans one warning/critical webhook for the sink gateway and skips an existing one', (t) => {
  t.like(planNotificationBootstrap([{ service: 'shop-web', instances: [] }, gateway], []), {
    action: 'create',
    service: 'ops-event-sink',
    channel: { provider: 'webhook', url: 'http://10.0.0.9:8088/api/events', severities: ['warning', 'critical'] },
  });
  t.like(planNotificationBootstrap([gateway], [{ provider: 'webhook', url: 'http://10.0.0.9:8088/api/events' }]), {
    action: 'skip',
  });
  t.like(planNotificationBootstrap([{ service: 'shop-web', instances: [] }], []), { action: 'none' });
  t.like(planNotificationBootstrap([{ service: 'sink-gateway', instances: [] }], []), {
    action: 'none',
    reason: 'no instance of sink-gateway is registered',
  });
});

test('svc events lists events and active incidents; svc notifications bootstrap reports when no gateway exists', async (t) => {
  const plane = await startTestControlPlane(t, testConfig(t, { SVC_CAPACITY_CHECK_INTERVAL: 'off' }));
  await request(`${plane.url}/api/events`, {
    method: 'POST',
    json: {
      type: 'deploy.failed',
      severity: 'critical',
      title: 'Deploy of web failed',
      app: 'web',
      metadata: { correlationKey: 'web:deploy' },
    },
  });
  const [list, active, bootstrap] = await Promise.all([
    runSvc(['events', '--api', plane.url]),
    runSvc(['events', 'active', '--api', plane.url, '--json']),
    runSvc(['notifications', 'bootstrap', '--api', plane.url]),
  ]);
  t.is(list.code, 0, list.stderr);
  t.regex(list.stdout, /deploy\.failed.*Deploy of web failed/);
  t.is(active.code, 0, active.stderr);
  t.is(JSON.parse(active.stdout)[0].correlationKey, 'web:deploy');
  t.is(bootstrap.code, 0, bootstrap.stderr);
  t.regex(bootstrap.stdout, /nothing to do: no registry service matches/);
});
