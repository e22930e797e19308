/**
 * Desired ingress: which public hostnames the edge should route, and to which service address.
 */
import type { CanonicalAppSpec } from '../spec/index.js';
import { normalizeHostname } from './hostnames.js';
import type { IngressRule } from './tunnel-config.js';

/** How the edge reaches app processes: host networking (loopback) or bridge networking (node IP). */
export const Networking = { host: 'host', bridge: 'bridge' } as const;
export type Networking = (typeof Networking)[keyof typeof Networking];

/** An app as the routing plan sees it. */
export interface RoutableApp {
  readonly spec: CanonicalAppSpec;
  /** True when the app has a release and its deployment is healthy (or, for gateway-managed processes, deployed). */
  readonly routable: boolean;
}

/** Where traffic to a process goes. */
export interface AddressOptions {
  /** @default host */
  readonly networking?: Networking;
  /** Node IP for bridge networking. @default 127.0.0.1 */
  readonly nodeIp?: string;
  /**
   * Address of the wake gateway (the control plane, e.g. `http://127.0.0.1:8800`). Endpoints of
   * gateway-managed processes (`scaling.min: 0`) route to it, so a request can wake them.
   */
  readonly gatewayUrl?: string;
}

/** One desired rule with its owner. */
export interface DesiredRule extends IngressRule {
  readonly hostname: string;
  readonly app: string;
  readonly process: string;
  /** True when the rule goes through the wake gateway (every process without a `hostPort`, when a gateway is known). */
  readonly viaGateway: boolean;
}

/** The process that receives an app's public endpoints: `web` if present, else the first (by name) with a port. */
export function publicProcess(spec: CanonicalAppSpec): string | undefined {
  const withPort = Object.entries(spec.processes)
    .filter(([, p]) => p.port !== undefined)
    .map(([name]) => name)
    .sort();
  return withPort.includes('web') ? 'web' : withPort[0];
}

/** True when the process is scaled to and from zero by the wake gateway (its `scaling.min` is 0). */
export function isGatewayManaged(spec: CanonicalAppSpec, process: string): boolean {
  return spec.processes[process]?.scaling.min === 0;
}

/** The service address of a process: `http://127.0.0.1:<port>` on host networking, `http://<node-ip>:<static-port>` on bridge. */
export function serviceAddress(
  spec: CanonicalAppSpec,
  process: string,
  options: AddressOptions = {},
): string | undefined {
  const definition = spec.processes[process];
  if (definition?.port === undefined) return undefined;
  const port = definition.hostPort ?? definition.port;
  const host = (options.networking ?? 'host') === 'bridge' ? (options.nodeIp ?? '127.0.0.1') : '127.0.0.1';
  return `http://${host}:${port}`;
}

/**
 * Desired rules: the endpoints of routable apps with `deploy: true`, minus hostnames toggled off,
 * sorted by hostname. A hostname declared by two apps goes to the first app by name.
 */
export function desiredIngress(
  apps: readonly RoutableApp[],
  disabled: ReadonlySet<string>,
  options: AddressOptions = {},
): DesiredRule[] {
  const rules = new Map<string, DesiredRule>();
  for (const app of [...apps].sort((a, b) => a.spec.name.localeCompare(b.spec.name))) {
    if (!app.spec.deploy || !app.routable) continue;
    const process = publicProcess(app.spec);
    if (process === undefined) continue;
    // A process's own port changes with each allocation (start before stop), so the edge reaches it
    // through the gateway, which follows the registry; only a fixed hostPort is addressed directly.
    const viaGateway =
      (isGatewayManaged(app.spec, process) || app.spec.processes[process]?.hostPort === undefined) &&
      options.gatewayUrl !== undefined;
    const service = viaGateway ? options.gatewayUrl : serviceAddress(app.spec, process, options);
    if (service === undefined) continue;
    for (const endpoint of app.spec.endpoints ?? []) {
      const hostname = normalizeHostname(endpoint.url);
      if (hostname === undefined || disabled.has(hostname) || rules.has(hostname)) continue;
      rules.set(hostname, { hostname, service, app: app.spec.name, process, viaGateway });
    }
  }
  return [...rules.values()].sort((a, b) => a.hostname.localeCompare(b.hostname));
}
