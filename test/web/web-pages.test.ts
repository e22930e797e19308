// tier: full
/**
 * Serving the built web pages over real HTTP: the document and its hashed assets with their
 * caching headers and Content-Security-Policy, compressed bytes, refused asset names, the answer
 * before a build, and no data without a token (the page is public, the API behind it is not).
 */
import fs from 'node:fs';
import path from 'node:path';
import test from 'ava';
import Koa from 'koa';
import { errorMiddleware } from '../../api/http/error-middleware.js';
import { WEB_CONTENT_SECURITY_POLICY, webPages } from '../../api/http/web-pages.js';
import { silentLogger } from '../../platform/logger.js';
import { builtWebPage } from '../../platform/web-pages.js';
import { request, serveApp, startTestControlPlane, startTestKnowledgeStore } from '../helpers/servers.js';
import { testConfig } from '../helpers/test-config.js';
import { tempDir } from '../helpers/temp-dir.js';
import { ensureWebBuilt } from '../helpers/web-build.js';

test.before(ensureWebBuilt);

function assetsOf(html: string): string[] {
  return [...html.matchAll(/(?:src|href)="(\/ui\/assets\/[^"]+)"/g)].map((m) => m[1]!);
}

test('the console is served at / and /ui/... with no-cache, a strict CSP and only hashed same-origin assets', async (t) => {
  const plane = await startTestControlPlane(t, testConfig(t, { SVC_API_TOKEN: 'page-token' }));
  for (const p of ['/', '/ui', '/ui/apps', '/ui/apps/hello-web', '/ui/inbox']) {
    const page = await request(`${plane.url}${p}`);
    t.is(page.status, 200, p);
    t.regex(page.headers.get('content-type') ?? '', /^text\/html/);
    t.is(page.headers.get('cache-control'), 'no-cache');
    t.is(page.headers.get('content-security-policy'), WEB_CONTENT_SECURITY_POLICY);
    t.is(page.headers.get('x-content-type-options'), 'nosniff');
    t.regex(page.text, /<title>svc console<\/title>/);
  }
  const html = (await request(`${plane.url}/`)).text;
  t.notRegex(html, /<script(?![^>]*\bsrc=)[^>]*>/, 'no inline script');
  t.notRegex(html, /https?:\/\//, 'no other origin (no CDN)');
  const assets = assetsOf(html);
  t.true(
    assets.some((a) => /\/main-[A-Z0-9]+\.js$/.test(a)) && assets.some((a) => a.endsWith('.css')),
    assets.join(' '),
  );
  for (const asset of assets) {
    const plain = await fetch(`${plane.url}${asset}`, { headers: { 'accept-encoding': 'identity' } });
    t.is(plain.status, 200, asset);
    t.is(plain.headers.get('cache-control'), 'max-age=31536000,immutable');
    t.is(plain.headers.get('content-encoding'), null);
    const br = await fetch(`${plane.url}${asset}`, { headers: { 'accept-encoding': 'br, gzip' } });
    t.is(br.headers.get('content-encoding'), 'br');
    t.regex(br.headers.get('vary') ?? '', /Accept-Encoding/i);
    t.true(
      Number(br.headers.get('content-length')) < (await plain.arrayBuffer()).byteLength,
      'the compressed copy is smaller',
    );
  }
  const js = await (await fetch(`${plane.url}${assets.find((a) => a.endsWith('.js'))!}`)).text();
  t.false(/\beval\(|new Function\(/.test(js), 'the bundle uses no eval');
  // The page is public; the API it calls is not.
  const api = await request(`${plane.url}/api/apps`);
  t.is(api.status, 401);
  t.is(api.body.error.code, 'missing_credentials');
});

test('the asset route answers 404 for unknown, nested or dot names and leaves other methods to the API', async (t) => {
  const plane = await startTestControlPlane(t);
  for (const p of [
    '/ui/assets/main-NOPE1234.js',
    '/ui/assets/%2e%2e%2findex.html',
    '/ui/assets/.hidden-ABCDEFGH.js',
    '/ui/assets/sub/main-ABCDEFGH.js',
  ]) {
    const res = await request(`${plane.url}${p}`);
    t.is(res.status, 404, p);
    t.truthy(res.body.error?.code, p);
  }
  const post = await request(`${plane.url}/ui/apps`, { method: 'POST', json: {} });
  t.not(post.status, 200);
  t.true(post.status >= 400 && post.status < 500, `POST /ui/apps: ${post.status}`);
});

test('the knowledge admin dashboard is served at / on the admin listener with the same headers', async (t) => {
  const store = await startTestKnowledgeStore(t, testConfig(t, { SVC_KNOWLEDGE_TOKENS: 'team:admin:admin-secret' }));
  const page = await request(`${store.adminUrl}/`);
  t.is(page.status, 200);
  t.regex(page.text, /<title>svc knowledge admin<\/title>/);
  t.is(page.headers.get('content-security-policy'), WEB_CONTENT_SECURITY_POLICY);
  for (const asset of assetsOf(page.text)) t.is((await request(`${store.adminUrl}${asset}`)).status, 200, asset);
  t.is((await request(`${store.adminUrl}/admin/api/stats`)).status, 401, 'the admin API still needs the token');
  t.is((await request(`${store.url}/`)).status, 401, 'the REST listener serves no page');
});

test('webPages answers 503 web_not_built before a build and serves a build that appears later', async (t) => {
  const root = path.join(tempDir(t), 'console');
  const app = new Koa();
  app.use(errorMiddleware(silentLogger()));
  app.use(webPages({ root }));
  app.use((ctx) => {
    ctx.body = { api: true };
  });
  const server = await serveApp(t, app);
  const before = await request(`${server.url}/`);
  t.is(before.status, 503);
  t.is(before.body.error.code, 'web_not_built');
  t.deepEqual((await request(`${server.url}/api/x`)).body, { api: true }, 'other paths pass on');
  fs.mkdirSync(path.join(root, 'assets'), { recursive: true });
  fs.copyFileSync(path.join(builtWebPage('console'), 'index.html'), path.join(root, 'index.html'));
  t.is((await request(`${server.url}/ui/anything`)).status, 200);
});
