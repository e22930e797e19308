/**
 * The sign-in prompt a page shows when the API answers 401: one password field for the bearer
 * token, kept in session storage. Nothing else of the page renders until a call succeeds.
 */
import { useState } from 'preact/hooks';
import { html } from './html.js';
import { setSessionToken } from './session.js';

/** Why a page asks for a token. */
export type SignInReason = 'missing' | 'rejected' | 'forbidden';

export interface SignInProps {
  readonly title: string;
  /** What the token is, e.g. "the control token (SVC_API_TOKEN) or a scoped token". */
  readonly hint: string;
  /** Why the prompt shows: no token yet, the stored one was refused, or it lacks a permission. */
  readonly reason: SignInReason;
  readonly onSignedIn: () => void;
}

/** The sign-in form. */
export function SignIn(props: SignInProps) {
  const [token, setToken] = useState('');
  const submit = (event: Event) => {
    event.preventDefault();
    setSessionToken(token.trim());
    props.onSignedIn();
  };
  return html`
    <main id="main" class="sign-in">
      <h1>${props.title}</h1>
      <section aria-labelledby="sign-in-heading" class="card">
        <h2 id="sign-in-heading">Sign in</h2>
        ${props.reason === 'rejected' ? html`<p role="alert" class="error">The token was not accepted. Enter a valid one.</p>` : null}
        ${props.reason === 'forbidden' ? html`<p role="alert" class="error">This token lacks the permission this page needs. Enter another one.</p>` : null}
        <p>This page needs ${props.hint}. It is kept in this tab's session storage only.</p>
        <form onSubmit=${submit}>
          <label for="token">Access token</label>
          <input id="token" name="token" type="password" autocomplete="current-password" required value=${token}
            onInput=${(e: Event) => setToken((e.target as HTMLInputElement).value)} />
          <button type="submit">Sign in</button>
        </form>
      </section>
    </main>`;
}
