// tier: full
/**
 * Encrypted secrets end to end (docs/secrets.md): a value encrypted with `svc secrets encrypt` to
 * the host's age key is committed, deployed, decrypted into the app's secrets folder and read by
 * the app from `$SVC_SECRETS_DIR`, and appears in no API answer or event; preflight's inspect step
 * refuses a secret declared encrypted that is not, and a plaintext one.
 */
import { spawn } from 'node:child_process';
import crypto from 'node:crypto';
import fs from 'node:fs';
import path from 'node:path';
import test from 'ava';
import { ensureHostIdentity, hostIdentityPath } from '../../platform/secrets/age-secrets.js';
import { runSvc, SVC_BIN, SVC_FROM_SOURCE, type CliResult } from '../helpers/cli.js';
import { request } from '../helpers/servers.js';
import {
  appEvents,
  commitApp,
  deployAndWait,
  initAppsRepo,
  pipelineConfig,
  startPlane,
  stepSummary,
  waitForApp,
} from '../pipeline/pipeline-fixture.js';

const VALUE = `tok-${crypto.randomBytes(12).toString('hex')}`;

/** Serves the SHA-256 of the secret file it reads, never the value. */
const READER = `import http from 'node:http';
import fs from 'node:fs';
import crypto from 'node:crypto';
http.createServer((req, res) => {
  if (req.url === '/healthz') { res.writeHead(200); res.end('ok'); return; }
  const value = fs.readFileSync(process.env.SVC_SECRETS_DIR + '/API_TOKEN');
  res.writeHead(200); res.end(crypto.createHash('sha256').update(value).digest('hex'));
}).listen(Number(process.env.PORT ?? process.env.NOMAD_PORT_http));
`;

function svcWithInput(args: readonly string[], input: string, env: Record<string, string>): Promise<CliResult> {
  return new Promise((resolve, reject) => {
    const child = spawn(process.execPath, [SVC_BIN, ...args], {
      env: { ...process.env, SVC_LOG_LEVEL: 'silent', SVC_FROM_SOURCE, ...env },
      stdio: ['pipe', 'pipe', 'pipe'],
    });
    let stdout = '';
    let stderr = '';
    child.stdout.on('data', (chunk: Buffer) => (stdout += chunk.toString()));
    child.stderr.on('data', (chunk: Buffer) => (stderr += chunk.toString()));
    child.once('error', reject);
    child.once('close', (code) => resolve({ code, stdout, stderr }));
    child.stdin.end(input);
  });
}

test('a secret committed age-encrypted is decrypted at deploy, read by the app, and shown nowhere else', async (t) => {
  const config = pipelineConfig(t);
  initAppsRepo(config);
  await ensureHostIdentity(hostIdentityPath(config.dataDir));
  const appDir = path.join(config.appsDir, 'vault');
  fs.mkdirSync(appDir, { recursive: true });
  fs.writeFileSync(path.join(appDir, 'infraspec.yaml'), 'name: vault\n');
  const encrypt = await svcWithInput(['secrets', 'encrypt', appDir, 'API_TOKEN'], VALUE, {
    SVC_DATA_DIR: config.dataDir,
  });
  t.is(encrypt.code, 0, encrypt.stderr);
  const committed = fs.readFileSync(path.join(appDir, 'secrets', 'API_TOKEN.age'), 'utf8');
  t.regex(committed, /^-----BEGIN AGE ENCRYPTED FILE-----/);
  t.false(committed.includes(VALUE));
  const commit = commitApp(config.appsDir, 'vault', { extra: 'secrets:\n  - API_TOKEN' }, { 'server.mjs': READER });

  const plane = await startPlane(t, config);
  await waitForApp(plane, 'vault');
  const preflight = await deployAndWait(plane, 'vault', {}, 'preflight');
  t.is(preflight.operation.status, 'succeeded', preflight.operation.lastError ?? '');
  const { queued, operation, steps } = await deployAndWait(plane, 'vault');
  t.is(operation.status, 'succeeded', operation.lastError ?? '');
  const submit = steps.steps.find((s: { step: string }) => s.step === 'submit');
  t.regex(submit.message, /decrypted 1 secret\(s\) into the app's secrets folder: API_TOKEN/);
  const file = path.join(config.dataDir, 'secrets', 'vault', 'API_TOKEN');
  t.is(fs.readFileSync(file, 'utf8'), VALUE);
  t.is(fs.statSync(file).mode & 0o777, 0o600);

  const view = (await request(`${plane.url}/api/apps/vault`)).body;
  const port = view.processes.find((p: { process: string }) => p.process === 'web').allocations[0].ports.http;
  const served = await (await fetch(`http://127.0.0.1:${port}/`)).text();
  t.is(served, crypto.createHash('sha256').update(VALUE).digest('hex'), 'the app read the decrypted value');

  const plan = await runSvc(['secrets', 'vault', '--json'], { env: { SVC_API_URL: plane.url } });
  t.is(plan.code, 0, plan.stderr);
  const entry = (
    JSON.parse(plan.stdout) as { entries: { key: string; encrypted: boolean; action: string }[] }
  ).entries.find((e) => e.key === 'API_TOKEN');
  t.like(entry, { encrypted: true, action: 'none' });
  t.false(plan.stdout.includes(VALUE));

  const answers = [
    JSON.stringify(steps),
    JSON.stringify(view),
    JSON.stringify(await appEvents(plane, 'vault')),
    (await request(`${plane.url}/api/v1/operations/${queued.operation.id}`)).text,
    (await request(`${plane.url}/api/secrets/migration-plan`)).text,
    (await request(`${plane.url}/api/operator/inbox`)).text,
  ];
  for (const answer of answers) t.false(answer.includes(VALUE), 'the value is in no API answer or event');
  t.is(steps.deployment.commit, commit);
});

test('preflight inspect refuses a secret declared encrypted that is not, and a plaintext committed secret', async (t) => {
  const config = pipelineConfig(t);
  initAppsRepo(config);
  const appDir = path.join(config.appsDir, 'leaky');
  fs.mkdirSync(path.join(appDir, 'secrets'), { recursive: true });
  commitApp(
    config.appsDir,
    'leaky',
    { extra: 'secrets:\n  - DB_PASSWORD\n  - API_KEY' },
    { 'secrets/DB_PASSWORD.age': 'hunter2\n', 'secrets/API_KEY': 'plain-key\n' },
  );
  const plane = await startPlane(t, config);
  await waitForApp(plane, 'leaky');
  const preflight = await deployAndWait(plane, 'leaky', {}, 'preflight');
  t.is(preflight.operation.status, 'failed');
  t.deepEqual(stepSummary(preflight.steps), ['validate succeeded', 'clone succeeded', 'inspect failed']);
  const inspect = preflight.steps.steps.find((s: { step: string }) => s.step === 'inspect');
  t.regex(inspect.output, /error secret\.not-encrypted: secrets\/DB_PASSWORD\.age is declared encrypted/);
  t.regex(inspect.output, /error secret\.plaintext-committed: secrets\/API_KEY holds the value/);
  t.false(JSON.stringify(preflight.steps).includes('hunter2'));
  t.false(JSON.stringify(preflight.steps).includes('plain-key'));

  // A deploy (which skips inspect) refuses too: the file does not decrypt, and no value is written.
  const deploy = await deployAndWait(plane, 'leaky');
  t.is(deploy.operation.status, 'failed');
  const submit = deploy.steps.steps.find((s: { step: string }) => s.step === 'submit');
  t.regex(submit.message, /secrets\/DB_PASSWORD\.age is not an age-encrypted file/);
  t.false(fs.existsSync(path.join(config.dataDir, 'secrets', 'leaky', 'DB_PASSWORD')));
});
