// tier: full
/**
 * The operator console in a real browser (Debian's Chromium driven by playwright-core) against a
 * real control plane with sample apps: every page at phone width with its title and landmarks and
 * no console error or failed request, keyboard use, a deploy from the console whose steps arrive
 * live, an incident acknowledged from the console, and with SVC_API_TOKEN set, no data before
 * signing in.
 */
import fs from 'node:fs';
import path from 'node:path';
import anyTest, { type ExecutionContext, type TestFn } from 'ava';
import type { Browser, Page } from 'playwright-core';
import { launchBrowser, newPage, type PageWatch } from '../helpers/browser.js';
import { startPlaneWithApps } from '../helpers/plane-with-apps.js';
import { request } from '../helpers/http-request.js';
import { ensureWebBuilt } from '../helpers/web-build.js';
import { freePort } from '../routing/wake-harness.js';
import { getApp } from '../../store/control/apps.js';
import { waitForReconciled } from '../helpers/wait-for.js';

const test = anyTest as TestFn<{ browser: Browser }>;

/** The sample apps' server: `/healthz`, and a start delayed by START_DELAY_MS (so a deploy's healthy step lasts a while). */
const SERVER = `import http from 'node:http';
const server = http.createServer((req, res) => {
  res.writeHead(200, { 'content-type': 'text/plain' });
  res.end(req.url === '/healthz' ? 'ok' : 'hello from ' + process.env.SVC_APP);
});
setTimeout(() => server.listen(Number(process.env.PORT), '127.0.0.1'), Number(process.env.START_DELAY_MS ?? 0));
process.on('SIGTERM', () => server.close(() => process.exit(0)));
`;

const spec = (name: string, port: number, extra = '') => `name: ${name}
deploy: true
build:
  dockerfile: Dockerfile
processes:
  web:
    port: ${port}
    health:
      path: /healthz
      interval: 100ms
      timeout: 1s
    resources:
      memory: 128
${extra}`;

const DOCKERFILE = 'FROM node:20-alpine\nWORKDIR /app\nCOPY . .\nCMD ["node", "server.mjs"]\n';

async function startApps(t: ExecutionContext<{ browser: Browser }>, env: Record<string, string> = {}) {
  const [hello, greeter] = [await freePort(), await freePort()];
  return startPlaneWithApps(t, {
    server: SERVER,
    env,
    apps: [
      {
        name: 'hello',
        spec: spec(
          'hello',
          hello,
          'endpoints:\n  - url: hello.example.test\nrepo:\n  url: https://git.example.test/hello.git\n  repoWeb: https://git.example.test/hello\n',
        ),
      },
      {
        name: 'greeter',
        spec: spec('greeter', greeter, 'env:\n  START_DELAY_MS: "1500"\n'),
        release: false,
        files: { 'server.mjs': SERVER, Dockerfile: DOCKERFILE },
      },
    ],
  });
}

// Browser-side functions. They run in the page (functions, not strings: the pages' CSP forbids
// eval) and are serialized, so they use no outer variable; this project's TypeScript has no DOM
// types, so they reach the page's globals through `globalThis` as `any`.
/** Bytes transferred for the document and its assets, from the Resource Timing entries. */
const firstLoad = () => {
  const entries = [
    ...(globalThis as any).performance.getEntriesByType('navigation'),
    ...(globalThis as any).performance
      .getEntriesByType('resource')
      .filter((e: any) => String(e.name).includes('/ui/assets/')),
  ];
  return { bytes: entries.reduce((sum: number, e: any) => sum + Number(e.transferSize), 0), files: entries.length };
};
const activeText = () => String((globalThis as any).document.activeElement?.textContent ?? '');

/** Waits until the page shows no "Loading…" line. */
async function settled(page: Page): Promise<void> {
  await page.waitForFunction(
    () =>
      !String((globalThis as any).document.body.innerText).includes('Loading…') &&
      !String((globalThis as any).document.body.innerText).includes('Connecting…'),
  );
}

function noProblems(
  t: { deepEqual: (a: unknown, b: unknown, m?: string) => void },
  watch: PageWatch,
  what: string,
): void {
  t.deepEqual(watch.problems(), [], `${what}: console errors, failed requests or error responses`);
}

test.before(async (t) => {
  await ensureWebBuilt();
  t.context.browser = await launchBrowser();
});

test.after.always(async (t) => {
  await t.context.browser?.close();
});

test('the console shows every page at 375 px with a title, landmarks and no console errors or failed requests, and is keyboard usable', async (t) => {
  const { plane, config } = await startApps(t);
  // An app whose spec has an error: its page shows the finding as file:line:col.
  fs.mkdirSync(path.join(config.appsDir, 'broken'));
  fs.writeFileSync(
    path.join(config.appsDir, 'broken', 'infraspec.yaml'),
    'name: broken\ndeploy: true\nprocesses:\n  web:\n    port: 99999\n',
  );
  await waitForReconciled([plane.reconcilers.specController], () => getApp(plane.db, 'broken') !== undefined, {
    what: 'broken app discovered',
  });
  const { page, watch } = await newPage(t, t.context.browser, { width: 375 });
  const pages: [string, string, RegExp][] = [
    ['/', 'Apps · svc console', /hello/],
    ['/ui/apps/hello', 'hello · svc console', /Processes and allocations/],
    [
      '/ui/apps/broken',
      'broken · svc console',
      /broken\/infraspec\.yaml:5:11\s+error\s+schema\.maximum processes\.web\.port: 99999 is above the maximum of 65535/,
    ],
    ['/ui/inbox', 'Inbox · svc console', /Incidents/],
    ['/ui/events', 'Events and incidents · svc console', /Recent events/],
    ['/ui/operations', 'Operations · svc console', /Drain/],
    ['/ui/routing', 'Routing · svc console', /Tunnel ingress/],
    ['/ui/platform', 'Platform · svc console', /Production readiness/],
  ];
  let loaded: { bytes: number; files: number } | undefined;
  for (const [path, title, content] of pages) {
    await page.goto(`${plane.url}${path}`);
    await settled(page);
    loaded ??= await page.evaluate(firstLoad);
    t.is(await page.title(), title, path);
    t.regex(await page.locator('main').innerText(), content, path);
    t.is(await page.getByRole('banner').count(), 1, `${path}: banner`);
    t.is(await page.getByRole('navigation', { name: 'Main' }).count(), 1, `${path}: navigation`);
    t.is(await page.getByRole('main').count(), 1, `${path}: main`);
    t.is(await page.getByRole('contentinfo').count(), 1, `${path}: contentinfo`);
    t.is(await page.locator('h1').count(), 1, `${path}: one h1`);
    const overflow = await page.evaluate(
      () => Number((globalThis as any).document.documentElement.scrollWidth) - Number((globalThis as any).innerWidth),
    );
    t.true(overflow <= 0, `${path} is ${overflow}px wider than the 375 px screen`);
  }
  t.truthy(loaded);
  t.log(`console first load: ${loaded!.bytes} bytes transferred in ${loaded!.files} files (document, script, style)`);
  t.true(loaded!.bytes < 300_000, `first load transferred ${loaded!.bytes} bytes`);

  // repo.repoWeb: the app page links the commit it runs, its release tree and the spec file.
  const commit = getApp(plane.db, 'hello')!.release!.commit;
  await page.goto(`${plane.url}/ui/apps/hello`);
  await settled(page);
  t.is(await page.locator('a.commit-link').getAttribute('href'), `https://git.example.test/hello/commit/${commit}`);
  t.is(await page.locator('a.release-link').getAttribute('href'), `https://git.example.test/hello/tree/${commit}`);
  t.is(
    await page.locator('#app-settings + * a.spec-file-link').getAttribute('href'),
    `https://git.example.test/hello/blob/${commit}/infraspec.yaml`,
  );
  t.is(await page.locator('a.repository-link').getAttribute('href'), 'https://git.example.test/hello');
  // An app without repoWeb shows its commit without links.
  await page.goto(`${plane.url}/ui/apps/greeter`);
  await settled(page);
  t.is(await page.locator('a.commit-link').count(), 0);

  // Keyboard: the skip link comes first, then the navigation; Enter follows a link in place.
  await page.goto(`${plane.url}/`);
  await settled(page);
  await page.keyboard.press('Tab');
  t.is(await page.evaluate(activeText), 'Skip to content');
  await page.keyboard.press('Tab');
  await page.keyboard.press('Tab');
  t.is(await page.evaluate(activeText), 'Inbox');
  await page.keyboard.press('Enter');
  await page.waitForFunction(() => (globalThis as any).document.title === 'Inbox · svc console');
  t.is(new URL(page.url()).pathname, '/ui/inbox');
  // A high-risk action's confirmation opens and closes by keyboard, sending nothing.
  await page.goto(`${plane.url}/ui/apps/hello`);
  await settled(page);
  await page.getByRole('button', { name: 'Deploy', exact: true }).focus();
  await page.keyboard.press('Enter');
  const dialog = page.getByRole('dialog');
  await dialog.waitFor();
  t.regex(await dialog.innerText(), /Deploy hello at the given ref/);
  await page.keyboard.press('Escape');
  await dialog.waitFor({ state: 'hidden' });
  t.is(
    (await request(`${plane.url}/api/v1/deployments?app=hello`)).body.deployments.length,
    0,
    'a cancelled confirmation deploys nothing',
  );
  noProblems(t, watch, 'pages');
});

test('a deploy from the console shows its steps arriving live, and an incident is acknowledged from the console', async (t) => {
  const { plane } = await startApps(t);
  const { page, watch } = await newPage(t, t.context.browser);
  const frames: string[] = [];
  page.on('websocket', (ws) => ws.on('framereceived', (frame) => frames.push(String(frame.payload))));
  await page.goto(`${plane.url}/ui/apps/greeter`);
  await settled(page);
  await page.getByText('live', { exact: true }).waitFor();
  t.regex(await page.locator('#app-deployments + *').innerText(), /No deployments yet/);

  await page.getByRole('button', { name: 'Deploy', exact: true }).click();
  const dialog = page.getByRole('dialog');
  t.regex(
    await dialog.innerText(),
    /Deploy greeter at the given ref \(default HEAD\)\? Running processes are replaced\./,
  );
  await dialog.getByRole('button', { name: 'Confirm' }).click();
  const queued = await page.getByRole('status').filter({ hasText: 'Queued operation' }).innerText();
  t.regex(queued, /Queued operation op_\w+ \(app\.deploy, queued\) for deployment dep_\w+/);

  // Steps appear while the deployment still runs, then it finishes.
  await page.locator('[data-deployment][data-status="running"] [data-step]').first().waitFor({ timeout: 30_000 });
  const whileRunning = await page.locator('[data-status="running"] [data-step]').count();
  await page.locator('[data-deployment][data-status="succeeded"]').waitFor({ timeout: 90_000 });
  const steps = await page
    .locator('[data-step]')
    .evaluateAll((items) =>
      items.map((li) => `${li.getAttribute('data-step')}:${li.getAttribute('data-step-status')}`),
    );
  t.log(`steps seen while running: ${whileRunning}; at the end: ${steps.join(' ')}`);
  t.true(whileRunning >= 1 && whileRunning < steps.length, 'steps arrived one by one');
  for (const step of [
    'clone:succeeded',
    'build:succeeded',
    'submit:succeeded',
    'healthy:succeeded',
    'cleanup:succeeded',
  ])
    t.true(steps.includes(step), step);
  // The stream carried the deploy's event; the page reloaded the app from it.
  await page.waitForFunction(
    () =>
      String((globalThis as any).document.querySelector('#app-conditions + *')?.textContent ?? '').includes(
        'JobsSubmitted',
      ),
    undefined,
    { timeout: 30_000 },
  );
  t.true(
    frames.some((f) => f.includes('"deploy.succeeded"') && f.includes('"greeter"')),
    'deploy.succeeded arrived on the event stream',
  );

  // An incident recorded elsewhere appears live and is acknowledged from the console.
  await page.getByRole('link', { name: 'Events' }).click();
  await settled(page);
  const recorded = await request(`${plane.url}/api/events`, {
    method: 'POST',
    json: {
      type: 'disk.full',
      severity: 'critical',
      app: 'greeter',
      source: 'console-test',
      title: 'Disk of greeter is full',
    },
  });
  t.is(recorded.status, 201, recorded.text);
  const row = page.locator('[data-incident]').filter({ hasText: 'Disk of greeter is full' });
  await row.waitFor();
  await row.getByRole('button', { name: 'Acknowledge' }).click();
  // The acknowledged incident leaves the list; what the action did stays on the page.
  await row.waitFor({ state: 'detached' });
  t.regex(
    await page.getByRole('status').filter({ hasText: 'acknowledge' }).innerText(),
    /Done: acknowledge matched 1 event\(s\), 1 changed\./,
  );
  const event = (await request(`${plane.url}/api/events/${recorded.body.event.id}`)).body;
  t.like(event.acknowledgement, { by: 'console' });
  noProblems(t, watch, 'deploy and acknowledge');
});

test('with SVC_API_TOKEN set the console shows a sign-in prompt and no data until a valid token is entered', async (t) => {
  const token = 'console-token-4b1d';
  const { plane } = await startApps(t, { SVC_API_TOKEN: token });
  const { page, watch } = await newPage(t, t.context.browser, { width: 375 });
  const sockets: string[] = [];
  page.on('websocket', (ws) => sockets.push(ws.url()));
  const apiBodies: { url: string; status: number; text: string }[] = [];
  page.on('response', (response) => {
    if (new URL(response.url()).pathname.startsWith('/api/'))
      void response.text().then(
        (text) => apiBodies.push({ url: response.url(), status: response.status(), text }),
        () => undefined,
      );
  });
  await page.goto(`${plane.url}/ui/apps`);
  await page.getByRole('heading', { name: 'Sign in' }).waitFor();
  t.is(await page.title(), 'Sign in · svc console');
  const before = apiBodies.length;
  t.true(
    apiBodies.every((r) => r.status === 401),
    JSON.stringify(apiBodies),
  );
  t.false(
    apiBodies.some((r) => /hello|greeter/.test(r.text)),
    'no app data before signing in',
  );
  t.deepEqual(sockets, [], 'no event stream before signing in');
  t.is(await page.locator('text=greeter').count(), 0);

  await page.getByLabel('Access token').fill('wrong-token');
  await page.getByRole('button', { name: 'Sign in' }).click();
  await page.getByText('The token was not accepted').waitFor();
  t.true(apiBodies.slice(before).every((r) => r.status === 401));

  await page.getByLabel('Access token').fill(token);
  await page.keyboard.press('Enter');
  await page.locator('[data-app="greeter"]').waitFor();
  await page.getByText('live', { exact: true }).waitFor();
  t.is(sockets.length, 1);
  t.false(sockets[0]!.includes(token), 'the token is not in the stream URL');
  t.false(
    watch.responses.some((r) => r.url.includes(token)),
    'the token is in no URL',
  );
  t.is(await page.evaluate(() => Number((globalThis as any).localStorage.length)), 0, 'nothing in local storage');
  t.is(await page.evaluate(() => (globalThis as any).sessionStorage.getItem('svc.console.token') as string), token);
  // The only failures are the refused calls before signing in.
  t.deepEqual(
    watch.problems((p) => / 401\b|status of 401/.test(p)),
    [],
  );
});
