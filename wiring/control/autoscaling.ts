/**
 * Builds the autoscaler (controllers/scaling) from the configuration and records every scaling
 * decision (wake, idle scale-down, autoscaler) as an event.
 */
import { Autoscaler } from '../../controllers/scaling/autoscaler.js';
import { recordScaleEvents } from '../../controllers/scaling/scaling-events.js';
import { SignalSampler } from '../../controllers/scaling/signal-sampler.js';
import type { GatewayScale } from '../../controllers/routing/gateway-scale.js';
import type { Routing } from '../../controllers/routing/routing.js';
import type { EventEmitterPort } from '../../domain/events/event-port.js';
import type { SvcConfig } from '../../platform/config.js';
import type { Logger } from '../../platform/logger.js';
import type { Db } from '../../store/database.js';
import type { Reconcilers } from './reconcilers.js';

/** The running autoscaler and its event recorder. */
export interface Autoscaling {
  readonly autoscaler: Autoscaler;
  /** Samples of the tuning signals, on the autoscaler's period. */
  readonly signals: SignalSampler;
  close(): Promise<void>;
}

/** Starts the autoscaler (unless `SVC_AUTOSCALE_INTERVAL` is off) and the scale events. */
export function startAutoscaling(parts: {
  readonly config: Pick<SvcConfig, 'autoscaleIntervalMs' | 'autoscaleWindowMs' | 'kafkaExporterUrl'>;
  readonly db: Db;
  readonly reconcilers: Reconcilers;
  readonly routing: Routing;
  readonly scale: GatewayScale;
  readonly events: EventEmitterPort;
  readonly logger: Logger;
}): Autoscaling {
  const log = parts.logger.child({ controller: 'autoscaler' });
  const unrecord = recordScaleEvents(parts.scale, parts.events, log);
  const autoscaler = new Autoscaler({
    db: parts.db,
    targets: parts.reconcilers.targets,
    registry: parts.reconcilers.registry,
    gateway: parts.routing.gateway,
    scale: parts.scale,
    logger: log,
    intervalMs: parts.config.autoscaleIntervalMs,
    windowMs: parts.config.autoscaleWindowMs,
    kafkaExporterUrl: parts.config.kafkaExporterUrl,
  });
  autoscaler.start();
  const signals = new SignalSampler({
    db: parts.db,
    targets: parts.reconcilers.targets,
    registry: parts.reconcilers.registry,
    logger: parts.logger.child({ component: 'tuning-signals' }),
    intervalMs: parts.config.autoscaleIntervalMs,
  });
  signals.start();
  return {
    autoscaler,
    signals,
    async close() {
      await signals.stop();
      await autoscaler.stop();
      unrecord();
    },
  };
}
