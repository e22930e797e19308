// tier: full
import net from 'node:net';
import test from 'ava';
import { startControlPlane } from '../../wiring/control-plane.js';
import { silentLogger } from '../../platform/logger.js';
import { testConfig } from '../helpers/test-config.js';

function timersAndWatchers(): number {
  return process.getActiveResourcesInfo().filter((r) => r === 'Timeout' || r === 'FSEventWrap' || r === 'StatWatcher')
    .length;
}

test('a control plane that cannot listen stops everything it started and leaves no timer or watcher behind', async (t) => {
  const blocker = net.createServer();
  await new Promise<void>((resolve) => blocker.listen(0, '127.0.0.1', resolve));
  t.teardown(() => blocker.close());
  const port = (blocker.address() as net.AddressInfo).port;
  const before = timersAndWatchers();
  const error = await t.throwsAsync(
    startControlPlane(testConfig(t, { SVC_PORT: String(port), SVC_HOST: '127.0.0.1' }), silentLogger()),
  );
  t.regex(String((error as NodeJS.ErrnoException).code ?? error?.message), /EADDRINUSE/);
  // Closing is awaited before the start rejects; closed watcher handles are released on the next turn
  // of the loop. What is left after it would run against a closed database.
  await new Promise((resolve) => setImmediate(resolve));
  t.is(timersAndWatchers(), before);
});
