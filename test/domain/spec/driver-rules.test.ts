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

test('weight 0 is a ready standby the local driver honours; a weight between 0 and 100 on the only region is an error on every driver', (t) => {
  const standby = 'name: demo\nregions:\n  eu: {}\n  us: {trafficWeight: 0}\nprocesses:\n  web:\n    port: 8080\n';
  t.deepEqual(validateInfraspec(standby, { driver: 'local' }).findings, []);
  for (const driver of ['kubernetes', 'swarm'] as const)
    t.deepEqual(
      validateInfraspec(standby, { driver }).findings.map((f) => [f.rule, f.path]),
      [[SpecRule.driverTrafficWeight, 'regions.us.trafficWeight']],
      driver,
    );
  const split = 'name: demo\nregions:\n  eu: {trafficWeight: 40}\nprocesses:\n  web:\n    port: 8080\n';
  for (const driver of ['local', 'kubernetes', 'swarm'] as const) {
    const result = validateInfraspec(split, { driver, fileName: 'infraspec.yaml' });
    t.false(result.valid, driver);
    t.deepEqual(
      result.findings.map((f) => [f.rule, f.path, `${f.line}:${f.column}`, f.severity]),
      [[SpecRule.trafficWeightSingleRegion, 'regions.eu.trafficWeight', '3:23', 'error']],
      driver,
    );
  }
  for (const weight of [0, 100])
    t.true(validateInfraspec(split.replace('40', String(weight)), { driver: 'local' }).valid, `weight ${weight}`);
});
