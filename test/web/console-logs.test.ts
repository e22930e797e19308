// tier: full
/**
 * The app page's log view in a real browser (Chromium through playwright-core) against a real
 * control plane running a real app: lines arrive live, the search box narrows them, the process
 * filter and time range apply, with no console error or failed request. With SVC_LOGS_SCREENSHOT set it
 * also writes a PNG of the log view there (docs/screenshots/app-logs.png, shown in the guide); the suite
 * never writes into the checkout (ADR 0226).
 */
import path from 'node:path';
import anyTest, { type TestFn } from 'ava';
import type { Browser } from 'playwright-core';
import { launchBrowser, newPage } from '../helpers/browser.js';
import { startPlaneWithApps } from '../helpers/plane-with-apps.js';
import { ensureWebBuilt } from '../helpers/web-build.js';

const test = anyTest as TestFn<{ browser: Browser }>;

/** Logs a JSON line per tick (a pretend request) and a warning on stderr every fourth. */
const SERVER = `import http from 'node:http';
let n = 0;
const paths = ['/', '/healthz', '/api/orders', '/api/users'];
setInterval(() => {
  n += 1;
  console.log(JSON.stringify({ msg: 'request', method: 'GET', path: paths[n % 4], status: 200, ms: (n % 7) + 0.4 }));
  if (n % 4 === 0) console.error('slow upstream: orders took ' + (200 + n) + 'ms');
}, 100);
const server = http.createServer((req, res) => res.end('ok'));
server.listen(Number(process.env.PORT), '127.0.0.1');
process.on('SIGTERM', () => { server.close(); process.exit(0); });
`;

test.before(async (t) => {
  await ensureWebBuilt();
  t.context.browser = await launchBrowser();
});

test.after.always(async (t) => {
  await t.context.browser?.close();
});

test('the app page log view follows lines live, searches them and filters by process and time range', async (t) => {
  const { plane } = await startPlaneWithApps(t, {
    server: SERVER,
    apps: [{ name: 'shop', spec: 'name: shop\ndeploy: true\nprocesses:\n  web:\n    port: 8080\n' }],
  });
  const { page, watch } = await newPage(t, t.context.browser, { width: 1000 });
  await page.goto(`${plane.url}/ui/apps/shop`);
  const view = page.getByRole('log');
  // Live: lines keep arriving while the page is open.
  await view.locator('.log-line').nth(3).waitFor({ timeout: 20_000 });
  const count = await view.locator('.log-line').count();
  await view
    .locator('.log-line')
    .nth(count + 2)
    .waitFor({ timeout: 20_000 });
  t.regex(await view.locator('.log-line').first().innerText(), /web\.[0-9a-f]{8} /);
  // Search narrows to matching lines, and new matching lines still arrive.
  await page.getByRole('searchbox').fill('slow upstream');
  await page.getByRole('button', { name: 'Search' }).click();
  await page.waitForFunction(() => {
    const lines = [...(globalThis as any).document.querySelectorAll('.log-line')] as any[];
    return lines.length >= 2 && lines.every((l) => String(l.textContent).includes('slow upstream'));
  });
  t.true(await view.locator('.log-line.stderr').first().isVisible());
  // The process filter lists the app's processes; a time range applies.
  await page.locator('select[name="process"]').selectOption('web');
  await page.locator('select[name="since"]').selectOption('5m');
  await page.getByRole('searchbox').fill('');
  await page.getByRole('button', { name: 'Search' }).click();
  await page.waitForFunction(
    () =>
      [...(globalThis as any).document.querySelectorAll('.log-line')].filter((l: any) =>
        String(l.textContent).includes('"msg":"request"'),
      ).length >= 5,
  );
  await page.getByRole('heading', { name: 'Logs' }).scrollIntoViewIfNeeded();
  if (process.env.SVC_LOGS_SCREENSHOT)
    await page
      .locator('section[aria-labelledby="app-logs"]')
      .screenshot({ path: path.resolve(process.env.SVC_LOGS_SCREENSHOT) });
  t.deepEqual(watch.problems(), []);
});
