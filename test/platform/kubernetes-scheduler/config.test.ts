// tier: quick
import test from 'ava';
import { ConfigError } from '../../../domain/errors.js';
import { loadConfig } from '../../../platform/config.js';

test('loadConfig defaults to the local driver, the default kubeconfig and the svc-apps namespace', (t) => {
  const config = loadConfig({});
  t.is(config.schedulerDriver, 'local');
  t.is(config.kubeconfig, undefined);
  t.is(config.kubernetesNamespace, 'svc-apps');
});

test('loadConfig reads the kubernetes driver, an absolute kubeconfig path and a namespace', (t) => {
  const config = loadConfig({
    SVC_SCHEDULER_DRIVER: 'kubernetes',
    SVC_KUBECONFIG: '/etc/svc/kubeconfig',
    SVC_KUBERNETES_NAMESPACE: 'apps-prod',
  });
  t.is(config.schedulerDriver, 'kubernetes');
  t.is(config.kubeconfig, '/etc/svc/kubeconfig');
  t.is(config.kubernetesNamespace, 'apps-prod');
});

test('loadConfig refuses an unknown scheduler driver and an invalid namespace, naming the variable', (t) => {
  t.throws(() => loadConfig({ SVC_SCHEDULER_DRIVER: 'nomad' }), {
    instanceOf: ConfigError,
    message: 'SVC_SCHEDULER_DRIVER: "nomad" is not one of local, kubernetes, swarm',
  });
  t.throws(() => loadConfig({ SVC_KUBERNETES_NAMESPACE: 'Apps_Prod' }), {
    instanceOf: ConfigError,
    message: /^SVC_KUBERNETES_NAMESPACE: "Apps_Prod" is not a namespace name/,
  });
  t.throws(() => loadConfig({ SVC_KUBERNETES_NAMESPACE: 'a'.repeat(64) }), {
    instanceOf: ConfigError,
    message: /^SVC_KUBERNETES_NAMESPACE/,
  });
});
