/**
 * The platform's own containers configuration (ADR 0221), written under `<dataDir>/containers` and
 * handed to podman through `CONTAINERS_REGISTRIES_CONF`: the managed registry is a plain-HTTP
 * loopback registry, and its `mirror/` namespace is tried first for docker.io, so an unmodified
 * `FROM node:…` resolves offline to the base images the platform serves, and on a connected host
 * falls through to Docker Hub as usual.
 */
import fs from 'node:fs';
import path from 'node:path';
import { writeFileAtomic } from '../files/write-file-atomic.js';

/** Namespace of the managed registry that mirrors docker.io. */
export const MIRROR_NAMESPACE = 'mirror';

/** The registries.conf text for a managed registry at `registryHost` (`127.0.0.1:<port>`). */
export function registriesConf(registryHost: string): string {
  return [
    '# Written by svc at each start (ADR 0221); edits are replaced.',
    'unqualified-search-registries = ["docker.io"]',
    'short-name-mode = "permissive"',
    '',
    '[[registry]]',
    'prefix = "docker.io"',
    'location = "docker.io"',
    '[[registry.mirror]]',
    `location = "${registryHost}/${MIRROR_NAMESPACE}"`,
    'insecure = true',
    '',
    '[[registry]]',
    `location = "${registryHost}"`,
    'insecure = true',
    '',
  ].join('\n');
}

/** Writes `<dataDir>/containers/registries.conf` and returns its path. */
export function writeRegistriesConf(dataDir: string, registryHost: string): string {
  const dir = path.join(dataDir, 'containers');
  fs.mkdirSync(dir, { recursive: true, mode: 0o700 });
  const file = path.join(dir, 'registries.conf');
  writeFileAtomic(file, registriesConf(registryHost), 0o600);
  return file;
}
