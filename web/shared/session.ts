/**
 * The bearer token a person entered, kept in session storage (gone when the tab closes) and never
 * put in a URL. One storage key per page, so the console's token and the knowledge store's differ.
 */

let storageKey = 'svc.token';

/** Names the storage key of this page. */
export function useSessionKey(key: string): void {
  storageKey = key;
}

/** The stored token, if any. */
export function sessionToken(): string | undefined {
  try {
    return sessionStorage.getItem(storageKey) ?? undefined;
  } catch {
    return undefined;
  }
}

/** Stores (or, with undefined, forgets) the token. */
export function setSessionToken(token: string | undefined): void {
  if (token === undefined || token === '') sessionStorage.removeItem(storageKey);
  else sessionStorage.setItem(storageKey, token);
}
