// tier: full
import fs from 'node:fs';
import path from 'node:path';
import test from 'ava';
import { ReleaseBuilder } from '../../platform/release-builder/index.js';
import { silentLogger } from '../../platform/logger.js';
import { setAppRelease } from '../../store/control/apps.js';
import { git, startPlaneWithApps } from '../helpers/plane-with-apps.js';
import { request } from '../helpers/http-request.js';
import { runSvc } from '../helpers/cli.js';

const TOKEN = 'logs-test-control-token';
const ADMIN = { authorization: `Bearer ${TOKEN}` };
/** Prints a tick every 30 ms (with its version), a line per request, and an error line at start. */
const SERVER = (version: string) => `import http from 'node:http';
let n = 0;
setInterval(() => console.log('tick ' + (++n) + ' ${version}'), 30);
console.error('starting ${version}');
const server = http.createServer((req, res) => { console.log(req.method + ' ' + req.url); res.end('ok'); });
server.listen(Number(process.env.PORT), '127.0.0.1');
process.on('SIGTERM', () => { server.close(); process.exit(0); });
`;

interface Line {
  id: number;
  at: string;
  process: string;
  allocation: string;
  release: string;
  stream: string;
  line: string;
}

/** Follows the app's logs over SSE until `done` holds for the lines received. */
async function followUntil(url: string, done: (lines: readonly Line[]) => boolean, headers = ADMIN): Promise<Line[]> {
  const controller = new AbortController();
  const timer = setTimeout(() => controller.abort(), 30_000);
  const response = await fetch(url, { headers, signal: controller.signal });
  const lines: Line[] = [];
  let buffer = '';
  try {
    for await (const chunk of response.body as unknown as AsyncIterable<Uint8Array>) {
      buffer += Buffer.from(chunk).toString('utf8');
      let end: number;
      while ((end = buffer.indexOf('\n\n')) >= 0) {
        const data = /^data: (.*)$/m.exec(buffer.slice(0, end))?.[1];
        buffer = buffer.slice(end + 2);
        if (data !== undefined && !data.startsWith('{"app"')) lines.push(JSON.parse(data) as Line);
      }
      if (done(lines)) return lines;
    }
    throw new Error('stream ended');
  } finally {
    clearTimeout(timer);
    controller.abort();
  }
}

test('app logs are captured, searched, followed across a redeploy, kept for the old release, and guarded by logs:read', async (t) => {
  const { plane, config, code } = await startPlaneWithApps(t, {
    server: SERVER('v1'),
    apps: [{ name: 'chatty', spec: 'name: chatty\ndeploy: true\nprocesses:\n  web:\n    port: 8080\n' }],
    env: { SVC_API_TOKEN: TOKEN },
  });
  const base = `${plane.url}/api/v1/apps/chatty/logs`;
  const first = await followUntil(`${base}?follow=true&limit=5`, (lines) => lines.some((l) => l.line === 'tick 3 v1'));
  const v1 = first.find((l) => l.line === 'tick 3 v1')!;
  t.like(v1, { process: 'web', stream: 'stdout' });
  t.regex(v1.release, /^[0-9a-f]{12}$/);

  // Redeploy: a follower sees the new release's lines on the same stream.
  fs.writeFileSync(path.join(code, 'server.mjs'), SERVER('v2'));
  git(code, 'commit', '-qam', 'v2');
  const following = followUntil(`${base}?follow=true&limit=1`, (lines) => lines.some((l) => l.line === 'tick 2 v2'));
  const release = await new ReleaseBuilder({ dataDir: config.dataDir, logger: silentLogger() }).build({
    app: 'chatty',
    repoUrl: code,
    ref: 'main',
  });
  setAppRelease(plane.db, 'chatty', { commit: release.manifest.commit, dir: release.dir });
  plane.reconcilers.appController.enqueue('chatty');
  const across = await following;
  const v2 = across.find((l) => l.line === 'tick 2 v2')!;
  t.is(v2.release, release.manifest.commit.slice(0, 12));
  t.not(v2.allocation, v1.allocation);

  // The old release's lines stay; filters and text search narrow them.
  const old = await request(`${base}?release=${v1.release}&stream=stdout&grep=TICK%203%20v1&limit=10`, {
    headers: ADMIN,
  });
  t.is(old.status, 200, old.text);
  t.deepEqual(
    (old.body.lines as Line[]).map((l) => l.line),
    ['tick 3 v1'],
  );
  const errors = await request(`${base}?stream=stderr&since=10m`, { headers: ADMIN });
  t.deepEqual(
    (errors.body.lines as Line[]).map((l) => l.line),
    ['starting v1', 'starting v2'],
  );

  // Bad filters: 400 in the error shape; unknown app: 404.
  for (const [query, field] of [
    ['since=yesterday', 'since'],
    ['limit=0', 'limit'],
    ['stream=stdin', 'stream'],
    ['follow=maybe', 'follow'],
    ['colour=red', 'colour'],
    ['since=1m&until=2m', 'since'],
  ] as const) {
    const bad = await request(`${base}?${query}`, { headers: ADMIN });
    t.is(bad.status, 400, query);
    t.like(bad.body, { error: { code: 'invalid_request', details: { field } } }, query);
  }
  const missing = await request(`${plane.url}/api/v1/apps/nope/logs`, { headers: ADMIN });
  t.is(missing.status, 404);
  t.is(missing.body.error.code, 'app_not_found');

  // Auth: none is 401; a token without logs:read is 403; one with it reads (and follows).
  t.is((await request(base)).status, 401);
  const issue = async (scopes: string[]) =>
    (await request(`${plane.url}/api/access/tokens`, { method: 'POST', headers: ADMIN, json: { name: 'l', scopes } }))
      .body.token.token as string;
  const eventsOnly = await issue(['events:read']);
  const denied = await request(base, { headers: { authorization: `Bearer ${eventsOnly}` } });
  t.is(denied.status, 403);
  t.like(denied.body, { error: { code: 'insufficient_scope', details: { scope: 'logs:read' } } });
  const reader = await issue(['logs:read']);
  t.is((await request(`${base}?limit=1`, { headers: { authorization: `Bearer ${reader}` } })).status, 200);
  await followUntil(`${base}?follow=true&limit=1`, (lines) => lines.length >= 2, {
    authorization: `Bearer ${reader}`,
  });

  // The CLI: --json, plain when piped, exit 4 for an unknown app, 1 for a bad filter.
  const env = { SVC_API_URL: plane.url, SVC_API_TOKEN: TOKEN };
  const json = await runSvc(['logs', 'chatty', '--json', '--grep', 'starting', '--stream', 'stderr'], { env });
  t.is(json.code, 0, json.stderr);
  t.deepEqual(
    json.stdout
      .trim()
      .split('\n')
      .map((l) => (JSON.parse(l) as Line).line),
    ['starting v1', 'starting v2'],
  );
  const plain = await runSvc(['logs', 'chatty', '--process', 'web', '--limit', '3'], { env });
  t.is(plain.code, 0, plain.stderr);
  const printed = plain.stdout.trim().split('\n');
  t.is(printed.length, 3);
  t.false(plain.stdout.includes('\x1b['), 'no colour codes when piped');
  t.regex(printed[0]!, /^\d{4}-\d\d-\d\dT\S+Z web\.[0-9a-f]{8} tick \d+ v2$/);
  const unknown = await runSvc(['logs', 'nope'], { env });
  t.is(unknown.code, 4);
  t.regex(unknown.stderr, /app nope not found/);
  const badSince = await runSvc(['logs', 'chatty', '--since', 'soon'], { env });
  t.is(badSince.code, 1);
  t.regex(badSince.stderr, /since/);
  const followed = await runSvc(['logs', 'nope', '-f'], { env });
  t.is(followed.code, 4);
});
