// tier: quick
import test from 'ava';
import { ConfigError } from '../../../domain/errors.js';
import { loadConfig } from '../../../platform/config.js';
import { schedulerDriverOf } from '../../../wiring/control/reconcilers.js';

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
