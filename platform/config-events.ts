/**
 * The settings of platform events: the signed sink, their labels and notification targets, part of {@link
 * VARIABLES} in config.ts.
 */
import { ConfigError } from '../domain/errors.js';
import { bool, httpUrl, optional, type VariableSpec } from './config-parsers.js';

/** Event settings of {@link SvcConfig}. */
export interface EventConfig {
  /** Signed event sink URL; unset: no sink. */
  readonly eventSinkUrl: string | undefined;
  /** Key id sent as X-Sink-Key-Id. */
  readonly eventSinkKeyId: string | undefined;
  /** HMAC-SHA-256 key of the sink signature; never logged. */
  readonly eventSinkSecret: string | undefined;
  /** Environment carried by events. @default SVC_ENVIRONMENT */
  readonly eventEnvironment: string | undefined;
  /** Source name of the platform's own events (X-Event-Source). @default svc-control-plane */
  readonly eventSource: string;
  /** Host id of capacity events; unset: the first short hostname, persisted. */
  readonly hostId: string | undefined;
  /** Allow notification targets on loopback, private and link-local addresses. @default false */
  readonly notifyAllowPrivate: boolean;
}

export const EVENT_VARIABLES = {
  eventSinkUrl: {
    name: 'SVC_EVENT_SINK_URL',
    description: 'Signed event sink URL (events are POSTed as JSON)',
    defaultText: '(none)',
    parse: httpUrl('SVC_EVENT_SINK_URL'),
  },
  eventSinkKeyId: {
    name: 'SVC_EVENT_SINK_KEY_ID',
    description: 'Key id sent as X-Sink-Key-Id',
    defaultText: '(none)',
    parse: optional,
  },
  eventSinkSecret: {
    name: 'SVC_EVENT_SINK_SECRET',
    description: 'HMAC-SHA-256 key of X-Sink-Signature',
    secret: true,
    defaultText: '(none)',
    parse: optional,
  },
  eventEnvironment: {
    name: 'SVC_EVENT_ENVIRONMENT',
    description: 'Environment carried by events (default SVC_ENVIRONMENT)',
    defaultText: '(SVC_ENVIRONMENT)',
    parse: optional,
  },
  eventSource: {
    name: 'SVC_EVENT_SOURCE',
    description: "Source name of the platform's own events (X-Event-Source)",
    defaultText: 'svc-control-plane',
    parse: (raw) => optional(raw) ?? 'svc-control-plane',
  },
  hostId: {
    name: 'SVC_HOST_ID',
    description: 'Host id of capacity events (default: first short hostname, persisted)',
    defaultText: '(hostname)',
    parse: (raw) => {
      const value = optional(raw);
      if (value !== undefined && !/^[A-Za-z0-9][A-Za-z0-9._-]{0,62}$/.test(value))
        throw new ConfigError(
          'SVC_HOST_ID',
          `"${value}" must be letters, digits, dots, hyphens and underscores (no colons)`,
        );
      return value;
    },
  },
  notifyAllowPrivate: {
    name: 'SVC_NOTIFY_ALLOW_PRIVATE',
    description: 'Allow notification targets on loopback, private and link-local addresses',
    defaultText: 'false',
    parse: bool('SVC_NOTIFY_ALLOW_PRIVATE', false),
  },
} satisfies { [K in keyof EventConfig]: VariableSpec<EventConfig[K]> };
