// tier: full
/**
 * Kubernetes runs the same image the deploy pipeline built (ADR 0219): a control plane with the
 * kubernetes driver (pointed at the stand-in API server) and podman builds an app's Dockerfile
 * through the real deploy pipeline, pushes it to the managed registry, and the Deployment the
 * stand-in receives names exactly the release manifest's image by digest, which the registry serves.
 */
import { execFileSync } from 'node:child_process';
import fs from 'node:fs';
import path from 'node:path';
import test from 'ava';
import { managedRegistryLayout } from '../../../platform/containers/managed-registry.js';
import { readReleaseManifest } from '../../../platform/release-builder/index.js';
import { getApp } from '../../../store/control/apps.js';
import { containerConfig, removeRegistryImages } from '../../helpers/containers.js';
import { tempDir } from '../../helpers/temp-dir.js';
import { waitForReconciled } from '../../helpers/wait-for.js';
import { git, initAppsRepo, startPlane, stepSummary, waitForApp } from '../../pipeline/pipeline-fixture.js';
import { FakeKubeApi } from './fake-kube-api.js';

const NS = 'shop-ns';

const SPEC = `name: shop
deploy: true
processes:
  web:
    port: 8080
    health:
      path: /healthz
      interval: 1s
      timeout: 1s
    resources:
      cpu: 250
      memory: 128
`;

const DOCKERFILE = `FROM node:20-bookworm-slim
WORKDIR /app
COPY server.mjs ./
CMD ["node", "server.mjs"]
`;

const SERVER = `import http from 'node:http';
http.createServer((req, res) => { res.writeHead(200); res.end('ok'); }).listen(Number(process.env.PORT));
`;

/** The image's own run configuration, as podman recorded it at the build. */
function imageConfig(image: string): { Entrypoint?: string[] | null; Cmd?: string[] | null } {
  return JSON.parse(
    execFileSync('podman', ['image', 'inspect', '--format', '{{json .Config}}', image], { encoding: 'utf8' }),
  );
}

test('a Dockerfile deploy on the kubernetes driver: the Deployment runs the release manifest’s image by digest, which the managed registry serves', async (t) => {
  const api = new FakeKubeApi(NS);
  await api.start();
  t.teardown(() => api.close());
  const config = containerConfig(t, {
    SVC_SCHEDULER_DRIVER: 'kubernetes',
    SVC_KUBECONFIG: api.writeKubeconfig(tempDir(t)),
    SVC_KUBERNETES_NAMESPACE: NS,
  });
  initAppsRepo(config);
  const dir = path.join(config.appsDir, 'shop');
  fs.mkdirSync(dir, { recursive: true });
  fs.writeFileSync(path.join(dir, 'infraspec.yaml'), SPEC);
  fs.writeFileSync(path.join(dir, 'Dockerfile'), DOCKERFILE);
  fs.writeFileSync(path.join(dir, 'server.mjs'), SERVER);
  git(config.appsDir, 'add', '-A');
  git(config.appsDir, 'commit', '-q', '-m', 'shop');

  const plane = await startPlane(t, config);
  // The registry chose its port at start; the images its builds leave in podman's storage go at the end.
  const { port } = JSON.parse(fs.readFileSync(managedRegistryLayout(config.dataDir).state, 'utf8')) as {
    port: number;
  };
  const registry = `127.0.0.1:${port}`;
  t.teardown(() => removeRegistryImages(registry));
  await waitForApp(plane, 'shop');

  // The stand-in has no kubelet: once the Deployment is applied, a pod of its template runs and is
  // Ready (as in kubernetes-scheduler.test.ts), so the pod watch registers it passing for the gate.
  const podStarted = waitForReconciled(
    [plane.reconcilers.appController],
    () => [...api.store.get('deployments')!.values()][0],
    { timeoutMs: 100_000, what: 'a Deployment applied' },
  ).then((deployment) => {
    const template = (deployment.spec as { template: { metadata: object; spec: unknown } }).template;
    api.putPod({
      metadata: { ...template.metadata, name: `${deployment.metadata.name}-pod-1` },
      spec: template.spec,
      status: {
        phase: 'Running',
        podIP: '10.1.0.7',
        conditions: [{ type: 'Ready', status: 'True' }],
        containerStatuses: [
          { name: 'web', restartCount: 0, state: { running: { startedAt: new Date().toISOString() } } },
        ],
      },
    });
    return deployment;
  });
  podStarted.catch(() => undefined);

  const started = Date.now();
  const queued = plane.deploys.deploys.deploy('shop');
  const operation = await plane.deploys.worker.waitFor(queued.operation.id, 100_000);
  const steps = plane.deploys.deploys.steps(queued.deploymentId);
  t.log(`deploy ${operation.status} in ${Date.now() - started} ms: ${stepSummary(steps).join(', ')}`);
  if (operation.status !== 'succeeded') {
    t.log(JSON.stringify(steps.steps, null, 1));
    t.log(api.requests.map((r) => `${r.method} ${r.path}`).join('\n'));
  }
  t.is(operation.status, 'succeeded');
  await podStarted;

  // The release manifest records the pushed image by digest.
  const release = getApp(plane.db, 'shop')!.release!;
  const manifest = readReleaseManifest(release.dir)!;
  t.is(manifest.builder, 'podman');
  t.is(manifest.revision, release.commit);
  const match = /^(127\.0\.0\.1:\d+)\/shop@(sha256:[0-9a-f]{64})$/.exec(manifest.image ?? '');
  t.truthy(match, `manifest image ${manifest.image}`);
  const [image, host, digest] = [manifest.image!, match![1]!, match![2]!];
  t.is(host, registry);

  // The stand-in received exactly that image, applied by the driver.
  const applies = api.requests.filter((r) => r.method === 'PATCH' && r.path.includes('/deployments/'));
  t.true(applies.length > 0, 'the Deployment was applied');
  for (const applied of applies) {
    const [container, ...others] = applied.body.spec.template.spec.containers as {
      image: string;
      command?: string[];
      args?: string[];
    }[];
    t.deepEqual(others, [], 'one container');
    t.is(container!.image, image);
    // Kubernetes `command` replaces the image's ENTRYPOINT and drops its CMD (no `args` is sent):
    // what runs is the manifest's command, which is the image's own ENTRYPOINT + CMD.
    t.deepEqual(container!.command, manifest.command);
    t.is(container!.args, undefined);
  }
  const own = imageConfig(image);
  t.deepEqual(manifest.command, [...(own.Entrypoint ?? []), ...(own.Cmd ?? [])]);
  t.deepEqual(own.Cmd, ['node', 'server.mjs']);
  t.is(api.get('deployments', (await podStarted).metadata.name).spec.template.spec.containers[0].image, image);

  // The digest resolves in the managed registry, as a cluster's image pull would ask for it.
  const response = await fetch(`http://${registry}/v2/shop/manifests/${digest}`, {
    headers: {
      accept: 'application/vnd.oci.image.manifest.v1+json, application/vnd.docker.distribution.manifest.v2+json',
    },
  });
  await response.arrayBuffer();
  t.is(response.status, 200);
  t.is(response.headers.get('docker-content-digest'), digest);
});
