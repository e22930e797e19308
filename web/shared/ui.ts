/**
 * Small presentational pieces shared by both pages: status badges, error notes, loading states and
 * the page frame with its landmarks (skip link, banner, navigation, main, footer).
 */
import type { ComponentChildren } from 'preact';
import { html } from './html.js';
import type { Resource } from './resource.js';

const TONE: Record<string, string> = {
  True: 'ok',
  passing: 'ok',
  succeeded: 'ok',
  running: 'ok',
  ready: 'ok',
  pass: 'ok',
  healthy: 'ok',
  ok: 'ok',
  high: 'ok',
  scheduled: 'ok',
  False: 'bad',
  critical: 'bad',
  failed: 'bad',
  fail: 'bad',
  error: 'bad',
  degraded: 'bad',
  low: 'bad',
  rolled_back: 'bad',
  unhealthy: 'bad',
  warning: 'warn',
  starting: 'warn',
  Unknown: 'warn',
  queued: 'warn',
  medium: 'warn',
  watch: 'warn',
  skipped: 'muted',
  paused: 'warn',
  acknowledged: 'muted',
  snoozed: 'muted',
};

/** A coloured word: the tone comes from the value (passing is green, critical red, ...). */
export function Badge(props: { value: string | null | undefined; label?: string }) {
  const value = props.value ?? 'unknown';
  return html`<span class=${`badge ${TONE[value] ?? 'muted'}`}>${props.label ?? value}</span>`;
}

/** The error of a failed load, or nothing. */
export function ErrorNote(props: { error: Error | undefined }) {
  if (props.error === undefined) return null;
  const code = (props.error as { code?: string }).code;
  return html`<p role="alert" class="error">${props.error.message}${code ? html` <code>${code}</code>` : null}</p>`;
}

/** Renders `children(data)` once the resource has data; a loading line and the error otherwise. */
export function Loaded<T>(props: { resource: Resource<T>; children: (data: T) => ComponentChildren }) {
  const { data, error, loading } = props.resource;
  return html`
    <${ErrorNote} error=${error} />
    ${data === undefined ? (loading ? html`<p class="muted" aria-live="polite">Loading…</p>` : null) : props.children(data)}`;
}

/** One navigation link. */
export interface NavLink {
  readonly href: string;
  readonly label: string;
}

/** The page frame: skip link, banner with the navigation, main content, footer. */
export function Frame(props: {
  product: string;
  nav: readonly NavLink[];
  current: string;
  onNavigate?: (href: string, event: MouseEvent) => void;
  footer?: ComponentChildren;
  children: ComponentChildren;
}) {
  return html`
    <a class="skip" href="#main">Skip to content</a>
    <header class="banner">
      <span class="product">${props.product}</span>
      <nav aria-label="Main">
        <ul>
          ${props.nav.map(
            (link) => html`<li><a href=${link.href} aria-current=${props.current === link.href ? 'page' : undefined}
            onClick=${(e: MouseEvent) => props.onNavigate?.(link.href, e)}>${link.label}</a></li>`,
          )}
        </ul>
      </nav>
    </header>
    <main id="main" tabindex="-1">${props.children}</main>
    <footer class="footer">${props.footer}</footer>`;
}
