// tier: quick
import path from 'node:path';
import test from 'ava';
import { ConfigError } from '../../domain/errors.js';
import { loadConfig, redactConfig } from '../../platform/config.js';

test('routing configuration defaults: tunnel file under the data dir, idle scale-down after 15 minutes, hourly edge sync over 24h capped at 7d', (t) => {
  const config = loadConfig({ SVC_DATA_DIR: '/srv/svc' });
  t.is(config.tunnelConfigFile, '/srv/svc/edge/tunnel.yml');
  t.is(config.tunnelName, 'svc');
  t.is(config.tunnelCredentialsFile, '/srv/svc/edge/svc.json');
  t.is(config.tunnelNetworking, 'host');
  t.is(config.wakeIdleTimeoutMs, 15 * 60_000);
  t.is(config.edgeLookbackMs, 24 * 3_600_000);
  t.is(config.edgeLookbackMaxMs, 7 * 86_400_000);
  t.is(config.edgeSyncIntervalMs, 3_600_000);
  t.is(config.edgeApiToken, undefined);
});

test('routing configuration parses durations, off, paths and refuses malformed values naming the variable', (t) => {
  const config = loadConfig({
    SVC_WAKE_IDLE_TIMEOUT: 'off',
    SVC_TUNNEL_CONFIG: 'edge.yml',
    SVC_TUNNEL_NAME: 'prod',
    SVC_EDGE_LOOKBACK: '3d',
    SVC_TUNNEL_NETWORKING: 'bridge',
    SVC_TUNNEL_NODE_IP: '10.0.0.4',
  });
  t.is(config.wakeIdleTimeoutMs, 0);
  t.is(config.tunnelConfigFile, path.resolve('edge.yml'));
  t.true(config.tunnelCredentialsFile.endsWith('/edge/prod.json'));
  t.is(config.edgeLookbackMs, 3 * 86_400_000);
  t.throws(() => loadConfig({ SVC_WAKE_IDLE_TIMEOUT: 'soon' }), {
    instanceOf: ConfigError,
    message: /^SVC_WAKE_IDLE_TIMEOUT: "soon" is not a duration/,
  });
  t.throws(() => loadConfig({ SVC_TUNNEL_NETWORKING: 'overlay' }), {
    instanceOf: ConfigError,
    message: /^SVC_TUNNEL_NETWORKING/,
  });
  t.throws(() => loadConfig({ SVC_EDGE_API_URL: 'ftp://x' }), {
    instanceOf: ConfigError,
    message: /^SVC_EDGE_API_URL/,
  });
  t.throws(() => loadConfig({ SVC_TUNNEL_NAME: '../x' }), { instanceOf: ConfigError, message: /^SVC_TUNNEL_NAME/ });
});

test('edge secrets are redacted', (t) => {
  const shown = redactConfig(loadConfig({ SVC_EDGE_API_TOKEN: 'tok', SVC_EDGE_LOGPUSH_TOKEN: 'push' }));
  t.is(shown.edgeApiToken, '<set>');
  t.is(shown.edgeLogpushToken, '<set>');
  t.false(JSON.stringify(shown).includes('push"') || JSON.stringify(shown).includes('"tok"'));
});
