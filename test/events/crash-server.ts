/**
 * Child process for the event crash test: runs the real control plane on the data folder given in
 * the environment and prints its URL as one JSON line on stdout.
 */
import { startControlPlane } from '../../wiring/control-plane.js';
import { loadConfig } from '../../platform/config.js';
import { silentLogger } from '../../platform/logger.js';

const plane = await startControlPlane(
  loadConfig({
    ...process.env,
    SVC_PORT: '0',
    SVC_POSTGRES_MANAGED: 'false',
    SVC_LOG_LEVEL: 'silent',
    SVC_CAPACITY_CHECK_INTERVAL: 'off',
  }),
  silentLogger(),
);
process.stdout.write(`${JSON.stringify({ url: plane.url })}\n`);
