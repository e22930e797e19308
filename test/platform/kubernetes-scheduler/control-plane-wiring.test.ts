// tier: full
import test from 'ava';
import { ReleaseBuilder } from '../../../platform/release-builder/index.js';
import { silentLogger } from '../../../platform/logger.js';
import { getApp, setAppRelease } from '../../../store/control/apps.js';
import { startPlaneWithApps } from '../../helpers/plane-with-apps.js';
import { tempDir } from '../../helpers/temp-dir.js';
import { waitForReconciled } from '../../helpers/wait-for.js';
import { request } from '../../helpers/servers.js';
import { FakeKubeApi } from './fake-kube-api.js';

const SPEC = `name: shop
deploy: true
processes:
  web:
    port: 8080
    health:
      path: /healthz
    resources:
      cpu: 500
      memory: 256
`;

test('with SVC_SCHEDULER_DRIVER=kubernetes the control plane deploys an image release as a Deployment in the configured namespace', async (t) => {
  const api = new FakeKubeApi('shop-ns');
  await api.start();
  t.teardown(() => api.close());
  const kubeconfig = api.writeKubeconfig(tempDir(t));
  const { plane, config, code } = await startPlaneWithApps(t, {
    server: 'export {};\n',
    apps: [{ name: 'shop', spec: SPEC, release: false }],
    env: { SVC_SCHEDULER_DRIVER: 'kubernetes', SVC_KUBECONFIG: kubeconfig, SVC_KUBERNETES_NAMESPACE: 'shop-ns' },
  });
  const release = await new ReleaseBuilder({ dataDir: config.dataDir, logger: silentLogger() }).build({
    app: 'shop',
    repoUrl: code,
    ref: 'main',
    image: `registry.example.test/shop@sha256:${'b'.repeat(64)}`,
  });
  setAppRelease(plane.db, 'shop', { commit: release.manifest.commit, dir: release.dir });
  plane.reconcilers.appController.enqueue('shop');

  const deployment = await waitForReconciled(
    [plane.reconcilers.appController],
    () => [...api.store.get('deployments')!.values()][0],
    { what: 'a Deployment applied' },
  ).catch((error: Error) => {
    t.log(JSON.stringify(getApp(plane.db, 'shop')?.conditions, null, 1));
    t.log(api.requests.map((r) => `${r.method} ${r.path}`).join('\n'));
    throw error;
  });
  t.is(deployment.metadata.namespace ?? 'shop-ns', 'shop-ns');
  t.is(deployment.metadata.labels?.['svc.dev/app'], 'shop');
  const spec = deployment.spec as {
    template: { spec: { containers: { image: string; resources: { requests: { cpu: string } } }[] } };
  };
  t.is(spec.template.spec.containers[0]!.image, `registry.example.test/shop@sha256:${'b'.repeat(64)}`);
  t.true(
    api.requests.every((r) => r.path.includes('/namespaces/shop-ns/') || !r.path.includes('/namespaces/')),
    'every namespaced call went to shop-ns',
  );
  t.not(getApp(plane.db, 'shop'), undefined);
});

test('a cluster that is down when the control plane starts does not keep it down: the app says SchedulerUnavailable, then deploys once the cluster answers', async (t) => {
  // Learn a free port, then leave it closed while the control plane starts.
  const probe = new FakeKubeApi('shop-ns');
  await probe.start();
  const port = Number(new URL(probe.url).port);
  const kubeconfig = probe.writeKubeconfig(tempDir(t));
  await probe.close();

  const { plane, config, code } = await startPlaneWithApps(t, {
    server: 'export {};\n',
    apps: [{ name: 'shop', spec: SPEC, release: false }],
    env: { SVC_SCHEDULER_DRIVER: 'kubernetes', SVC_KUBECONFIG: kubeconfig, SVC_KUBERNETES_NAMESPACE: 'shop-ns' },
  });
  const release = await new ReleaseBuilder({ dataDir: config.dataDir, logger: silentLogger() }).build({
    app: 'shop',
    repoUrl: code,
    ref: 'main',
    image: `registry.example.test/shop@sha256:${'c'.repeat(64)}`,
  });
  setAppRelease(plane.db, 'shop', { commit: release.manifest.commit, dir: release.dir });
  plane.reconcilers.appController.enqueue('shop');
  const deployed = () =>
    (getApp(plane.db, 'shop')?.conditions as { type: string; reason: string; message: string }[] | undefined)?.find(
      (c) => c.type === 'Deployed',
    );
  const down = await waitForReconciled(
    [plane.reconcilers.appController],
    () => (deployed()?.reason === 'SchedulerUnavailable' ? deployed() : undefined),
    { what: 'Deployed=False SchedulerUnavailable' },
  );
  t.regex(down.message, /the scheduler cannot be reached/);
  t.is((await request(`${plane.url}/api/health`)).status, 200, 'the control plane serves meanwhile');

  const api = new FakeKubeApi('shop-ns');
  await api.start(port);
  t.teardown(() => api.close());
  const deployment = await waitForReconciled(
    [plane.reconcilers.appController],
    () => [...api.store.get('deployments')!.values()][0],
    { what: 'a Deployment applied after the cluster came back' },
  );
  t.is(deployment.metadata.labels?.['svc.dev/app'], 'shop');
  await waitForReconciled([plane.reconcilers.appController], () => deployed()?.reason === 'JobsSubmitted', {
    what: 'Deployed=True',
  });
});

test('on the kubernetes driver the autoscaler scales on the pods CPU from the metrics API, and the app view shows the sample', async (t) => {
  const api = new FakeKubeApi('shop-ns');
  await api.start();
  t.teardown(() => api.close());
  const kubeconfig = api.writeKubeconfig(tempDir(t));
  const { plane, config, code } = await startPlaneWithApps(t, {
    server: 'export {};\n',
    apps: [
      {
        name: 'shop',
        spec: `${SPEC}    scaling:\n      min: 1\n      max: 3\n      auto:\n        metric: cpu\n        target: 50\n`,
        release: false,
      },
    ],
    env: {
      SVC_SCHEDULER_DRIVER: 'kubernetes',
      SVC_KUBECONFIG: kubeconfig,
      SVC_KUBERNETES_NAMESPACE: 'shop-ns',
      SVC_AUTOSCALE_INTERVAL: '200ms',
    },
  });
  const release = await new ReleaseBuilder({ dataDir: config.dataDir, logger: silentLogger() }).build({
    app: 'shop',
    repoUrl: code,
    ref: 'main',
    image: `registry.example.test/shop@sha256:${'d'.repeat(64)}`,
  });
  setAppRelease(plane.db, 'shop', { commit: release.manifest.commit, dir: release.dir });
  plane.reconcilers.appController.enqueue('shop');
  const deployment = await waitForReconciled(
    [plane.reconcilers.appController],
    () => [...api.store.get('deployments')!.values()][0],
    { what: 'a Deployment applied' },
  );
  t.is((deployment.spec as { replicas: number }).replicas, 1);

  // One pod runs, using 0.9 of a core: 90 % against a target of 50 asks for 2.
  const template = (deployment.spec as { template: { metadata: any; spec: any } }).template;
  const name = `${deployment.metadata.name}-abc12`;
  api.metrics.set(name, '100Mi');
  api.cpu.set(name, '900m');
  api.putPod({
    metadata: { ...template.metadata, name, creationTimestamp: '2030-01-01T00:00:00Z' },
    spec: template.spec,
    status: {
      phase: 'Running',
      podIP: '10.1.0.7',
      conditions: [{ type: 'Ready', status: 'True' }],
      containerStatuses: [{ name: 'web', restartCount: 0, state: { running: { startedAt: '2030-01-01T00:00:01Z' } } }],
    },
  });
  await waitForReconciled(
    [plane.reconcilers.appController],
    () => (api.get('deployments', deployment.metadata.name).spec.replicas === 2 ? true : undefined),
    { what: 'the Deployment scaled to 2' },
  );
  const change = plane.autoscaler.lastChange('shop', 'web')!;
  t.like(change, { source: 'autoscaler', from: 1, to: 2, metric: 'cpu', target: 50, value: 90 });
  const view = (await request(`${plane.url}/api/apps/shop`)).body;
  t.like(
    view.scaling.find((s: any) => s.process === 'web'),
    { mode: 'autoscaled', auto: { metric: 'cpu', target: 50 }, value: 90 },
  );
  t.true(
    api.requests.some((r) => r.path === '/apis/metrics.k8s.io/v1beta1/namespaces/shop-ns/pods'),
    'the PodMetrics of the namespace were listed',
  );
});
