/**
 * The built web pages for tests: scripts/test.sh builds `dist/web` before the suite; a test file
 * run on its own builds it when it is missing.
 */
import fs from 'node:fs';
import path from 'node:path';
import { builtWebPage } from '../../platform/web-pages.js';
import { buildWeb } from '../../scripts/build-web.js';

/** Builds `dist/web` unless both pages are there. */
export async function ensureWebBuilt(): Promise<void> {
  const missing = (['console', 'knowledge-admin'] as const).some(
    (page) => !fs.existsSync(path.join(builtWebPage(page), 'index.html')),
  );
  if (missing) await buildWeb();
}
