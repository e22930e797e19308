/**
 * The running routing services as the API and the deploy pipeline see them, and what the routing
 * controller reads of an app. `routing-service.ts` implements them; `wiring/control/routing.ts` builds it.
 */
import type { DesiredRule, EndpointToggle } from '../../domain/routing/index.js';
import type { AppRow } from '../../store/control/apps.js';
import type { Controller } from '../runtime/controller.js';
import type { AccessObservations } from './access-observations.js';
import type { EdgeSync } from './edge-sync.js';
import type { IdleScaler } from './idle-scaler.js';
import type { RoutingState } from './routing-reconciler.js';
import type { WakeGateway } from './wake-gateway.js';
import type { WakeTargetView } from './wake-targets.js';

/** What routing an app returns (the deploy pipeline's routing step, `forge` in the spec). */
export interface RouteAppResult {
  readonly app: string;
  /** The app's rules now in the tunnel config. */
  readonly rules: readonly DesiredRule[];
  readonly changedAt: string | undefined;
  readonly file: string;
}

/** What switching one hostname of an app on or off answers. */
export interface EndpointToggleResult {
  readonly app: string;
  readonly hostname: string;
  readonly enabled: boolean;
  /** What the switch wrote: `unchanged`, `created`, `updated` or `deleted`. */
  readonly outcome: string;
  /** True when the hostname is in the tunnel config after the reconcile. */
  readonly routed: boolean;
}

/** The running routing services. */
export interface Routing {
  readonly controller: Controller;
  readonly gateway: WakeGateway;
  readonly idle: IdleScaler;
  readonly access: AccessObservations;
  readonly edgeSync: EdgeSync;
  /** Sets the gateway address written for gateway-managed endpoints, once the control plane listens. */
  setGatewayUrl(url: string): void;
  /** Reconciles the tunnel config now and resolves with the app's rules (the deploy pipeline's routing step, `forge` in the spec). */
  routeApp(app: string): Promise<RouteAppResult>;
  /** Switches one hostname of an app on or off, then reconciles. */
  toggle(app: string, hostname: string, enabled: boolean): Promise<EndpointToggleResult>;
  /** The last reconciled state. */
  state(): RoutingState;
  toggles(): EndpointToggle[];
  wakeTargets(controlUrl: string): Promise<{ targets: WakeTargetView[] }>;
  close(): Promise<void>;
}

/** What the routing controller reads of one app: a change of it is a reason to reconcile. */
export function routingSignature(app: AppRow | undefined): string {
  if (!app) return 'absent';
  const spec = app.spec;
  const conditions = app.conditions;
  const status = (type: string) => conditions.find((c) => c.type === type)?.status ?? '';
  // Without endpoints an app never reaches the tunnel: only its Routed condition (NoEndpoints) matters.
  if (!spec || (spec.endpoints ?? []).length === 0)
    return JSON.stringify([app.deletedAt !== null, spec !== null, spec?.deploy, status('Routed')]);
  const ports = Object.entries(spec.processes).map(([name, p]) => [name, p.port, p.hostPort, p.scaling.min]);
  return JSON.stringify([
    app.deletedAt !== null,
    app.release !== null,
    spec.deploy,
    spec.endpoints,
    ports,
    status('Deployed'),
    status('Healthy'),
    status('Routed'),
  ]);
}
