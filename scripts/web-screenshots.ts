/**
 * Screenshots of the web pages for the docs: opens the console and the knowledge admin dashboard
 * of a running platform in Chromium and writes PNGs into docs/screenshots/.
 *
 *   node --import tsx scripts/web-screenshots.ts [control URL] [knowledge admin URL]
 *
 * Defaults: http://127.0.0.1:8800 and http://127.0.0.1:7702 (an `npm start` with the sample apps
 * deployed). Set SVC_API_TOKEN to sign the console in.
 */
import fs from 'node:fs';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { chromium, type Page } from 'playwright-core';

const ROOT = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '..');
const OUT = path.join(ROOT, 'docs', 'screenshots');
const control = process.argv[2] ?? 'http://127.0.0.1:8800';
const admin = process.argv[3] ?? 'http://127.0.0.1:7702';

async function settle(page: Page): Promise<void> {
  await page.waitForFunction(() => !String((globalThis as any).document.body.innerText).includes('Loading…'));
  await page.waitForTimeout(500);
}

async function shoot(page: Page, url: string, file: string, prepare?: (page: Page) => Promise<void>): Promise<void> {
  await page.goto(url);
  await settle(page);
  await prepare?.(page);
  await page.screenshot({ path: path.join(OUT, file), fullPage: false });
  process.stdout.write(`${path.relative(ROOT, path.join(OUT, file))}\n`);
}

fs.mkdirSync(OUT, { recursive: true });
const browser = await chromium.launch({
  executablePath: '/usr/bin/chromium',
  headless: true,
  args: [
    '--no-sandbox',
    '--disable-gpu',
    '--no-first-run',
    '--disable-background-networking',
    '--disable-component-update',
    '--disable-sync',
  ],
});
try {
  const context = await browser.newContext({ viewport: { width: 1100, height: 760 }, deviceScaleFactor: 1 });
  const page = await context.newPage();
  const token = process.env.SVC_API_TOKEN;
  if (token !== undefined)
    await page.addInitScript(
      (value: string) => (globalThis as any).sessionStorage.setItem('svc.console.token', value),
      token,
    );
  const apps = (await (
    await fetch(`${control}/api/apps`, { headers: token ? { authorization: `Bearer ${token}` } : {} })
  ).json()) as { apps: { name: string }[] };
  const first = apps.apps[0]?.name;
  if (first !== undefined) await shoot(page, `${control}/ui/apps/${first}`, 'console-app.png');
  await shoot(page, `${admin}/`, 'knowledge-admin.png');
  await shoot(page, `${admin}/`, 'knowledge-debugger.png', async (p) => {
    const section = p.locator('#debugger');
    await section.getByLabel('Namespace').fill('default');
    await section.getByRole('button', { name: 'Search' }).click();
    await p.locator('[data-search-result]').first().getByRole('button', { name: 'Inspect' }).click();
    await p.locator('[data-node] [data-version]').first().waitFor();
    await section.scrollIntoViewIfNeeded();
    await p.locator('#debugger h2').evaluate((h: any) => h.scrollIntoView());
  });
  const phone = await browser.newContext({ viewport: { width: 375, height: 740 }, deviceScaleFactor: 1 });
  const small = await phone.newPage();
  if (token !== undefined)
    await small.addInitScript(
      (value: string) => (globalThis as any).sessionStorage.setItem('svc.console.token', value),
      token,
    );
  await shoot(small, `${control}/ui/events`, 'console-phone-events.png');
} finally {
  await browser.close();
}
