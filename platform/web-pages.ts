/**
 * Where the built web pages live: `dist/web/<page>` under the package root, written by
 * `npm run build` (scripts/build-web.ts, docs/adr/0130), carried as `share/web/` by the release
 * artifact (docs/adr/0140).
 */
import path from 'node:path';
import { packageRoot, releaseFolder } from './build-info.js';

/** The two pages: the operator console (8800) and the knowledge admin dashboard (7702). */
export type WebPageName = 'console' | 'knowledge-admin';

/**
 * The folder of a built page (it may not exist yet: the server then answers 503 `web_not_built`):
 * `share/web/<page>` beside the release artifact's executable (scripts/package/release-parts.cts),
 * else `dist/web/<page>` in the checkout.
 */
export function builtWebPage(name: WebPageName): string {
  const release = releaseFolder();
  if (release !== undefined) return path.join(release, 'share', 'web', name);
  return path.join(packageRoot(), 'dist', 'web', name);
}
