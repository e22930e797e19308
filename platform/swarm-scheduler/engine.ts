/**
 * The Docker Engine API connection of the swarm driver, through dockerode. The manager's address is
 * `SVC_SWARM_HOST` when set, else Docker's own `DOCKER_HOST` (`unix:///path`, or `tcp://host:port`
 * with `DOCKER_TLS_VERIFY` and `DOCKER_CERT_PATH` for TLS), else `/var/run/docker.sock`.
 */
import fs from 'node:fs';
import path from 'node:path';
import Docker from 'dockerode';
import { ConflictError, DomainError, UnavailableError } from '../../domain/errors.js';

/** A client of the engine at `host` (a `unix://` or `tcp://` address); unset: Docker's own `DOCKER_HOST`. */
export function engineAt(host: string | undefined): Docker {
  if (host === undefined || host === '') return new Docker();
  if (host.startsWith('unix://')) return new Docker({ socketPath: host.slice('unix://'.length) });
  const url = new URL(host.replace(/^tcp:/, process.env.DOCKER_TLS_VERIFY ? 'https:' : 'http:'));
  const tls = url.protocol === 'https:';
  const certs = process.env.DOCKER_CERT_PATH ?? path.join(process.env.HOME ?? '/root', '.docker');
  return new Docker({
    protocol: tls ? 'https' : 'http',
    host: url.hostname,
    port: url.port === '' ? (tls ? 2376 : 2375) : Number(url.port),
    ...(tls
      ? {
          ca: fs.readFileSync(path.join(certs, 'ca.pem')),
          cert: fs.readFileSync(path.join(certs, 'cert.pem')),
          key: fs.readFileSync(path.join(certs, 'key.pem')),
        }
      : {}),
  });
}

/** Checks that the engine answers and is a swarm manager; refuses with what to do otherwise. */
export async function requireSwarmManager(engine: Docker, host: string): Promise<void> {
  let info: { Swarm?: { LocalNodeState?: string; ControlAvailable?: boolean } };
  try {
    info = (await engine.info()) as typeof info;
  } catch (error) {
    throw new ConflictError(
      `the Docker engine at ${host} did not answer (${error instanceof Error ? error.message : String(error)}): start dockerd, or set SVC_SWARM_HOST or DOCKER_HOST to the manager's address`,
      { code: 'swarm_unreachable', details: { host } },
    );
  }
  if (info.Swarm?.LocalNodeState !== 'active' || info.Swarm.ControlAvailable !== true)
    throw new ConflictError(
      `the Docker engine at ${host} is not a swarm manager (state ${info.Swarm?.LocalNodeState ?? 'unknown'}): run docker swarm init, or point SVC_SWARM_HOST at a manager`,
      { code: 'swarm_not_manager', details: { host, state: info.Swarm?.LocalNodeState ?? null } },
    );
}

/**
 * An engine's refusal as the platform reports it: the engine's HTTP status is not the caller's (a
 * request the engine refuses is a fault of the driver or the swarm, not of the platform's client).
 */
export function fromEngine(error: unknown): unknown {
  if (error instanceof DomainError) return error;
  const status = (error as { statusCode?: unknown }).statusCode;
  if (typeof status !== 'number') return error;
  const reason = (error as { json?: { message?: string } }).json?.message ?? (error as Error).message;
  return new UnavailableError(`the swarm engine answered ${status}: ${reason}`, {
    code: 'swarm_engine_failed',
    details: { status },
  });
}
