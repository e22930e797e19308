// tier: quick
import test from 'ava';
import { SchedulerDriver, SpecRule, validateInfraspec } from '../../../domain/spec/index.js';

const spec = `name: demo
regions:
  eu: {trafficWeight: 100}
  us: {trafficWeight: 25}
placement:
  nodePool: batch
processes:
  web:
    port: 8080
endpoints:
  - url: eu.example.test
    region: eu
`;

function warnings(driver: SchedulerDriver): string[][] {
  const result = validateInfraspec(spec, { driver, fileName: 'infraspec.yaml' });
  // Driver findings are warnings: the spec stays valid.
  if (!result.valid) throw new Error(result.findings.map((f) => f.message).join('\n'));
  return result.findings.map((f) => [f.rule, f.path, `${f.line}:${f.column}`, f.severity]);
}

test('the local driver warns about the node pool, a traffic weight other than 100 and an endpoint region', (t) => {
  t.deepEqual(warnings(SchedulerDriver.local), [
    [SpecRule.driverTrafficWeight, 'regions.us.trafficWeight', '4:23', 'warning'],
    [SpecRule.driverNodePool, 'placement.nodePool', '6:13', 'warning'],
    [SpecRule.driverEndpointRegion, 'endpoints[0].region', '12:13', 'warning'],
  ]);
  const messages = validateInfraspec(spec, { driver: 'local' }).findings.map((f) => f.message);
  for (const message of messages) t.regex(message, /one host/);
});

test('the kubernetes driver honours the node pool and warns about weights and endpoint regions', (t) => {
  t.deepEqual(warnings(SchedulerDriver.kubernetes), [
    [SpecRule.driverTrafficWeight, 'regions.us.trafficWeight', '4:23', 'warning'],
    [SpecRule.driverEndpointRegion, 'endpoints[0].region', '12:13', 'warning'],
  ]);
});

test('validation checks for the local driver when none is named', (t) => {
  t.deepEqual(
    validateInfraspec(spec).findings.map((f) => f.rule),
    validateInfraspec(spec, { driver: 'local' }).findings.map((f) => f.rule),
  );
});

test('the swarm driver honours the node pool, cron, functions and volumes, and warns about weights and endpoint regions; the kubernetes driver warns about volumes', (t) => {
  t.deepEqual(warnings(SchedulerDriver.swarm), [
    [SpecRule.driverTrafficWeight, 'regions.us.trafficWeight', '4:23', 'warning'],
    [SpecRule.driverEndpointRegion, 'endpoints[0].region', '12:13', 'warning'],
  ]);
  const withJobs = `name: demo
volumes:
  - name: data
    mount: /data
processes:
  web:
    port: 8080
  nightly:
    command: node nightly.js
    schedule: "0 3 * * *"
`;
  const result = validateInfraspec(withJobs, { driver: 'kubernetes', fileName: 'infraspec.yaml' });
  t.true(result.valid);
  t.deepEqual(
    result.findings.filter((f) => f.rule === SpecRule.driverUnsupported).map((f) => [f.path, `${f.line}:${f.column}`]),
    [['volumes', '2:1']],
  );
  for (const driver of ['local', 'swarm'] as const)
    t.deepEqual(
      validateInfraspec(withJobs, { driver }).findings.filter((f) => f.rule === SpecRule.driverUnsupported),
      [],
      `${driver} mounts volumes`,
    );
});
