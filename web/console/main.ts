/**
 * The operator console (served by the control plane at `/` and `/ui/...`): signs in with the API's
 * bearer token when the API asks for one, then shows apps, the inbox, events and incidents,
 * operations, routing and the platform, live from the event stream (docs/adr/0130).
 */
import { render } from 'preact';
import { useCallback, useEffect, useState } from 'preact/hooks';
import '../shared/base.css';
import { api, onSignInNeeded } from '../shared/api.js';
import { html } from '../shared/html.js';
import { sessionToken, setSessionToken, useSessionKey } from '../shared/session.js';
import { SignIn, type SignInReason } from '../shared/sign-in.js';
import { Badge, ErrorNote, Frame } from '../shared/ui.js';
import { startEventStream, stopEventStream, useStreamStatus } from './event-stream.js';
import { linkClick, matchRoute, usePath } from './router.js';
import { AppsPage } from './pages/apps.js';
import { AppPage } from './pages/app.js';
import { InboxPage } from './pages/inbox.js';
import { EventsPage } from './pages/events.js';
import { OperationsPage } from './pages/operations.js';
import { RoutingPage } from './pages/routing.js';
import { PlatformPage } from './pages/platform.js';

useSessionKey('svc.console.token');

const NAV = [
  { href: '/ui/apps', label: 'Apps' },
  { href: '/ui/inbox', label: 'Inbox' },
  { href: '/ui/events', label: 'Events' },
  { href: '/ui/operations', label: 'Operations' },
  { href: '/ui/routing', label: 'Routing' },
  { href: '/ui/platform', label: 'Platform' },
];

const TITLES: Record<string, string> = {
  apps: 'Apps',
  inbox: 'Inbox',
  events: 'Events and incidents',
  operations: 'Operations',
  routing: 'Routing',
  platform: 'Platform',
  'not-found': 'Not found',
};

type AuthState =
  | { readonly kind: 'checking' }
  | { readonly kind: 'signed-in'; readonly label: string }
  | { readonly kind: 'sign-in'; readonly reason: SignInReason }
  | { readonly kind: 'failed'; readonly error: Error };

function Page() {
  const path = usePath();
  const route = matchRoute(path);
  useEffect(() => {
    if (route.page !== 'app') document.title = `${TITLES[route.page] ?? 'svc'} · svc console`;
  }, [path]);
  switch (route.page) {
    case 'apps':
      return html`<${AppsPage} />`;
    case 'app':
      return html`<${AppPage} key=${route.app} app=${route.app} />`;
    case 'inbox':
      return html`<${InboxPage} />`;
    case 'events':
      return html`<${EventsPage} />`;
    case 'operations':
      return html`<${OperationsPage} />`;
    case 'routing':
      return html`<${RoutingPage} />`;
    case 'platform':
      return html`<${PlatformPage} />`;
    default:
      return html`<h1>Not found</h1><p>No console page at <code>${path}</code>.</p>`;
  }
}

function Footer(props: { label: string; onSignOut: () => void }) {
  const status = useStreamStatus();
  return html`<span>${props.label}</span> · <span aria-live="polite">events <${Badge} value=${status === 'live' ? 'ok' : 'warning'} label=${status} /></span>
    ${sessionToken() !== undefined ? html` · <button type="button" onClick=${props.onSignOut}>Sign out</button>` : null}`;
}

function Console() {
  const [auth, setAuth] = useState<AuthState>({ kind: 'checking' });
  const path = usePath();
  const check = useCallback(() => {
    setAuth({ kind: 'checking' });
    // The first call decides: a 401 shows the sign-in prompt and nothing else is requested.
    api<{ platform: { label: string } }>('/api/ops/platform')
      .then((p) => setAuth({ kind: 'signed-in', label: p.platform.label }))
      .catch((error: Error & { status?: number }) => {
        // 401 already switched to the prompt; a scoped token without access is asked again.
        if (error.status === 403) setAuth({ kind: 'sign-in', reason: 'forbidden' });
        else if (error.status !== 401) setAuth({ kind: 'failed', error });
      });
  }, []);
  useEffect(
    () =>
      onSignInNeeded((reason) => {
        stopEventStream();
        setAuth({ kind: 'sign-in', reason });
      }),
    [],
  );
  useEffect(check, [check]);
  useEffect(() => {
    if (auth.kind === 'signed-in') startEventStream();
  }, [auth.kind]);
  if (auth.kind === 'sign-in') {
    document.title = 'Sign in · svc console';
    return html`<${SignIn} title="svc console" hint="the control plane's bearer token (SVC_API_TOKEN, or a scoped access token)" reason=${auth.reason} onSignedIn=${check} />`;
  }
  if (auth.kind !== 'signed-in') {
    return html`<main id="main"><h1>svc console</h1>${auth.kind === 'failed' ? html`<${ErrorNote} error=${auth.error} /><button type="button" onClick=${check}>Try again</button>` : html`<p class="muted">Connecting…</p>`}</main>`;
  }
  const signOut = () => {
    setSessionToken(undefined);
    stopEventStream();
    setAuth({ kind: 'sign-in', reason: 'missing' });
  };
  const current =
    NAV.find((n) => path === n.href || path.startsWith(`${n.href}/`))?.href ??
    (path === '/' || path === '/ui' ? '/ui/apps' : '');
  return html`<${Frame} product="svc console" nav=${NAV} current=${current} onNavigate=${linkClick}
    footer=${html`<${Footer} label=${auth.label} onSignOut=${signOut} />`}><${Page} /><//>`;
}

render(html`<${Console} />`, document.getElementById('root')!);
