/**
 * A small in-memory Kubernetes API server for the kubernetes driver's tests: the few paths the
 * driver uses (apps/v1 deployments; v1 services, secrets, pods and pod logs; batch/v1 jobs and
 * cronjobs; metrics.k8s.io pods), label selectors, server-side apply and `?watch=true` streaming
 * of pods. It records every request and refuses what a real API server would refuse.
 */
import { EventEmitter, once } from 'node:events';
import fs from 'node:fs';
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import path from 'node:path';

/** One recorded request. */
export interface RecordedRequest {
  readonly method: string;
  readonly path: string;
  readonly query: Readonly<Record<string, string>>;
  readonly contentType: string | undefined;
  readonly body: any;
}

type KubeObject = {
  apiVersion?: string;
  kind?: string;
  metadata: {
    name: string;
    namespace?: string;
    labels?: Record<string, string>;
    annotations?: Record<string, string>;
    [key: string]: unknown;
  };
  [key: string]: unknown;
};

const RESOURCES: Record<string, { prefix: string; kind: string; apiVersion: string }> = {
  deployments: { prefix: '/apis/apps/v1', kind: 'Deployment', apiVersion: 'apps/v1' },
  services: { prefix: '/api/v1', kind: 'Service', apiVersion: 'v1' },
  secrets: { prefix: '/api/v1', kind: 'Secret', apiVersion: 'v1' },
  pods: { prefix: '/api/v1', kind: 'Pod', apiVersion: 'v1' },
  jobs: { prefix: '/apis/batch/v1', kind: 'Job', apiVersion: 'batch/v1' },
  cronjobs: { prefix: '/apis/batch/v1', kind: 'CronJob', apiVersion: 'batch/v1' },
};

const DNS_LABEL = /^[a-z0-9]([-a-z0-9]{0,61}[a-z0-9])?$/;
const LABEL_VALUE = /^(([A-Za-z0-9][-A-Za-z0-9_.]{0,61})?[A-Za-z0-9])?$/;

/** The fake API server. */
export class FakeKubeApi {
  readonly requests: RecordedRequest[] = [];
  readonly events = new EventEmitter();
  readonly store = new Map<string, Map<string, KubeObject>>(Object.keys(RESOURCES).map((r) => [r, new Map()]));
  readonly logs = new Map<string, string>();
  /** Working-set memory of a pod (its PodMetrics), by pod name: a pod without an entry has no metrics. */
  readonly metrics = new Map<string, string>();
  /** CPU use of a pod with metrics, by pod name. @default 1m */
  readonly cpu = new Map<string, string>();
  readonly #watchers = new Set<{ res: http.ServerResponse; selector: string }>();
  #server: http.Server | undefined;
  #version = 1;
  url = '';

  constructor(readonly namespace: string) {}

  /** Listens on `port` (0: a free one). */
  async start(port = 0): Promise<void> {
    this.#server = http.createServer((req, res) => void this.#handle(req, res));
    this.#server.listen(port, '127.0.0.1');
    await once(this.#server, 'listening');
    this.url = `http://127.0.0.1:${(this.#server.address() as AddressInfo).port}`;
  }

  async close(): Promise<void> {
    for (const w of this.#watchers) w.res.end();
    this.#watchers.clear();
    this.#server?.closeAllConnections();
    await new Promise((resolve) => this.#server?.close(resolve));
  }

  /** Writes a kubeconfig pointing at this server, with the given context names (first is current). */
  writeKubeconfig(dir: string, contexts: readonly string[] = ['fake']): string {
    const file = path.join(dir, 'kubeconfig.yaml');
    const text = [
      'apiVersion: v1',
      'kind: Config',
      `current-context: ${contexts[0]}`,
      'clusters:',
      `- name: fake\n  cluster:\n    server: ${this.url}\n    insecure-skip-tls-verify: true`,
      'users:',
      '- name: tester\n  user:\n    token: test-token',
      'contexts:',
      ...contexts.map(
        (c) => `- name: ${c}\n  context:\n    cluster: fake\n    user: tester\n    namespace: ${this.namespace}`,
      ),
      '',
    ].join('\n');
    fs.writeFileSync(file, text);
    return file;
  }

  /** Requests other than reads, as `VERB /path` lines. */
  writes(): string[] {
    return this.requests.filter((r) => r.method !== 'GET').map((r) => `${r.method} ${r.path}`);
  }

  get(resource: string, name: string): any {
    return this.store.get(resource)!.get(name);
  }

  /** Number of open pod watches. */
  get watchCount(): number {
    return this.#watchers.size;
  }

  /** Resolves once at least `n` pod watches are open. */
  async waitForWatch(n = 1): Promise<void> {
    while (this.#watchers.size < n) await once(this.events, 'watch');
  }

  /** Creates or replaces a pod (as the kubelet and controllers would), notifying watches. */
  putPod(pod: KubeObject): void {
    const existing = this.store.get('pods')!.get(pod.metadata.name);
    const stored = this.#stamp('pods', pod, existing);
    this.store.get('pods')!.set(pod.metadata.name, stored);
    this.#notify(existing ? 'MODIFIED' : 'ADDED', stored);
  }

  deletePod(name: string): void {
    const pod = this.store.get('pods')!.get(name);
    if (!pod) return;
    this.store.get('pods')!.delete(name);
    this.#notify('DELETED', pod);
  }

  /** Sets the status of a Job (as the Job controller would). */
  setJobStatus(name: string, status: unknown): void {
    const job = this.store.get('jobs')!.get(name)!;
    this.store.get('jobs')!.set(name, { ...job, status });
  }

  #stamp(resource: string, object: KubeObject, existing: KubeObject | undefined): KubeObject {
    const meta = RESOURCES[resource]!;
    return {
      ...object,
      apiVersion: meta.apiVersion,
      kind: meta.kind,
      metadata: {
        ...object.metadata,
        namespace: this.namespace,
        uid: existing?.metadata.uid ?? `uid-${resource}-${object.metadata.name}`,
        resourceVersion: String(++this.#version),
        creationTimestamp:
          existing?.metadata.creationTimestamp ?? object.metadata.creationTimestamp ?? new Date().toISOString(),
      },
    };
  }

  #notify(type: string, pod: KubeObject): void {
    for (const w of this.#watchers)
      if (matches(pod, w.selector)) w.res.write(`${JSON.stringify({ type, object: pod })}\n`);
  }

  async #handle(req: http.IncomingMessage, res: http.ServerResponse): Promise<void> {
    const url = new URL(req.url ?? '/', this.url);
    const chunks: Buffer[] = [];
    for await (const chunk of req) chunks.push(chunk as Buffer);
    const text = Buffer.concat(chunks).toString('utf8');
    let body: any;
    try {
      body = text === '' ? undefined : JSON.parse(text);
    } catch {
      body = text;
    }
    const query = Object.fromEntries(url.searchParams);
    this.requests.push({
      method: req.method ?? 'GET',
      path: url.pathname,
      query,
      contentType: req.headers['content-type'],
      body,
    });
    const send = (status: number, payload: unknown): void => {
      res.writeHead(status, { 'content-type': 'application/json' });
      res.end(JSON.stringify(payload));
    };
    const fail = (status: number, reason: string, message: string): void =>
      send(status, { apiVersion: 'v1', kind: 'Status', status: 'Failure', reason, message, code: status });
    if (req.headers.authorization !== 'Bearer test-token') return fail(401, 'Unauthorized', 'missing bearer token');

    const podMetrics = (name: string, memory: string) => ({
      kind: 'PodMetrics',
      apiVersion: 'metrics.k8s.io/v1beta1',
      metadata: { name, namespace: this.namespace, labels: this.store.get('pods')!.get(name)?.metadata.labels ?? {} },
      timestamp: '2030-01-01T00:00:00Z',
      window: '10s',
      containers: [{ name: 'main', usage: { cpu: this.cpu.get(name) ?? '1m', memory } }],
    });
    if (/^\/apis\/metrics\.k8s\.io\/v1beta1\/namespaces\/[^/]+\/pods$/.test(url.pathname)) {
      const selector = url.searchParams.get('labelSelector') ?? '';
      const items = [...this.metrics]
        .map(([name, memory]) => podMetrics(name, memory))
        .filter((item) => matches(item as KubeObject, selector));
      return send(200, { kind: 'PodMetricsList', apiVersion: 'metrics.k8s.io/v1beta1', metadata: {}, items });
    }
    const metrics = /^\/apis\/metrics\.k8s\.io\/v1beta1\/namespaces\/([^/]+)\/pods\/([^/]+)$/.exec(url.pathname);
    if (metrics) {
      const memory = this.metrics.get(metrics[2]!);
      if (memory === undefined) return fail(404, 'NotFound', 'the server could not find the requested resource');
      return send(200, podMetrics(metrics[2]!, memory));
    }
    const match =
      /^(\/api\/v1|\/apis\/apps\/v1|\/apis\/batch\/v1)\/namespaces\/([^/]+)\/([a-z]+)(?:\/([^/]+))?(?:\/(log))?$/.exec(
        url.pathname,
      );
    const resource = match?.[3];
    if (!match || !resource || RESOURCES[resource]?.prefix !== match[1])
      return fail(404, 'NotFound', `unexpected path ${url.pathname}`);
    if (match[2] !== this.namespace) return fail(403, 'Forbidden', `namespace ${match[2]} is not ${this.namespace}`);
    const items = this.store.get(resource)!;
    const name = match[4];
    if (match[5] === 'log') {
      const log = name !== undefined ? this.logs.get(name) : undefined;
      if (log === undefined) return fail(400, 'BadRequest', 'container not started');
      res.writeHead(200, { 'content-type': 'text/plain' });
      res.end(log);
      return;
    }
    const method = req.method ?? 'GET';
    if (method === 'GET' && name === undefined) {
      const selector = query.labelSelector ?? '';
      if (query.watch === 'true') {
        if (resource !== 'pods') return fail(405, 'MethodNotAllowed', 'watch only on pods');
        res.writeHead(200, { 'content-type': 'application/json', 'transfer-encoding': 'chunked' });
        res.flushHeaders();
        const watcher = { res, selector };
        this.#watchers.add(watcher);
        req.on('close', () => this.#watchers.delete(watcher));
        this.events.emit('watch');
        return;
      }
      return send(200, {
        apiVersion: RESOURCES[resource]!.apiVersion,
        kind: `${RESOURCES[resource]!.kind}List`,
        metadata: { resourceVersion: String(this.#version) },
        items: [...items.values()].filter((o) => matches(o, selector)),
      });
    }
    if (method === 'GET') {
      const object = items.get(name!);
      return object ? send(200, object) : fail(404, 'NotFound', `${resource} "${name}" not found`);
    }
    if (method === 'PATCH') {
      if (req.headers['content-type'] !== 'application/apply-patch+yaml')
        return fail(415, 'UnsupportedMediaType', `unexpected patch type ${req.headers['content-type']}`);
      if (query.fieldManager !== 'svc' || query.force !== 'true')
        return fail(422, 'Invalid', 'apply needs fieldManager=svc and force=true');
      const problem = invalid(body, resource, name!);
      if (problem) return fail(422, 'Invalid', problem);
      const existing = items.get(name!);
      const stored = this.#stamp(resource, body, existing);
      if (existing && existing.status !== undefined) stored.status = existing.status;
      items.set(name!, stored);
      return send(existing ? 200 : 201, stored);
    }
    if (method === 'POST' && name === undefined) {
      if (resource !== 'jobs') return fail(405, 'MethodNotAllowed', `the driver should apply ${resource}`);
      const problem = invalid(body, resource, body?.metadata?.name);
      if (problem) return fail(422, 'Invalid', problem);
      if (items.has(body.metadata.name))
        return fail(409, 'AlreadyExists', `jobs.batch "${body.metadata.name}" already exists`);
      const stored = this.#stamp(resource, body, undefined);
      stored.status = { startTime: new Date().toISOString(), active: 1 };
      items.set(body.metadata.name, stored);
      return send(201, stored);
    }
    if (method === 'DELETE' && name !== undefined) {
      if (query.propagationPolicy !== 'Background')
        return fail(422, 'Invalid', 'expected propagationPolicy=Background');
      const object = items.get(name);
      if (!object) return fail(404, 'NotFound', `${resource} "${name}" not found`);
      items.delete(name);
      if (resource === 'pods') this.#notify('DELETED', object);
      return send(200, { apiVersion: 'v1', kind: 'Status', status: 'Success', metadata: {} });
    }
    return fail(405, 'MethodNotAllowed', `${method} ${url.pathname}`);
  }
}

function matches(object: KubeObject, selector: string): boolean {
  if (selector === '') return true;
  return selector.split(',').every((term) => {
    const [key, value] = term.split('=');
    return object.metadata.labels?.[key!] === value;
  });
}

/** What a real API server would refuse in an applied or created object; undefined when valid. */
function invalid(body: any, resource: string, name: string): string | undefined {
  const meta = RESOURCES[resource]!;
  if (body?.apiVersion !== meta.apiVersion || body?.kind !== meta.kind)
    return `expected ${meta.apiVersion} ${meta.kind}, got ${body?.apiVersion} ${body?.kind}`;
  if (body.metadata?.name !== name) return `metadata.name ${body.metadata?.name} does not match the path (${name})`;
  if (!DNS_LABEL.test(name) || (resource === 'cronjobs' && name.length > 52))
    return `metadata.name "${name}" is not a valid name`;
  const labelSets = [
    body.metadata.labels,
    body.spec?.template?.metadata?.labels,
    body.spec?.jobTemplate?.metadata?.labels,
    body.spec?.jobTemplate?.spec?.template?.metadata?.labels,
  ];
  for (const labels of labelSets)
    for (const [k, v] of Object.entries(labels ?? {}))
      if (!LABEL_VALUE.test(String(v))) return `label ${k}: "${v}" is not a valid label value`;
  if (resource === 'deployments') {
    const selector = body.spec?.selector?.matchLabels ?? {};
    const labels = body.spec?.template?.metadata?.labels ?? {};
    if (Object.entries(selector).some(([k, v]) => labels[k] !== v))
      return 'spec.selector does not match the template labels';
  }
  return undefined;
}
