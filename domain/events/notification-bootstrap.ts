/**
 * Notification bootstrap: finds the registry service of the event sink gateway and plans the
 * webhook channel that forwards warnings and criticals to its `/api/events` path, skipping it when
 * such a channel already exists.
 */

/** A service as the service manifest lists it. */
export interface ManifestServiceLike {
  readonly service: string;
  readonly instances: readonly { readonly address: string; readonly port: number; readonly status: string }[];
}

/** Names that look like the sink gateway's registry service. @default /(event-?sink|sink-?gateway)/i */
export const SINK_GATEWAY_PATTERN = /(event-?sink|sink-?gateway)/i;

/** What bootstrap does. */
export type BootstrapPlan =
  | {
      readonly action: 'create';
      readonly service: string;
      readonly channel: { provider: 'webhook'; name: string; url: string; severities: ['warning', 'critical'] };
    }
  | { readonly action: 'skip'; readonly service: string; readonly url: string; readonly reason: string }
  | { readonly action: 'none'; readonly reason: string };

/** Plans the bootstrap from the manifest's services and the existing channels. */
export function planNotificationBootstrap(
  services: readonly ManifestServiceLike[],
  channels: readonly { provider: string; url: string }[],
  pattern: RegExp = SINK_GATEWAY_PATTERN,
): BootstrapPlan {
  const candidates = services.filter((s) => pattern.test(s.service)).sort((a, b) => a.service.localeCompare(b.service));
  const service =
    candidates.find((s) => s.instances.some((i) => i.status === 'passing')) ??
    candidates.find((s) => s.instances.length > 0);
  if (!service)
    return {
      action: 'none',
      reason:
        candidates.length === 0
          ? `no registry service matches ${pattern}`
          : `no instance of ${candidates.map((c) => c.service).join(', ')} is registered`,
    };
  const instance = service.instances.find((i) => i.status === 'passing') ?? service.instances[0]!;
  const host = instance.address.includes(':') ? `[${instance.address}]` : instance.address;
  const url = `http://${host}:${instance.port}/api/events`;
  if (channels.some((c) => c.provider === 'webhook' && c.url === url))
    return {
      action: 'skip',
      service: service.service,
      url,
      reason: 'a webhook channel for this gateway already exists',
    };
  return {
    action: 'create',
    service: service.service,
    channel: {
      provider: 'webhook',
      name: `sink gateway (${service.service})`,
      url,
      severities: ['warning', 'critical'],
    },
  };
}
