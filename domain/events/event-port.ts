/**
 * Event port: how any part of the control plane reports an operational event to the event surface.
 * The event surface implements it; code that emits depends only on this interface.
 */

/** Severity of an event. */
export const Severity = { info: 'info', warning: 'warning', critical: 'critical' } as const;
export type Severity = (typeof Severity)[keyof typeof Severity];

/** What an emitter provides; the surface fills id, source, environment, state and occurredAt. */
export interface EventInput {
  readonly type: string;
  readonly severity: Severity;
  readonly app?: string;
  readonly title: string;
  readonly body?: string;
  /** Events with a dedupe key seen in the last hour are dropped silently. */
  readonly dedupeKey?: string;
  /** ISO 8601; @default now */
  readonly occurredAt?: string;
  /** May hold deploymentId, sagaId, step, correlationKey, previousState, previousEventType. Never secrets. */
  readonly metadata?: Readonly<Record<string, unknown>>;
  /** @default the platform's own source name */
  readonly source?: string;
  /** @default SVC_EVENT_ENVIRONMENT or SVC_ENVIRONMENT */
  readonly environment?: string;
}

/** Outcome of an emit: recorded with an id, or dropped as a duplicate. */
export type EmitResult =
  { readonly recorded: true; readonly id: string } | { readonly recorded: false; readonly reason: 'duplicate' };

/** The port: durable once the promise resolves. */
export interface EventEmitterPort {
  emit(input: EventInput): Promise<EmitResult>;
}

/** An emitter that records nothing, for processes or tests that run without the event surface. */
export const discardEvents: EventEmitterPort = {
  emit: async () => ({ recorded: false, reason: 'duplicate' }),
};
