/**
 * Chromium (the Debian package) driven by playwright-core for the web page tests: one browser per
 * test file, a fresh context (own storage) per test, and a watcher that records console errors,
 * page errors, failed requests and error responses so a test can assert there were none.
 */
import fs from 'node:fs';
import type { ExecutionContext } from 'ava';
import { chromium, type Browser, type BrowserContext, type Page } from 'playwright-core';

/** Where scripts/ensure-deps.sh installs Chromium. */
export const CHROMIUM = '/usr/bin/chromium';

/** The flags the browser tests run Chromium with (playwright adds a fresh temporary profile). */
export const CHROMIUM_ARGS: readonly string[] = [
  '--headless',
  '--no-sandbox',
  '--disable-gpu',
  '--disable-quic',
  '--no-first-run',
  '--disable-background-networking',
  '--disable-component-update',
  '--disable-sync',
  '--disable-dev-shm-usage',
];

/** True when Chromium is installed (scripts/ensure-deps.sh installs it). */
export function chromiumInstalled(): boolean {
  return fs.existsSync(CHROMIUM);
}

/** Launches Chromium headless with a fresh profile. */
export async function launchBrowser(): Promise<Browser> {
  return chromium.launch({ executablePath: CHROMIUM, headless: true, args: [...CHROMIUM_ARGS], timeout: 60_000 });
}

/** A new context at `width` x 800 (the phone width is 375), closed when the test ends. */
export async function newPage(
  t: ExecutionContext,
  browser: Browser,
  options: { width?: number; baseURL?: string } = {},
): Promise<{ context: BrowserContext; page: Page; watch: PageWatch }> {
  const context = await browser.newContext({
    viewport: { width: options.width ?? 1280, height: 800 },
    ...(options.baseURL ? { baseURL: options.baseURL } : {}),
  });
  t.teardown(() => context.close());
  const page = await context.newPage();
  page.setDefaultTimeout(20_000);
  return { context, page, watch: watchPage(page) };
}

/** What went wrong on a page, as the browser saw it. */
export interface PageWatch {
  /** Console errors, uncaught page errors, failed requests and 4xx/5xx responses (minus `allowed`). */
  problems(allowed?: (problem: string) => boolean): string[];
  /** Every response the page received: URL and status. */
  readonly responses: { url: string; status: number; body?: string }[];
}

/** Starts recording a page's problems. */
export function watchPage(page: Page): PageWatch {
  const problems: string[] = [];
  const responses: { url: string; status: number }[] = [];
  page.on('console', (message) => {
    if (message.type() === 'error') problems.push(`console error: ${message.text()}`);
  });
  page.on('pageerror', (error) => problems.push(`page error: ${error.message}`));
  page.on('requestfailed', (request) => {
    // Navigations away abort in-flight reads; those are not failures of the page.
    if (request.failure()?.errorText === 'net::ERR_ABORTED') return;
    problems.push(`request failed: ${request.method()} ${request.url()} ${request.failure()?.errorText ?? ''}`);
  });
  page.on('response', (response) => {
    responses.push({ url: response.url(), status: response.status() });
    if (response.status() >= 400)
      problems.push(`HTTP ${response.status()}: ${response.request().method()} ${response.url()}`);
  });
  return {
    responses,
    problems: (allowed = () => false) => problems.filter((p) => !allowed(p)),
  };
}
