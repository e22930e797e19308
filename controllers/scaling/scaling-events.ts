/**
 * Scaling decisions as events: every change of a process's count decided at run time (a wake from
 * zero, an idle scale-down, an autoscaler decision) is recorded with its reason.
 */
import type { EventEmitterPort } from '../../domain/events/event-port.js';
import type { Logger } from '../../platform/logger.js';
import type { GatewayScale, ScaleChange } from '../routing/gateway-scale.js';

/** The event type of a change: `service.scaled_out` or `service.scaled_in`. */
export function scaleEventType(change: ScaleChange): string {
  return change.to > change.from ? 'service.scaled_out' : 'service.scaled_in';
}

/** Records each scale change as an event; returns an unsubscribe. */
export function recordScaleEvents(scale: GatewayScale, events: EventEmitterPort, logger: Logger): () => void {
  return scale.onScaleChange((change) => {
    void events
      .emit({
        type: scaleEventType(change),
        severity: 'info',
        app: change.app,
        title: `${change.app}/${change.process} scaled ${change.to > change.from ? 'out' : 'in'} from ${change.from} to ${change.to}`,
        body: change.reason,
        occurredAt: change.at,
        metadata: {
          process: change.process,
          from: change.from,
          to: change.to,
          source: change.source,
          reason: change.reason,
          ...(change.metric === undefined ? {} : { metric: change.metric }),
          ...(change.value === undefined ? {} : { value: change.value }),
          ...(change.target === undefined ? {} : { target: change.target }),
        },
      })
      .catch((err: unknown) => logger.warn({ err, app: change.app }, 'scale event not recorded'));
  });
}
