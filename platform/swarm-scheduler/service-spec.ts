/**
 * Reading the engine's service specs: the container of a spec, and whether a stored service drifted
 * from what the swarm driver would write.
 */
import type Docker from 'dockerode';
import { canonicalJson } from '../../domain/canonical-json.js';
import { SwarmLabel } from '../../domain/scheduler/swarm/index.js';

/** The container a service spec runs (absent for plugin and attachment tasks). */
export function containerOf(spec: Docker.ServiceSpec | undefined): Docker.ContainerSpec | undefined {
  const template = spec?.TaskTemplate;
  return template !== undefined && 'ContainerSpec' in template ? template.ContainerSpec : undefined;
}

/**
 * True when the engine's service differs from what the driver would write in what the driver owns:
 * its fingerprint, image, command, environment, user, replicas, ports or secrets. The engine adds
 * defaults to a stored spec, so the fields are compared, not the whole spec; a field changed by hand
 * (`docker service update --env-add`, `--replicas`) is put back.
 */
export function drifted(actual: Docker.ServiceSpec, desired: Docker.ServiceSpec): boolean {
  const pick = (spec: Docker.ServiceSpec) => {
    const container = containerOf(spec);
    return canonicalJson({
      fingerprint: spec.Labels?.[SwarmLabel.fingerprint] ?? null,
      image: container?.Image ?? null,
      command: container?.Command ?? null,
      env: container?.Env ?? [],
      user: container?.User ?? null,
      replicas: spec.Mode?.Replicated?.Replicas ?? null,
      ports: (spec.EndpointSpec?.Ports ?? []).map((p) => [p.TargetPort, p.PublishedPort ?? 0, p.PublishMode]),
      secrets: (container?.Secrets ?? []).map((s) => s.SecretName),
      memory: spec.TaskTemplate?.Resources?.Limits?.MemoryBytes ?? null,
    });
  };
  return pick(actual) !== pick(desired);
}
