// tier: quick
import test from 'ava';
import { ConfigError } from '../../../domain/errors.js';
import { loadConfig } from '../../../platform/config.js';
import { schedulerDriverOf } from '../../../wiring/control/reconcilers.js';
import { imageForNodes } from '../../../domain/scheduler/swarm/index.js';

test('the swarm driver takes its manager from SVC_SWARM_HOST, else Docker’s own DOCKER_HOST', (t) => {
  const named = loadConfig({ SVC_SCHEDULER_DRIVER: 'swarm', SVC_SWARM_HOST: 'tcp://manager.example.test:2376' });
  t.deepEqual(schedulerDriverOf(named), { driver: 'swarm', host: 'tcp://manager.example.test:2376' });
  t.deepEqual(schedulerDriverOf(loadConfig({ SVC_SCHEDULER_DRIVER: 'swarm' })), { driver: 'swarm' });
  t.is(loadConfig({}).swarmHost, undefined);
});

test('an SVC_SWARM_HOST that is not an engine address is refused, naming the variable', (t) => {
  t.throws(() => loadConfig({ SVC_SWARM_HOST: 'manager:2376' }), {
    instanceOf: ConfigError,
    message: /^SVC_SWARM_HOST: "manager:2376" is not an engine address: use unix:\/\/\/path or tcp:\/\/host:port/,
  });
});

test('SVC_SWARM_REGISTRY names where nodes pull the managed registry’s images; a loopback registry is replaced, others kept', (t) => {
  const config = loadConfig({ SVC_SCHEDULER_DRIVER: 'swarm', SVC_SWARM_REGISTRY: 'registry.internal:5443' });
  t.deepEqual(schedulerDriverOf(config), { driver: 'swarm', registry: 'registry.internal:5443' });
  const digest = `sha256:${'a'.repeat(64)}`;
  t.is(
    imageForNodes(`127.0.0.1:41234/web@${digest}`, 'registry.internal:5443'),
    `registry.internal:5443/web@${digest}`,
  );
  t.is(imageForNodes(`localhost:5000/web@${digest}`, '10.0.0.5:5000'), `10.0.0.5:5000/web@${digest}`);
  t.is(imageForNodes(`ghcr.io/acme/web@${digest}`, 'registry.internal:5443'), `ghcr.io/acme/web@${digest}`);
  t.is(imageForNodes(`127.0.0.1:41234/web@${digest}`, undefined), `127.0.0.1:41234/web@${digest}`);
  t.throws(() => loadConfig({ SVC_SWARM_REGISTRY: 'http://registry:5000' }), {
    instanceOf: ConfigError,
    message: /^SVC_SWARM_REGISTRY: "http:\/\/registry:5000" is not a registry address: use host or host:port/,
  });
});
