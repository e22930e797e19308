// tier: quick
import test from 'ava';
import { ConfigError } from '../../domain/errors.js';
import { loadConfig, redactConfig, VARIABLES } from '../../platform/config.js';

test('SVC_OBSERVABILITY_TARGET is unset by default and read as host:port', (t) => {
  t.is(loadConfig({}).observabilityTarget, undefined);
  t.is(loadConfig({ SVC_OBSERVABILITY_TARGET: '127.0.0.1:8800' }).observabilityTarget, '127.0.0.1:8800');
  t.is(loadConfig({ SVC_OBSERVABILITY_TARGET: 'svc.internal:443' }).observabilityTarget, 'svc.internal:443');
  t.is(loadConfig({ SVC_OBSERVABILITY_TARGET: '[fd00::4]:8800' }).observabilityTarget, '[fd00::4]:8800');
  t.is(redactConfig(loadConfig({ SVC_OBSERVABILITY_TARGET: '127.0.0.1:8800' })).observabilityTarget, '127.0.0.1:8800');
  t.regex(VARIABLES.observabilityTarget.description, /metrics store/);
});

for (const bad of ['8800', 'host', 'http://host:8800', 'host:0', 'host:65536', 'host:80/metrics', 'a b:80']) {
  test(`SVC_OBSERVABILITY_TARGET "${bad}" stops the start naming the variable`, (t) => {
    t.throws(() => loadConfig({ SVC_OBSERVABILITY_TARGET: bad }), {
      instanceOf: ConfigError,
      message: /^SVC_OBSERVABILITY_TARGET: /,
    });
  });
}
