// tier: full
import test from 'ava';
import { startPlaneWithApps } from '../helpers/plane-with-apps.js';
import { ReleaseBuilder } from '../../platform/release-builder/index.js';
import { silentLogger } from '../../platform/logger.js';
import { setAppRelease } from '../../store/control/apps.js';
import { APP_SERVER, freePort, hostRequest, wakeSpec } from './wake-harness.js';

test('an app refused as not deployed is woken once a release is recorded, without waiting for a spec reconcile', async (t) => {
  const port = await freePort();
  const app = { name: 'late', hostname: 'late.example.test', port, min: 0 };
  const { plane, config, code } = await startPlaneWithApps(t, {
    server: APP_SERVER,
    apps: [{ name: app.name, spec: wakeSpec(app), release: false }],
  });

  const refused = await hostRequest(`${plane.url}/`, { host: app.hostname });
  t.is(refused.status, 503, refused.text);
  t.like(refused.json().error, { code: 'app_not_deployed', details: { app: 'late', hostname: 'late.example.test' } });

  // A first deploy records the release without changing the spec: the gateway's map must not keep the refusal.
  const release = await new ReleaseBuilder({ dataDir: config.dataDir, logger: silentLogger() }).build({
    app: app.name,
    repoUrl: code,
    ref: 'main',
  });
  setAppRelease(plane.db, app.name, { commit: release.manifest.commit, dir: release.dir });

  const woken = await hostRequest(`${plane.url}/after?wakeTimeout=20s`, { host: app.hostname });
  t.is(woken.status, 200, woken.text);
  t.is(woken.json().url, '/after', 'the gateway keeps its own wakeTimeout parameter from the app');
  t.is(woken.headers['x-svc-wake-action'], 'scaled', 'the gateway started the process');
});
