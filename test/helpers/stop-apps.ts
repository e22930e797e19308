/**
 * App processes outlive the control plane by design. Tests that run apps stop them after the plane
 * closes (so no controller re-submits a job meanwhile) by reopening each region's local driver.
 */
import fs from 'node:fs';
import path from 'node:path';
import type { ControlPlane } from '../../wiring/control-plane.js';
import { LocalRegistry } from '../../platform/local-registry/index.js';
import { LocalScheduler } from '../../platform/local-scheduler/index.js';
import { silentLogger } from '../../platform/logger.js';
import type { SvcConfig } from '../../platform/config.js';
import { Podman } from '../../platform/containers/podman.js';
import { removeDataDirRegistryImages } from './registry-images.js';

/** Closes `plane`, then stops and forgets every job its local drivers still run. */
export async function closePlaneAndStopApps(plane: ControlPlane, config: SvcConfig): Promise<void> {
  await plane.close();
  await stopAppsIn(config.dataDir);
}

/** Stops and forgets every job the local drivers of data folder `dataDir` still run (no control plane may be running on it). */
export async function stopAppsIn(dataDir: string): Promise<void> {
  const config = { dataDir };
  const dirs = [config.dataDir];
  const regions = path.join(config.dataDir, 'regions');
  if (fs.existsSync(regions)) for (const region of fs.readdirSync(regions)) dirs.push(path.join(regions, region));
  for (const dataDir of dirs) {
    if (!fs.existsSync(path.join(dataDir, 'scheduler'))) continue;
    const scheduler = await LocalScheduler.open({
      dataDir,
      registry: new LocalRegistry(),
      logger: silentLogger(),
      region: dataDir === config.dataDir ? 'local' : path.basename(dataDir),
      // Containers ran where the plane had a registry: their drains also remove them (ADR 0219).
      ...(fs.existsSync(path.join(config.dataDir, 'registry'))
        ? {
            containers: {
              podman: new Podman(),
              network: 'host' as const,
              limits: { nofile: 1024, nproc: 1024 },
              cgroupParentRoot: '/svc-allocs',
            },
          }
        : {}),
    });
    for (const job of await scheduler.listJobs())
      await scheduler.stopJob(job.spec.id, { purge: true }).catch(() => undefined);
    await scheduler.close();
  }
  // The images its builds left in the host's podman storage go with it.
  removeDataDirRegistryImages(config.dataDir);
}
