/**
 * The doctor's call of the knowledge store's sample write (docs/adr/0176): `POST
 * /admin/api/doctor/sample-write` on the admin listener of this host, with an admin token from the
 * same settings the store reads (`SVC_KNOWLEDGE_TOKENS`, `SVC_KNOWLEDGE_TOKENS_FILE`).
 */
import fs from 'node:fs';

/** What the call found. */
export type SampleWriteProbe =
  | { readonly kind: 'unreachable'; readonly detail: string }
  | { readonly kind: 'no-admin-token' }
  | { readonly kind: 'answered'; readonly status: number; readonly body: unknown };

/** The first token granting `admin` among the configured ones; undefined when none does (or none is set). */
export function adminToken(tokens: string | undefined, tokensFile: string | undefined): string | undefined {
  const entries = [
    ...(tokens ?? '').split(','),
    ...(tokensFile !== undefined && fs.existsSync(tokensFile) ? fs.readFileSync(tokensFile, 'utf8').split('\n') : []),
  ]
    .map((line) => line.trim())
    .filter((line) => line !== '' && !line.startsWith('#'));
  return entries.find((entry) => entry.split(':')[1]?.split('+').includes('admin'));
}

/** Calls the sample write on `adminUrl`; `open` says the store runs without tokens. */
export async function probeSampleWrite(
  adminUrl: string,
  auth: { readonly open: boolean; readonly token: string | undefined },
  timeoutMs = 15_000,
): Promise<SampleWriteProbe> {
  if (!auth.open && auth.token === undefined) return { kind: 'no-admin-token' };
  try {
    const response = await fetch(`${adminUrl}/admin/api/doctor/sample-write`, {
      method: 'POST',
      headers: { 'content-type': 'application/json', ...(auth.token ? { authorization: `Bearer ${auth.token}` } : {}) },
      body: '{}',
      signal: AbortSignal.timeout(timeoutMs),
    });
    const text = await response.text();
    let body: unknown = text;
    try {
      body = JSON.parse(text);
    } catch {
      // not JSON: reported as text
    }
    return { kind: 'answered', status: response.status, body };
  } catch (error) {
    return { kind: 'unreachable', detail: (error as Error).message };
  }
}
