/**
 * Where the built web pages live: `dist/web/<page>` under the package root, written by
 * `npm run build` (scripts/build-web.ts, docs/adr/0130).
 */
import path from 'node:path';
import { packageRoot } from './build-info.js';

/** The two pages: the operator console (8800) and the knowledge admin dashboard (7702). */
export type WebPageName = 'console' | 'knowledge-admin';

/** The folder of a built page (it may not exist yet: the server then answers 503 `web_not_built`). */
export function builtWebPage(name: WebPageName): string {
  return path.join(packageRoot(), 'dist', 'web', name);
}
