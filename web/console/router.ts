/**
 * The console's client-side routes under `/ui/...` (the server answers every one with the same
 * page): the current path as state, and navigation by the History API.
 */
import { useEffect, useState } from 'preact/hooks';

const listeners = new Set<(path: string) => void>();

/** Goes to `href` without reloading the page. */
export function navigate(href: string): void {
  if (href === location.pathname + location.search) return;
  history.pushState(null, '', href);
  for (const listener of listeners) listener(location.pathname);
}

/** A click handler for in-page links: a plain click navigates in place, modified clicks open as usual. */
export function linkClick(href: string, event: MouseEvent): void {
  if (event.defaultPrevented || event.button !== 0 || event.metaKey || event.ctrlKey || event.shiftKey || event.altKey)
    return;
  event.preventDefault();
  navigate(href);
  document.getElementById('main')?.focus();
}

/** The current path, updated on navigation and on back and forward. */
export function usePath(): string {
  const [path, setPath] = useState(location.pathname);
  useEffect(() => {
    const onPop = () => setPath(location.pathname);
    listeners.add(setPath);
    addEventListener('popstate', onPop);
    return () => {
      listeners.delete(setPath);
      removeEventListener('popstate', onPop);
    };
  }, []);
  return path;
}

/** A page of the console matched from a path. */
export type Route =
  | { readonly page: 'apps' }
  | { readonly page: 'app'; readonly app: string }
  | { readonly page: 'inbox' | 'events' | 'operations' | 'routing' | 'platform' }
  | { readonly page: 'not-found' };

/** Matches a path to a page. */
export function matchRoute(path: string): Route {
  const clean = path.replace(/\/+$/, '') || '/';
  if (clean === '/' || clean === '/ui' || clean === '/ui/apps') return { page: 'apps' };
  const app = /^\/ui\/apps\/([^/]+)$/.exec(clean);
  if (app?.[1] !== undefined) return { page: 'app', app: decodeURIComponent(app[1]) };
  const simple = /^\/ui\/(inbox|events|operations|routing|platform)$/.exec(clean);
  if (simple?.[1] !== undefined) return { page: simple[1] as 'inbox' };
  return { page: 'not-found' };
}
