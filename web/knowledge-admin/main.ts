/**
 * The knowledge store's admin dashboard (served by the admin listener at `/`): health, write and
 * retrieval rates, latency per retrieval path, ranking evaluation, raw metrics and the belief
 * debugger (docs/adr/0130). Admin routes need a token with the admin permission when the store
 * has tokens; a 401 shows the sign-in prompt.
 */
import { render } from 'preact';
import { useCallback, useEffect, useState } from 'preact/hooks';
import '../shared/base.css';
import { api, onSignInNeeded } from '../shared/api.js';
import { html } from '../shared/html.js';
import { sessionToken, setSessionToken, useSessionKey } from '../shared/session.js';
import { SignIn, type SignInReason } from '../shared/sign-in.js';
import { ErrorNote, Frame } from '../shared/ui.js';
import { HealthPanel, MetricsPanel } from './metrics-panel.js';
import { RankingPanel } from './ranking-panel.js';
import { BeliefDebugger } from './belief-debugger.js';

useSessionKey('svc.knowledge-admin.token');

const NAV = [
  { href: '#health', label: 'Health' },
  { href: '#rates-heading', label: 'Rates and latency' },
  { href: '#ranking', label: 'Ranking' },
  { href: '#debugger', label: 'Belief debugger' },
  { href: '#raw-heading', label: 'Raw metrics' },
];

type AuthState =
  | { readonly kind: 'checking' }
  | { readonly kind: 'signed-in' }
  | { readonly kind: 'sign-in'; readonly reason: SignInReason }
  | { readonly kind: 'failed'; readonly error: Error };

function Dashboard() {
  const [auth, setAuth] = useState<AuthState>({ kind: 'checking' });
  const check = useCallback(() => {
    setAuth({ kind: 'checking' });
    api('/admin/api/stats')
      .then(() => setAuth({ kind: 'signed-in' }))
      .catch((error: Error & { status?: number }) => {
        // 401 already switched to the prompt; a token without the admin permission is asked again.
        if (error.status === 403) setAuth({ kind: 'sign-in', reason: 'forbidden' });
        else if (error.status !== 401) setAuth({ kind: 'failed', error });
      });
  }, []);
  useEffect(() => onSignInNeeded((reason) => setAuth({ kind: 'sign-in', reason })), []);
  useEffect(check, [check]);
  useEffect(() => {
    document.title = auth.kind === 'sign-in' ? 'Sign in · svc knowledge admin' : 'svc knowledge admin';
  }, [auth.kind]);
  if (auth.kind === 'sign-in') {
    return html`<${SignIn} title="svc knowledge admin" hint="a knowledge store token with the admin permission, written whole as tenant:permissions:secret (an entry of SVC_KNOWLEDGE_TOKENS)" reason=${auth.reason} onSignedIn=${check} />`;
  }
  if (auth.kind !== 'signed-in') {
    return html`<main id="main"><h1>svc knowledge admin</h1>${auth.kind === 'failed' ? html`<${ErrorNote} error=${auth.error} /><button type="button" onClick=${check}>Try again</button>` : html`<p class="muted">Connecting…</p>`}</main>`;
  }
  const signOut = () => {
    setSessionToken(undefined);
    setAuth({ kind: 'sign-in', reason: 'missing' });
  };
  return html`<${Frame} product="svc knowledge admin" nav=${NAV} current=""
    footer=${html`<span>Knowledge store admin listener</span>${sessionToken() !== undefined ? html` · <button type="button" onClick=${signOut}>Sign out</button>` : null}`}>
    <h1>Knowledge store</h1>
    <section id="health" aria-labelledby="health-heading"><h2 id="health-heading">Health</h2><${HealthPanel} /></section>
    <${MetricsPanel} />
    <section id="ranking" aria-labelledby="ranking-heading"><h2 id="ranking-heading">Ranking evaluation</h2><${RankingPanel} /></section>
    <section id="debugger" aria-labelledby="debugger-heading"><h2 id="debugger-heading">Belief debugger</h2><${BeliefDebugger} /></section>
  <//>`;
}

render(html`<${Dashboard} />`, document.getElementById('root')!);
