// tier: full
/**
 * The knowledge store's admin dashboard in a real browser (Debian's Chromium, playwright-core)
 * against a real store: health, ranking evaluation, latency per retrieval path, a namespace
 * evaluation, the belief debugger from search to explain-rank, at phone width, without console
 * errors or failed requests; and with tenant tokens, the sign-in prompt before any data.
 */
import anyTest, { type TestFn } from 'ava';
import type { Browser, Page } from 'playwright-core';
import { launchBrowser, newPage } from '../helpers/browser.js';
import { ensureWebBuilt } from '../helpers/web-build.js';
import { startHarness } from '../knowledge/knowledge-harness.js';

const test = anyTest as TestFn<{ browser: Browser }>;

async function settled(page: Page): Promise<void> {
  await page.waitForFunction(
    () =>
      !String((globalThis as any).document.body.innerText).includes('Loading…') &&
      !String((globalThis as any).document.body.innerText).includes('Connecting…'),
  );
}

test.before(async (t) => {
  await ensureWebBuilt();
  t.context.browser = await launchBrowser();
});

test.after.always(async (t) => {
  await t.context.browser?.close();
});

test('the admin dashboard shows health, ranking, latency per path and a namespace evaluation, and the belief debugger inspects a node from search to explain-rank', async (t) => {
  const h = await startHarness(t);
  const billing = await h.write('ops', {
    content: 'The billing service listens on port 8080',
    labels: ['billing'],
    source_id: 'wiki',
  });
  const search = await h.write('ops', {
    content: 'The search service listens on port 9200',
    labels: ['search'],
    source_id: 'runbook',
  });
  t.is(
    (await h.call('POST', `/v1/namespaces/ops/nodes/${billing.node_id}/validate`, { reason: 'checked by ops' })).status,
    200,
  );
  for (const text of ['billing port', 'search service', 'port']) await h.retrieve('ops', { text });

  const { page, watch } = await newPage(t, t.context.browser, { width: 375 });
  await page.goto(`${h.store.adminUrl}/`);
  await page.getByRole('heading', { name: 'Knowledge store' }).waitFor();
  await settled(page);
  t.is(await page.title(), 'svc knowledge admin');
  for (const role of ['banner', 'main', 'contentinfo'] as const) t.is(await page.getByRole(role).count(), 1, role);
  t.is(await page.getByRole('navigation', { name: 'Main' }).count(), 1);
  t.regex(await page.locator('#health').innerText(), /Listener\s+ok/);
  t.regex(await page.locator('#ranking').innerText(), /6\/6\s+queries passed/);
  // Latency: every path row either has numbers or says "no data"; the retrievals above gave one numbers.
  await page.locator('tr[data-path] td', { hasText: /^\d/ }).first().waitFor();
  const latency = await page.locator('tr[data-path]').allInnerTexts();
  t.log(`latency rows: ${latency.map((r) => r.replace(/\s+/g, ' ')).join(' | ')}`);
  t.true(latency.every((row) => /(\d|no data)/.test(row)));

  await page.locator('#ranking').getByLabel('Namespace').fill('ops');
  await page.getByRole('button', { name: 'Evaluate' }).click();
  t.regex(await page.getByLabel('Namespace evaluation').innerText(), /2\s+nodes probed[\s\S]*2\/2\s+first/);

  // The belief debugger: search, inspect, versions, sources, feedback, scores, explain-rank.
  const debuggerSection = page.locator('#debugger');
  await debuggerSection.getByLabel('Namespace').fill('ops');
  await debuggerSection.getByLabel('Text, source id or node id').fill('port');
  await debuggerSection.getByRole('button', { name: 'Search' }).click();
  const row = page.locator(`[data-search-result="${billing.node_id}"]`);
  await row.waitFor();
  t.is(await page.locator('[data-search-result]').count(), 2);
  await row.getByRole('button', { name: 'Inspect' }).click();
  const card = page.locator(`[data-node="${billing.node_id}"]`);
  await card.waitFor();
  await card.locator('[data-version="2"]').waitFor();
  t.regex(await card.innerText(), /The billing service listens on port 8080/);
  t.regex(await card.innerText(), /wiki credibility/);
  await card.getByText('checked by ops').waitFor();
  await card.getByRole('button', { name: 'Score' }).click();
  await card.locator(`[data-result="${billing.node_id}"]`).waitFor();
  t.regex(await card.locator(`[data-result="${billing.node_id}"]`).innerText(), /this node/);
  t.is(await card.getByLabel('Other node id').inputValue(), search.node_id, 'the other search result is offered');
  await card.getByRole('button', { name: 'Explain' }).click();
  const explained = await card.getByLabel('Explain-rank answer').innerText();
  t.true(explained.includes(billing.node_id) && explained.includes(search.node_id), explained.slice(0, 300));

  const overflow = await page.evaluate(
    () => Number((globalThis as any).document.documentElement.scrollWidth) - Number((globalThis as any).innerWidth),
  );
  t.true(overflow <= 0, `the dashboard is ${overflow}px wider than the 375 px screen`);
  t.deepEqual(watch.problems(), []);
});

test('with tenant tokens the admin dashboard asks for an admin token before showing any data', async (t) => {
  const admin = 'team:admin:admin-secret-1';
  const h = await startHarness(t, { SVC_KNOWLEDGE_TOKENS: `${admin},team:read:reader-secret-1` });
  const { page, watch } = await newPage(t, t.context.browser);
  const adminCalls: { path: string; status: number }[] = [];
  page.on('response', (r) => {
    const path = new URL(r.url()).pathname;
    if (path.startsWith('/admin/') || path === '/metrics') adminCalls.push({ path, status: r.status() });
  });
  await page.goto(`${h.store.adminUrl}/`);
  await page.getByRole('heading', { name: 'Sign in' }).waitFor();
  t.deepEqual(adminCalls, [{ path: '/admin/api/stats', status: 401 }], 'one refused probe, nothing else');
  await page.getByLabel('Access token').fill('team:read:reader-secret-1');
  await page.getByRole('button', { name: 'Sign in' }).click();
  await page.getByRole('alert').filter({ hasText: 'lacks the permission' }).waitFor();
  t.false(
    adminCalls.some((c) => c.status === 200),
    'a read token sees nothing',
  );
  await page.getByLabel('Access token').fill(admin);
  await page.keyboard.press('Enter');
  await page.getByRole('heading', { name: 'Knowledge store' }).waitFor();
  await settled(page);
  t.regex(await page.locator('#ranking').innerText(), /queries passed/);
  t.deepEqual(
    watch.problems((p) => /\b40[13]\b/.test(p)),
    [],
  );
});
