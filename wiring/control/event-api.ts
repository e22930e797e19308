/**
 * Wiring of the event services into the control plane: the services itself, its routers, the
 * metrics registry and the WebSocket stream, built from the configuration.
 */
import type { Principal } from '../../domain/auth/index.js';
import type Router from '@koa/router';
import type { SvcConfig } from '../../platform/config.js';
import type { Logger } from '../../platform/logger.js';
import type { Db } from '../../store/database.js';
import { ControlMetrics } from '../../platform/metrics/control-metrics.js';
import { diskUsage } from '../../platform/host/host-probes.js';
import type { Reconcilers } from './reconcilers.js';
import { startEventServices, type EventServices } from './event-services.js';
import type { Capability } from '../../api/control/server/meta-routes.js';
import type { RunningServer } from '../../api/http/listen.js';
import { eventsRoutes } from '../../api/control/events/events-routes.js';
import { incidentsRoutes } from '../../api/control/events/incidents-routes.js';
import { notificationsRoutes } from '../../api/control/events/notifications-routes.js';
import { metricsRoutes } from '../../api/control/observability/metrics-routes.js';
import { attachEventStream } from '../../api/control/events/event-stream.js';
import type { EdgeIdentityCheck } from '../../api/control/auth/auth.js';

/** Capabilities the event services adds to `GET /api/v1/capabilities`. */
export const EVENT_CAPABILITIES: readonly Capability[] = [
  {
    name: 'events',
    routes: [
      'GET /api/events',
      'POST /api/events',
      'GET /api/events/{id}',
      'GET /api/events/correlated',
      'GET /api/events/active',
      'POST /api/events/{id}/ack',
      'POST /api/events/{id}/snooze',
      'POST /api/events/{id}/open',
      'POST /api/events/reconcile',
      'POST /api/incidents/action',
      'GET /api/events/sinks',
      'POST /api/events/test',
      'GET /api/alerts/rules',
      'WS /api/v1/events',
      'WS /ws',
    ],
    description:
      'Operational events with deduplication, correlation into incidents, acknowledge/snooze/open/resolve, evidence-based reconcile, a signed sink and a live stream.',
  },
  {
    name: 'notifications',
    routes: [
      'GET /api/notifications/channels',
      'POST /api/notifications/channels',
      'DELETE /api/notifications/channels/{id}',
      'POST /api/notifications/channels/{id}/test',
    ],
    description:
      'Notification channels (embed_webhook, topic_push, mobile_push, webhook) with severity filters and SSRF-checked targets.',
  },
  {
    name: 'metrics',
    routes: ['GET /metrics', 'GET /api/metrics'],
    description: 'Control plane metrics in the text exposition format.',
  },
];

/** The event services as wired into the control plane. */
export interface EventApi {
  readonly services: EventServices;
  readonly metrics: ControlMetrics;
  readonly routers: readonly Router[];
  /**
   * Attaches the WebSocket stream to the listening server; `scopedToken` resolves issued tokens,
   * `edgeIdentity` validates an edge access identity.
   */
  attach(
    server: RunningServer,
    scopedToken?: (secret: string) => Principal | undefined,
    edgeIdentity?: EdgeIdentityCheck,
  ): void;
  /** Closes the stream and stops the watchers; resolves once none has work in flight. */
  close(): Promise<void>;
}

/** Builds the event services over control.db and the reconcilers' substrate. */
export async function startEventApi(
  config: SvcConfig,
  db: Db,
  reconcilers: Reconcilers | undefined,
  logger: Logger,
): Promise<EventApi> {
  const metrics = new ControlMetrics({ disk: () => diskUsage(config.dataDir) });
  const services = await startEventServices({
    db,
    logger,
    metrics,
    source: config.eventSource,
    environment: config.eventEnvironment ?? config.environment,
    sink:
      config.eventSinkUrl === undefined
        ? undefined
        : {
            url: config.eventSinkUrl,
            keyId: config.eventSinkKeyId,
            secret: config.eventSinkSecret,
            source: config.eventSource,
          },
    outbound: { allowPrivate: config.notifyAllowPrivate },
    substrate:
      reconcilers === undefined
        ? undefined
        : {
            registry: reconcilers.registry,
            schedulers: async () => (await reconcilers.targets.all()).map((t) => t.scheduler),
            watchSchedulers: (listener) => {
              const unsubscribes: (() => void)[] = [];
              let closed = false;
              void reconcilers.targets.all().then((targets) => {
                if (!closed) for (const t of targets) unsubscribes.push(t.scheduler.watch(listener));
              });
              return () => {
                closed = true;
                for (const unsubscribe of unsubscribes) unsubscribe();
              };
            },
          },
    allocationWatchIntervalMs: config.allocationWatchIntervalMs,
    capacity: {
      intervalMs: config.capacityCheckIntervalMs,
      minimums: { memoryBytes: config.capacityMinMemoryBytes, diskBytes: config.capacityMinDiskBytes },
      hostId: config.hostId,
      dataDir: config.dataDir,
      eventEnvironment: config.eventEnvironment,
    },
  });
  let stream: { close(): void } | undefined;
  return {
    services,
    metrics,
    routers: [eventsRoutes(services), incidentsRoutes(services), notificationsRoutes(services), metricsRoutes(metrics)],
    attach(server, scopedToken, edgeIdentity) {
      stream = attachEventStream(server, services.events, {
        apiToken: config.apiToken,
        requireExplicitAuth: config.requireExplicitAuth,
        logger,
        ...(scopedToken ? { scopedToken } : {}),
        ...(edgeIdentity ? { edgeIdentity } : {}),
      });
    },
    async close() {
      stream?.close();
      await services.close();
    },
  };
}
