/**
 * Serves one built web page (the operator console on 8800, the knowledge admin dashboard on 7702):
 * its `index.html` at `/` and every `/ui/...` path (the page routes itself), and its assets under
 * `/ui/assets/` (docs/adr/0130).
 *
 * Assets have content hashes in their names, so they are cached for a year as `immutable`; the
 * document is `no-cache` (revalidated with its ETag-like Last-Modified), so a new build is picked up
 * at the next load. Every answer carries a strict Content-Security-Policy: scripts, styles and
 * connections only from this origin, no inline script, no eval, no framing. The page holds no data:
 * the routes it calls are protected like any other API route.
 */
import fs from 'node:fs';
import path from 'node:path';
import { send } from '@koa/send';
import type { Context, Middleware, Next } from 'koa';
import { NotFoundError, UnavailableError } from '../../domain/errors.js';

/** Where the built pages are served from. */
export const WEB_ASSET_PREFIX = '/ui/assets/';

/** The Content-Security-Policy of the pages: same origin only, no inline script or eval. */
export const WEB_CONTENT_SECURITY_POLICY = [
  "default-src 'none'",
  "script-src 'self'",
  "style-src 'self'",
  "img-src 'self' data:",
  "font-src 'self'",
  "connect-src 'self'",
  "manifest-src 'self'",
  "base-uri 'none'",
  "form-action 'self'",
  "frame-ancestors 'none'",
].join('; ');

const YEAR_MS = 365 * 24 * 3600 * 1000;

/** True for the paths the page answers: `/`, `/ui` and everything under `/ui/`. */
export function isWebPagePath(p: string): boolean {
  return p === '/' || p === '/ui' || p.startsWith('/ui/');
}

export interface WebPagesOptions {
  /** The built page's folder (`dist/web/<page>`), holding `index.html` and `assets/`. */
  readonly root: string;
}

function securityHeaders(ctx: Context): void {
  ctx.set('Content-Security-Policy', WEB_CONTENT_SECURITY_POLICY);
  ctx.set('X-Content-Type-Options', 'nosniff');
  ctx.set('Referrer-Policy', 'no-referrer');
  ctx.set('X-Frame-Options', 'DENY');
  ctx.set('Cross-Origin-Opener-Policy', 'same-origin');
}

/** Middleware answering GET and HEAD of the page's paths; other requests pass on. */
export function webPages(options: WebPagesOptions): Middleware {
  const root = path.resolve(options.root);
  const assets = path.join(root, 'assets');
  return async (ctx: Context, next: Next) => {
    if ((ctx.method !== 'GET' && ctx.method !== 'HEAD') || !isWebPagePath(ctx.path)) return next();
    if (!fs.existsSync(path.join(root, 'index.html'))) {
      throw new UnavailableError('the web pages are not built: run `npm run build`', { code: 'web_not_built' });
    }
    securityHeaders(ctx);
    if (ctx.path.startsWith(WEB_ASSET_PREFIX)) {
      const file = ctx.path.slice(WEB_ASSET_PREFIX.length);
      // Only flat, hashed file names: no folders, no dot files.
      if (!/^[A-Za-z0-9_-]+-[A-Za-z0-9]{6,}\.(js|css|svg|woff2)$/.test(file)) {
        throw new NotFoundError('no such asset', { code: 'asset_not_found' });
      }
      // The compressed copy depends on Accept-Encoding: shared caches must keep them apart.
      ctx.vary('Accept-Encoding');
      await send(ctx, file, {
        root: assets,
        maxage: YEAR_MS,
        immutable: true,
        brotli: true,
        gzip: true,
        hidden: false,
        index: false,
      });
      return;
    }
    await send(ctx, 'index.html', {
      root,
      index: false,
      setHeaders: (res) => res.setHeader('Cache-Control', 'no-cache'),
    });
  };
}
