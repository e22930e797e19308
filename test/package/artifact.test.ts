// tier: full
/**
 * The release artifact, end to end (issue 17's acceptance): built once per ava run, unpacked into
 * an empty folder outside the checkout, and run from there with a PATH that holds no npm, npx,
 * corepack or tsc (and no node, except where a sample app needs it as its own runtime), with no
 * NODE_PATH and the working folder outside the checkout: it prints its version, validates a fixture,
 * runs doctor, serves both services, deploys a sample app through the API, stores and retrieves a
 * knowledge node, and installs itself (twice) into a host tree under a temporary folder.
 */
import { execFileSync, spawn, type ChildProcess } from 'node:child_process';
import fs from 'node:fs';
import http from 'node:http';
import os from 'node:os';
import path from 'node:path';
import test from 'ava';
import { CHECKOUT, type PackagedArtifact } from '../../scripts/package/package-artifact.js';
import { request } from '../helpers/http-request.js';
import { prepareHostRoot, systemdAnalyzeMissing, verifyUnit } from '../helpers/host-root.js';
import { stopAppsIn } from '../helpers/stop-apps.js';
import { sharedArtifact } from '../helpers/shared-artifact.js';

/** Libraries a Debian base system has (libc6, libstdc++6, libgcc-s1): all the artifact may link. */
const BASE_LIBRARIES =
  /^(linux-vdso\.so\.1|libc\.so\.6|libm\.so\.6|libdl\.so\.2|libpthread\.so\.0|librt\.so\.1|libstdc\+\+\.so\.6|libgcc_s\.so\.1|\/lib64\/ld-linux-x86-64\.so\.2|ld-linux-aarch64\.so\.1|\/lib\/ld-linux-aarch64\.so\.1)$/;
/** Programs a host without the build tools lacks. */
const BUILD_TOOLS = new Set(['npm', 'npx', 'corepack', 'tsc', 'tsx', 'yarn', 'pnpm']);

interface Fixture {
  readonly built: PackagedArtifact;
  readonly work: string;
  /** The unpacked release folder. */
  readonly release: string;
  readonly svc: string;
  /** Host programs without the build tools and without node. */
  readonly pathWithoutNode: string;
  /** The same with node, the runtime of the sample apps (not of svc). */
  readonly pathWithNode: string;
}

let fixture: Fixture | undefined;
const children: ChildProcess[] = [];

/** A folder of links to the host's programs in /usr/bin and /usr/sbin, less `leave`. */
function programsWithout(dir: string, leave: ReadonlySet<string>): string {
  fs.mkdirSync(dir);
  for (const from of ['/usr/bin', '/usr/sbin']) {
    for (const name of fs.readdirSync(from)) {
      if (leave.has(name) || fs.existsSync(path.join(dir, name))) continue;
      fs.symlinkSync(path.join(from, name), path.join(dir, name));
    }
  }
  return dir;
}

function env(f: Fixture, extra: Record<string, string> = {}, withNode = false): Record<string, string> {
  return { PATH: withNode ? f.pathWithNode : f.pathWithoutNode, HOME: f.work, LANG: 'C.UTF-8', ...extra };
}

function run(
  f: Fixture,
  args: readonly string[],
  extra: Record<string, string> = {},
  withNode = false,
): { code: number; stdout: string; stderr: string } {
  try {
    const stdout = execFileSync(f.svc, args, {
      cwd: f.work,
      env: env(f, extra, withNode),
      encoding: 'utf8',
      stdio: ['ignore', 'pipe', 'pipe'],
      timeout: 120_000,
    });
    return { code: 0, stdout, stderr: '' };
  } catch (error) {
    const e = error as { status: number; stdout: string; stderr: string };
    return { code: e.status, stdout: e.stdout, stderr: e.stderr };
  }
}

/** GET / with a Host header (fetch does not send one of its own choosing), as curl -H 'Host: ...' does. */
function getWithHost(base: string, host: string): Promise<{ status: number; text: string }> {
  const url = new URL(base);
  return new Promise((resolve, reject) => {
    const req = http.request({ host: url.hostname, port: url.port, path: '/', headers: { host } }, (res) => {
      let text = '';
      res.on('data', (chunk: Buffer) => (text += chunk.toString()));
      res.on('end', () => resolve({ status: res.statusCode ?? 0, text }));
    });
    req.once('error', reject);
    req.end();
  });
}

test.before(async (t) => {
  t.timeout(240_000);
  const work = fs.mkdtempSync(path.join(os.tmpdir(), 'svc-artifact-'));
  // Apps run as their own users (ADR 0047): they pass through the folders above their releases.
  fs.chmodSync(work, 0o711);
  t.false(work.startsWith(CHECKOUT), 'the temporary folder is outside the checkout');
  // Built once per ava run, shared with the platform lane's artifact tests (test/helpers/shared-artifact.ts).
  const built = await sharedArtifact();
  t.log(`artifact built in ${(built.buildMs / 1000).toFixed(1)} s`);
  const host = path.join(work, 'host');
  fs.mkdirSync(host);
  execFileSync('tar', ['-xzf', built.archive, '-C', host]);
  const [folder] = fs.readdirSync(host);
  const release = path.join(host, folder!);
  const pathWithoutNode = programsWithout(path.join(work, 'bin'), new Set([...BUILD_TOOLS, 'node', 'nodejs']));
  const pathWithNode = programsWithout(path.join(work, 'bin-with-node'), BUILD_TOOLS);
  fixture = { built, work, release, svc: path.join(release, 'svc'), pathWithoutNode, pathWithNode };
});

test.after.always(async () => {
  for (const child of children) {
    if (child.exitCode === null && child.signalCode === null) {
      await new Promise((resolve) => {
        child.once('exit', resolve);
        child.kill('SIGTERM');
      });
    }
  }
  if (fixture) {
    await stopAppsIn(path.join(fixture.work, 'data'));
    fs.rmSync(fixture.work, { recursive: true, force: true });
  }
});

test('the release archive holds the executable and its parts, checks against its SHA-256, and links only what a Debian base system has', (t) => {
  const f = fixture!;
  t.is(path.basename(f.built.archive), `svc-${f.built.release.version}-linux-${process.arch}.tar.gz`);
  t.is(path.basename(f.release), `svc-${f.built.release.version}-linux-${process.arch}`);
  execFileSync('sha256sum', ['-c', path.basename(f.built.sha256File)], {
    cwd: path.dirname(f.built.archive),
    stdio: 'ignore',
  });
  for (const part of [
    'svc',
    'svc-release.json',
    'lib/better_sqlite3.node',
    'lib/vec0.so',
    'share/wordnet/index.noun',
    'share/wordnet/data.verb',
    'share/schemas/infraspec.schema.json',
    'share/web/console/index.html',
    'share/web/knowledge-admin/index.html',
  ]) {
    t.true(fs.existsSync(path.join(f.release, part)), part);
  }
  t.is(fs.statSync(f.svc).mode & 0o111, 0o111);
  for (const file of ['svc', 'lib/better_sqlite3.node', 'lib/vec0.so']) {
    const ldd = execFileSync('ldd', [path.join(f.release, file)], { encoding: 'utf8' });
    const libraries = ldd
      .trim()
      .split('\n')
      .map((line) => line.trim().split(/\s+/)[0]!);
    t.false(ldd.includes('not found'), `${file}: ${ldd}`);
    t.deepEqual(
      libraries.filter((name) => !BASE_LIBRARIES.test(name)),
      [],
      `${file} links beyond a base system: ${ldd}`,
    );
  }
  // Nothing inside names the checkout it was built from (a path there would be loaded at run time).
  t.is(fs.readFileSync(f.svc).indexOf(`${CHECKOUT}/`), -1, 'the executable holds a path of the checkout');
  // The client commands run a program of their own, without the server (ADR 0170).
  t.true(f.built.clientBundleBytes * 4 < f.built.bundleBytes, `client ${f.built.clientBundleBytes} B`);
  t.log(
    `archive ${(f.built.archiveBytes / 1e6).toFixed(1)} MB, executable ${(f.built.executableBytes / 1e6).toFixed(1)} MB, bundle ${(f.built.bundleBytes / 1e6).toFixed(1)} MB, client program ${(f.built.clientBundleBytes / 1e6).toFixed(1)} MB`,
  );
});

/** The label the packager measures: the last release tag and the distance to it, from git itself. */
function expectedLabel(version: string, commit: string): string {
  const git = (...args: string[]) => {
    try {
      return execFileSync('git', args, { cwd: CHECKOUT, encoding: 'utf8', stdio: ['ignore', 'pipe', 'ignore'] }).trim();
    } catch {
      return undefined;
    }
  };
  const described = git(
    'describe',
    '--tags',
    '--long',
    '--match',
    'v[0-9]*.[0-9]*.[0-9]*',
    '--exclude',
    'v*-*',
    commit,
  );
  const match = described === undefined ? null : /^v(\d+\.\d+\.\d+)-(\d+)-g/.exec(described);
  if (match !== null)
    return match[2] === '0' ? `v${match[1]}-platform` : `v${match[1]}-platform-${match[2]}-g${commit.slice(0, 7)}`;
  return `v${version}-platform-${git('rev-list', '--count', commit)}-g${commit.slice(0, 7)}`;
}

test('the artifact prints its version and commit and validates a fixture with file:line:col findings, with no node, npm or tsc on the PATH', (t) => {
  const f = fixture!;
  const commit = execFileSync('git', ['rev-parse', 'HEAD'], { cwd: CHECKOUT, encoding: 'utf8' }).trim();
  const version = run(f, ['version']);
  t.is(version.code, 0, version.stderr);
  t.is(
    version.stdout,
    `svc ${expectedLabel(f.built.release.version, commit)}\ncommit ${commit}\nnode ${process.version}\n`,
  );
  t.is(JSON.parse(run(f, ['version', '--json']).stdout).commit, commit);

  const spec = path.join(f.work, 'infraspec.yaml');
  fs.writeFileSync(spec, 'name: demo\nprocesses:\n  web:\n    port: 8080\n    health:\n      interval: "10"\n');
  const invalid = run(f, ['validate', spec]);
  t.is(invalid.code, 1, invalid.stderr);
  t.regex(
    invalid.stdout,
    new RegExp(
      `^${spec.replace(/[.*+?^${}()|[\]\\]/g, '\\$&')}:6:\\d+ duration\\.go processes\\.web\\.health\\.interval`,
      'm',
    ),
  );
  const valid = path.join(f.work, 'valid');
  fs.cpSync(path.join(CHECKOUT, 'fixtures/apps'), valid, { recursive: true });
  const ok = run(f, ['validate', valid]);
  t.is(ok.code, 0, ok.stdout + ok.stderr);
});

test('svc doctor runs from the artifact and judges the Node.js inside it', (t) => {
  const f = fixture!;
  const doctor = run(f, ['doctor', '--json'], {
    SVC_DATA_DIR: path.join(f.work, 'doctor-data'),
    SVC_POSTGRES_MANAGED: 'false',
    SVC_PORT: '0',
    SVC_KNOWLEDGE_PORT: '0',
    SVC_KNOWLEDGE_ADMIN_PORT: '0',
  });
  t.true(doctor.code === 0 || doctor.code === 1, doctor.stderr);
  const report = JSON.parse(doctor.stdout) as { checks: { id: string; status: string; detail: string }[] };
  t.like(
    report.checks.find((c) => c.id === 'node'),
    { status: 'pass', detail: `${process.version} (needs >= 20.18)` },
  );
  t.like(
    report.checks.find((c) => c.id === 'git'),
    { status: 'pass' },
  );
});

test('the artifact serves both services, deploys a sample app through the API and stores and retrieves a knowledge node, loading nothing from the checkout', async (t) => {
  t.timeout(150_000);
  const f = fixture!;
  const dataDir = path.join(f.work, 'data');
  const appsDir = path.join(dataDir, 'apps');
  fs.mkdirSync(appsDir, { recursive: true });
  fs.cpSync(path.join(CHECKOUT, 'fixtures/apps/hello-web'), path.join(appsDir, 'hello-web'), { recursive: true });
  const git = (...args: string[]) =>
    execFileSync('git', ['-C', appsDir, '-c', 'user.name=svc', '-c', 'user.email=svc@localhost', ...args]);
  git('init', '-q', '-b', 'main');
  git('add', '-A');
  git('commit', '-q', '-m', 'hello-web');

  const settings = {
    SVC_DATA_DIR: dataDir,
    SVC_APPS_DIR: appsDir,
    SVC_PORT: '0',
    SVC_KNOWLEDGE_PORT: '0',
    SVC_KNOWLEDGE_ADMIN_PORT: '0',
    SVC_POSTGRES_MANAGED: 'false',
    SVC_LOG_LEVEL: 'info',
  };
  const child = spawn(f.svc, ['serve'], {
    cwd: f.work,
    env: env(f, settings, true),
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  children.push(child);
  let output = '';
  const urls = await new Promise<{ control: string; knowledge: string }>((resolve, reject) => {
    const found: Record<string, string> = {};
    let buffer = '';
    child.stderr.on('data', (chunk: Buffer) => (output += chunk.toString()));
    child.stdout.on('data', (chunk: Buffer) => {
      output += chunk.toString();
      buffer += chunk.toString();
      let newline: number;
      while ((newline = buffer.indexOf('\n')) >= 0) {
        const raw = buffer.slice(0, newline);
        buffer = buffer.slice(newline + 1);
        try {
          const line = JSON.parse(raw) as { msg?: string; url?: string };
          if (line.msg === 'control plane listening') found.control = line.url!;
          if (line.msg === 'knowledge store listening') found.knowledge = line.url!;
          if (found.control && found.knowledge) resolve({ control: found.control, knowledge: found.knowledge });
        } catch {
          // not a JSON line
        }
      }
    });
    child.once('exit', (code) => reject(new Error(`svc serve exited with ${code}:\n${output}`)));
  });
  t.false(
    /Warning|Error/.test(
      output
        .split('\n')
        .filter((l) => !l.startsWith('{'))
        .join('\n'),
    ),
    output,
  );

  // What the process mapped: the native parts of the release, nothing of the checkout.
  const maps = fs.readFileSync(`/proc/${child.pid}/maps`, 'utf8');
  t.true(maps.includes(path.join(f.release, 'lib/better_sqlite3.node')), 'better-sqlite3 is loaded from the release');
  t.true(maps.includes(path.join(f.release, 'lib/vec0.so')), 'sqlite-vec is loaded from the release');
  t.false(maps.includes(CHECKOUT), 'a file of the checkout is mapped');
  t.false(fs.readFileSync(`/proc/${child.pid}/environ`, 'utf8').includes('node_modules'));

  t.is((await request(`${urls.control}/api/health`)).status, 200);
  t.is((await request(`${urls.control}/api/version`)).body.version, f.built.release.version);
  // The operator console, served from the release's share/web, with the script it names.
  const page = await request(`${urls.control}/`);
  t.is(page.status, 200);
  t.regex(page.text, /<title>svc console<\/title>/);
  const script = /src="(\/ui\/assets\/[^"]+\.js)"/.exec(page.text)?.[1];
  t.truthy(script, page.text);
  t.is((await request(`${urls.control}${script}`)).status, 200);

  // A deploy through the API by the artifact's own client, followed step by step until it succeeds.
  const deploy = spawn(f.svc, ['deploy', 'hello-web', '--follow', '--api', urls.control], {
    cwd: f.work,
    env: env(f),
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  let deployOutput = '';
  deploy.stdout.on('data', (chunk: Buffer) => (deployOutput += chunk.toString()));
  deploy.stderr.on('data', (chunk: Buffer) => (deployOutput += chunk.toString()));
  const deployed = await new Promise<number | null>((resolve) => deploy.once('exit', resolve));
  t.is(deployed, 0, deployOutput);
  // Then hello-web answers through the wake gateway, by its public hostname.
  const greeting = await getWithHost(urls.control, 'hello.example.test');
  t.is(greeting.status, 200, greeting.text);
  t.regex(greeting.text, /Hello from svc/);

  // The knowledge store: a durable write with a vector, read back by id, by text (FTS5 + WordNet) and by vector (sqlite-vec).
  const written = await request(`${urls.knowledge}/v1/namespaces/artifact/write`, {
    method: 'POST',
    json: { content: 'The release artifact runs without npm on the host', source_id: 'ops', vector: [0.1, 0.9, 0.2] },
  });
  t.is(written.status, 200, written.text);
  const id = String(written.body.node_id);
  t.is((await request(`${urls.knowledge}/v1/namespaces/artifact/nodes/${id}`)).status, 200);
  const byText = await request(`${urls.knowledge}/v1/namespaces/artifact/retrieve`, {
    method: 'POST',
    json: { text: 'artifacts without npm' },
  });
  t.is(byText.body.results?.[0]?.id, id, byText.text);
  const byVector = await request(`${urls.knowledge}/v1/namespaces/artifact/retrieve`, {
    method: 'POST',
    json: { vector: [0.1, 0.9, 0.2] },
  });
  t.is(byVector.body.results?.[0]?.id, id, byVector.text);
  const backends = await request(`${urls.knowledge}/v1/backends`);
  t.like(backends.body, { vector: { kind: 'sqlite-vec' }, text: { thesaurus: 'wordnet-3.1' } });
});

test('the artifact installs itself into a host tree, twice with nothing changed the second time, and its unit verifies', (t) => {
  const f = fixture!;
  const root = path.join(f.work, 'root');
  prepareHostRoot(root);
  const dry = run(f, ['install', '--dry-run', '--root', root]);
  t.is(dry.code, 0, dry.stderr);
  t.regex(
    dry.stdout,
    new RegExp(
      `^would be created +release ${f.built.release.version} at /opt/svc/releases/${f.built.release.version} \\(from ${f.release}\\)$`,
      'm',
    ),
  );
  const first = run(f, ['install', '--root', root]);
  t.is(first.code, 0, first.stderr);
  t.regex(first.stdout, /^created +systemd unit \/etc\/systemd\/system\/svc\.service/m);
  const second = run(f, ['install', '--root', root]);
  t.is(second.code, 0, second.stderr);
  t.false(/^(created|updated) /m.test(second.stdout), second.stdout);
  // The installed copy runs, and knows the version it is.
  const installed = path.join(root, 'opt/svc/current/svc');
  t.regex(
    execFileSync(installed, ['version'], { cwd: f.work, env: env(f), encoding: 'utf8' }),
    new RegExp(`^svc v${f.built.release.version}-platform`),
  );
  const missing = systemdAnalyzeMissing();
  if (missing) {
    t.log(`skipped: ${missing}`);
    return;
  }
  const verified = verifyUnit(root, 'svc.service');
  t.is(verified.code, 0, verified.output);
});
