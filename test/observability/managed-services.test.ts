// tier: quick
import test from 'ava';
import YAML from 'yaml';
import {
  type ConflictReason,
  contentDigest,
  type InstallAction,
  MANAGED_PORTS,
  MANAGED_SERVICE_NAMES,
  managedServices,
  MARKER_FILE,
  markerFile,
  METRICS_RETENTION,
  planManagedFolder,
  readMarker,
  RULES_FILE,
  SPEC_FILE,
  type ManagedFile,
  type ObservedFolder,
} from '../../domain/observability/index.js';
import { validateInfraspec } from '../../domain/spec/index.js';

const services = managedServices({
  scrapeConfigYaml: 'global: {}\n',
  alertRulesYaml: 'groups: []\n',
  dashboardJson: '{}\n',
  datasource: { apiVersion: 1, datasources: [] },
});

test('the managed apps are svc-metrics-store, svc-dashboard and svc-container-metrics', (t) => {
  t.deepEqual(
    services.map((s) => s.name),
    ['svc-metrics-store', 'svc-dashboard', 'svc-container-metrics'],
  );
  t.deepEqual(
    MANAGED_SERVICE_NAMES,
    services.map((s) => s.name),
  );
  t.is(new Set(Object.values(MANAGED_PORTS)).size, 3);
});

for (const service of services) {
  test(`the generated ${service.name}/infraspec.yaml validates against the schema and semantic rules, warned only of its fixed port`, (t) => {
    const text = service.files.find((f) => f.path === SPEC_FILE)!.content;
    const result = validateInfraspec(text, { fileName: `${service.name}/${SPEC_FILE}` });
    // Managed services listen on fixed host ports by design, so each deploy has the hostPort gap (ADR 0160).
    t.deepEqual(
      result.findings.map((f) => `${f.severity} ${f.rule} ${f.path}`),
      ['warning hostPort.noOverlap processes.web.hostPort'],
    );
    t.true(result.valid);
    t.is(result.spec?.name, service.name);
    t.true(result.spec?.deploy);
    const web = result.spec!.processes.web!;
    t.is(web.type, 'service');
    t.true(web.metrics.enabled);
    t.is(web.hostPort, MANAGED_PORTS[service.name]);
    t.truthy(web.health?.path);
    // The file is the spec object the service reports.
    t.deepEqual(YAML.parse(text), service.spec);
  });

  test(`the ${service.name} folder has a Dockerfile, so the deploy pipeline can build it from the apps repository`, (t) => {
    t.true(service.files.some((f) => f.path === 'Dockerfile' && f.content.startsWith('#')));
  });
}

test('the metrics store keeps 30 days and at most 8 GB and loads the rules file next to its config', (t) => {
  const store = services[0]!;
  t.deepEqual(METRICS_RETENTION, { time: '30d', size: '8GB' });
  const command = (store.spec.processes as { web: { command: string } }).web.command;
  t.true(command.includes('--storage.tsdb.retention.time=30d'));
  t.true(command.includes('--storage.tsdb.retention.size=8GB'));
  t.true(command.includes('--config.file=prometheus.yml'));
  t.deepEqual(
    store.files.map((f) => f.path).sort(),
    ['.gitignore', 'Dockerfile', SPEC_FILE, 'prometheus.yml', RULES_FILE].sort(),
  );
  t.is(store.files.find((f) => f.path === '.gitignore')!.content, 'secrets/\n');
});

const desired: ManagedFile[] = [
  { path: 'infraspec.yaml', content: 'name: x\n' },
  { path: 'rules/a.yml', content: 'groups: []\n' },
];
const marker = markerFile(desired);
const next: ManagedFile[] = [
  { path: 'infraspec.yaml', content: 'name: x\n# v2\n' },
  { path: 'rules/a.yml', content: 'groups: []\n' },
];

function folder(files: Record<string, string>): ObservedFolder {
  return { kind: 'directory', files: new Map(Object.entries(files)) };
}

const planCases: {
  title: string;
  desired: ManagedFile[];
  observed: ObservedFolder;
  force?: boolean;
  action: InstallAction;
  writes: string[];
  reason?: ConflictReason;
  files?: string[];
}[] = [
  {
    title: 'an absent folder is created with every file and the marker last',
    desired,
    observed: { kind: 'absent', files: new Map() },
    action: 'create',
    writes: ['infraspec.yaml', 'rules/a.yml', MARKER_FILE],
  },
  {
    title: 'a folder identical to the install is unchanged',
    desired,
    observed: folder({ 'infraspec.yaml': 'name: x\n', 'rules/a.yml': 'groups: []\n', [MARKER_FILE]: marker.content }),
    action: 'unchanged',
    writes: [],
  },
  {
    title: 'an unedited folder of an older install is updated: only changed files, then the marker',
    desired: next,
    observed: folder({ 'infraspec.yaml': 'name: x\n', 'rules/a.yml': 'groups: []\n', [MARKER_FILE]: marker.content }),
    action: 'update',
    writes: ['infraspec.yaml', MARKER_FILE],
  },
  {
    title: 'an interrupted update (new file written, old marker) is finished',
    desired: next,
    observed: folder({
      'infraspec.yaml': 'name: x\n# v2\n',
      'rules/a.yml': 'groups: []\n',
      [MARKER_FILE]: marker.content,
    }),
    action: 'update',
    writes: [MARKER_FILE],
  },
  {
    title: 'a file the install added in a later version is written into an unedited folder',
    desired: [...desired, { path: 'extra.txt', content: 'new\n' }],
    observed: folder({ 'infraspec.yaml': 'name: x\n', 'rules/a.yml': 'groups: []\n', [MARKER_FILE]: marker.content }),
    action: 'update',
    writes: ['extra.txt', MARKER_FILE],
  },
  {
    title: "an operator's edit is a conflict naming the file",
    desired: next,
    observed: folder({
      'infraspec.yaml': 'name: x\n# mine\n',
      'rules/a.yml': 'groups: []\n',
      [MARKER_FILE]: marker.content,
    }),
    action: 'conflict',
    writes: [],
    reason: 'modified',
    files: ['infraspec.yaml'],
  },
  {
    title: 'a file the operator deleted is a conflict',
    desired,
    observed: folder({ 'infraspec.yaml': 'name: x\n', [MARKER_FILE]: marker.content }),
    action: 'conflict',
    writes: [],
    reason: 'modified',
    files: ['rules/a.yml'],
  },
  {
    title: 'a file the operator put where the install writes is a conflict',
    desired: [...desired, { path: 'extra.txt', content: 'new\n' }],
    observed: folder({
      'infraspec.yaml': 'name: x\n',
      'rules/a.yml': 'groups: []\n',
      'extra.txt': 'mine\n',
      [MARKER_FILE]: marker.content,
    }),
    action: 'conflict',
    writes: [],
    reason: 'modified',
    files: ['extra.txt'],
  },
  {
    title: "force overwrites an operator's edit and reports it",
    desired: next,
    observed: folder({
      'infraspec.yaml': 'name: x\n# mine\n',
      'rules/a.yml': 'groups: []\n',
      [MARKER_FILE]: marker.content,
    }),
    force: true,
    action: 'update',
    writes: ['infraspec.yaml', MARKER_FILE],
    reason: 'modified',
    files: ['infraspec.yaml'],
  },
  {
    title: 'a folder without a marker is unmanaged: a conflict even when empty',
    desired,
    observed: folder({}),
    action: 'conflict',
    writes: [],
    reason: 'unmanaged',
    files: [],
  },
  {
    title: 'a folder without a marker is unmanaged: a conflict naming the files it would overwrite',
    desired,
    observed: folder({ 'infraspec.yaml': 'name: mine\n' }),
    action: 'conflict',
    writes: [],
    reason: 'unmanaged',
    files: ['infraspec.yaml'],
  },
  {
    title: 'an unreadable marker counts as no marker',
    desired,
    observed: folder({ 'infraspec.yaml': 'name: x\n', [MARKER_FILE]: '{not json' }),
    action: 'conflict',
    writes: [],
    reason: 'unmanaged',
    files: ['infraspec.yaml'],
  },
  {
    title: 'a file where the folder goes is a conflict force cannot override',
    desired,
    observed: { kind: 'other', files: new Map() },
    force: true,
    action: 'conflict',
    writes: [],
    reason: 'not_a_directory',
    files: [],
  },
];

for (const c of planCases) {
  test(`install plan: ${c.title}`, (t) => {
    const plan = planManagedFolder(c.desired, c.observed, { force: c.force === true });
    t.is(plan.action, c.action);
    t.deepEqual(
      plan.writes.map((w) => w.path),
      c.writes,
    );
    if (c.reason === undefined) t.is(plan.conflict, undefined);
    else t.deepEqual(plan.conflict, { reason: c.reason, files: c.files ?? [] });
    if (c.writes.includes(MARKER_FILE))
      t.is(plan.writes[plan.writes.length - 1]!.content, markerFile(c.desired).content);
  });
}

test('the marker lists the SHA-256 of every file and reads back', (t) => {
  const read = readMarker(marker.content)!;
  t.is(read.get('infraspec.yaml'), `sha256:${contentDigest('name: x\n')}`);
  t.is(read.get('rules/a.yml'), `sha256:${contentDigest('groups: []\n')}`);
  t.is(readMarker(undefined), undefined);
  t.is(readMarker('{"managedBy":"someone-else","files":{}}'), undefined);
});
