/**
 * A local git-host API answering the checks the bridge's verifier app makes: the installation
 * (app JWT verified with the app's public key), an installation token limited to the requested
 * repository ids, the installation's repositories and commit lookups.
 */
import { randomBytes, type KeyObject } from 'node:crypto';
import { jwtVerify } from 'jose';
import { startHttpsStandIn, type HttpsStandIn } from './https-stand-in.js';
import type { TestCertificates } from './test-certificates.js';

export interface GitHostStandInOptions {
  readonly appId: string;
  readonly installationId: string;
  readonly appPublicKey: KeyObject;
  readonly repositories: readonly { readonly id: string; readonly fullName: string; readonly commits: readonly string[] }[];
  /** @default 'selected' */
  readonly repositorySelection?: 'selected' | 'all';
}

export async function startGitHostStandIn(certs: TestCertificates, options: GitHostStandInOptions): Promise<HttpsStandIn> {
  const tokens = new Map<string, readonly string[]>();
  return startHttpsStandIn(certs, async (request) => {
    const bearer = (request.headers.authorization ?? '').replace(/^Bearer /, '');
    if (request.path.startsWith('/app/')) {
      try {
        await jwtVerify(bearer, options.appPublicKey, { issuer: options.appId, algorithms: ['RS256'] });
      } catch {
        return { status: 401, body: { message: 'A JSON web token could not be decoded' } };
      }
      if (request.method === 'GET' && request.path === `/app/installations/${options.installationId}`) return { status: 200, body: { id: Number(options.installationId), repository_selection: options.repositorySelection ?? 'selected' } };
      if (request.method === 'POST' && request.path === `/app/installations/${options.installationId}/access_tokens`) {
        const ids = ((JSON.parse(request.body) as { repository_ids?: number[] }).repository_ids ?? []).map(String);
        if (!ids.every((id) => options.repositories.some((r) => r.id === id))) return { status: 422, body: { message: 'There is at least one repository that does not exist or is not accessible' } };
        const token = `ghs_${randomBytes(18).toString('hex')}`;
        tokens.set(token, ids);
        return { status: 201, body: { token, expires_at: new Date(Date.now() + 3_600_000).toISOString() } };
      }
      return { status: 404, body: { message: 'Not Found' } };
    }
    const allowed = tokens.get(bearer);
    if (allowed === undefined) return { status: 401, body: { message: 'Bad credentials' } };
    if (request.method === 'GET' && request.path === '/installation/repositories') {
      const repositories = options.repositories.filter((r) => allowed.includes(r.id)).map((r) => ({ id: Number(r.id), full_name: r.fullName }));
      return { status: 200, body: { total_count: repositories.length, repositories } };
    }
    const commit = /^\/repos\/([^/]+)\/([^/]+)\/commits\/([0-9a-f]{40})$/.exec(request.path);
    if (request.method === 'GET' && commit) {
      const repository = options.repositories.find((r) => r.fullName === `${commit[1]}/${commit[2]}` && allowed.includes(r.id));
      return repository?.commits.includes(commit[3]!) ? { status: 200, body: { sha: commit[3] } } : { status: 404, body: { message: 'Not Found' } };
    }
    return { status: 404, body: { message: 'Not Found' } };
  });
}
