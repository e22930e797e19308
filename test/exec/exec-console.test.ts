// tier: full
/**
 * The console's terminal in real Chromium against a real app: open a session on the app page, type
 * into xterm.js, see the remote shell answer as the app's user, resize the window and see the PTY
 * follow, close the session; no console error, no failed request. With SVC_TERMINAL_SCREENSHOT set
 * it also writes a PNG of the terminal there (docs/screenshots/console-terminal.png, shown in the guide).
 */
import fs from 'node:fs';
import anyTest, { type TestFn } from 'ava';
import type { Browser, Page } from 'playwright-core';
import { launchBrowser, newPage } from '../helpers/browser.js';
import { request } from '../helpers/http-request.js';
import { ensureWebBuilt } from '../helpers/web-build.js';
import { startExecPlane } from './exec-harness.js';

const test = anyTest as TestFn<{ browser: Browser }>;

test.before(async (t) => {
  await ensureWebBuilt();
  t.context.browser = await launchBrowser();
});

test.after.always(async (t) => {
  await t.context.browser?.close();
});

/** The text xterm.js shows. */
const screenText = (page: Page) =>
  page.evaluate(() => String((globalThis as any).document.querySelector('.xterm-rows')?.innerText ?? ''));

async function screenShows(page: Page, pattern: RegExp): Promise<string> {
  await page.waitForFunction(
    (source: string) =>
      new RegExp(source).test(String((globalThis as any).document.querySelector('.xterm-rows')?.innerText ?? '')),
    pattern.source,
  );
  return screenText(page);
}

test('the app page opens a terminal: keys reach a shell as the app user, the PTY follows the window, Close ends the session', async (t) => {
  const { plane, pid } = await startExecPlane(t);
  const { page, watch } = await newPage(t, t.context.browser, { width: 1100 });
  await page.goto(`${plane.url}/ui/apps/hello`);
  await page.getByRole('heading', { name: 'Terminal' }).waitFor();
  await page.getByRole('button', { name: 'Open a terminal' }).click();
  await page.getByText('Connected:').waitFor();
  await page.locator('.terminal .xterm').click();
  await page.keyboard.type('echo "uid=$(id -u) user=$(id -un) size=$(stty size)"');
  await page.keyboard.press('Enter');
  const screen = await screenShows(page, /uid=\d+ user=\S+ size=\d+ \d+/);
  const taskUid = fs.readFileSync(`/proc/${pid}/status`, 'utf8').match(/^Uid:\s+(\d+)/m)![1]!;
  t.regex(screen, new RegExp(`uid=${taskUid} `));
  if (process.getuid?.() === 0) t.regex(screen, /user=svc-app-hello/);
  const [, rows, cols] = /size=(\d+) (\d+)/.exec(screen)!.map(Number);
  // Fitted to its box (about 125 columns at this width), not xterm's default 80x24.
  t.true(cols! > 100 && rows! > 10, `terminal ${cols}x${rows}`);

  if (process.env.SVC_TERMINAL_SCREENSHOT)
    await page
      .locator('section[aria-labelledby="app-terminal"]')
      .screenshot({ path: process.env.SVC_TERMINAL_SCREENSHOT });

  // A narrower window: the terminal refits and the remote PTY gets the new size.
  await page.setViewportSize({ width: 600, height: 800 });
  await page.keyboard.type('clear; echo "now=$(stty size)"');
  await page.keyboard.press('Enter');
  const narrower = await screenShows(page, /now=\d+ \d+/);
  const [, , newCols] = /now=(\d+) (\d+)/.exec(narrower)!.map(Number);
  t.true(newCols! < cols!, `columns ${newCols} after the resize, ${cols} before`);

  t.is((await request(`${plane.url}/api/v1/exec-sessions`)).body.sessions.length, 1);
  await page.getByRole('button', { name: 'Close the terminal' }).click();
  await page.getByText(/Session (ended|closed)/).waitFor();
  await page.getByRole('button', { name: 'Open a terminal' }).waitFor();
  t.deepEqual(watch.problems(), []);
});
