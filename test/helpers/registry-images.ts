/**
 * The images a test's managed registry left in podman's storage (the storage is the host's, shared
 * by every test and run), removed when the test ends.
 */
import { spawnSync } from 'node:child_process';
import fs from 'node:fs';
import path from 'node:path';

/** Removes every image of podman's storage tagged in the registry `registryHost` (the test's own). */
export function removeRegistryImages(registryHost: string): void {
  // Another test's removal can end a listing with an error (an image gone while it was read): again.
  let listed = '';
  for (let attempt = 0; attempt < 5; attempt += 1) {
    const result = spawnSync('podman', ['images', '--format', '{{.Repository}}:{{.Tag}} {{.ID}}'], {
      encoding: 'utf8',
    });
    if (result.status === 0) {
      listed = result.stdout;
      break;
    }
  }
  const ids = new Set<string>();
  for (const line of listed.split('\n')) {
    const [reference, id] = line.split(' ');
    if (reference?.startsWith(`${registryHost}/`) && id) ids.add(id);
  }
  if (ids.size > 0) spawnSync('podman', ['rmi', '--force', ...ids]);
}

/** Removes the images of the registry of data folder `dataDir`, when its platform ran one. */
export function removeDataDirRegistryImages(dataDir: string): void {
  try {
    const { port } = JSON.parse(fs.readFileSync(path.join(dataDir, 'registry', 'state.json'), 'utf8')) as {
      port: number;
    };
    removeRegistryImages(`127.0.0.1:${port}`);
  } catch {
    // No registry ran there.
  }
}
