/**
 * The bridge's git-host checks through its verifier app (the {@link GitHostVerifier} port): an app
 * JWT (RS256, signed with the app's private key) fetches the installation, an installation token
 * scoped to exactly the configured repository ids lists the repositories, and a commit lookup
 * proves the admitted source exists. Only the pinned API URL is ever called.
 */
import crypto from 'node:crypto';
import fs from 'node:fs';
import { SignJWT } from 'jose';
import { UnavailableError, ForbiddenError } from '../../domain/errors.js';
import type { GitHostRepository, GitHostVerifier } from '../../domain/fleet/git-host-port.js';
import { resolveTarget } from '../outbound/outbound-guard.js';
import { sendPinned } from '../outbound/pinned-post.js';

/** Options of {@link GitHostApiVerifier}. */
export interface GitHostVerifierOptions {
  /** The pinned API base URL (`https://api.github.com`, or a stand-in's). */
  readonly apiUrl: string;
  readonly appId: string;
  readonly installationId: string;
  readonly privateKeyFile: string;
  readonly repositoryIds: readonly string[];
  readonly ca?: string;
  /** @default 10000 */
  readonly timeoutMs?: number;
}

export class GitHostApiVerifier implements GitHostVerifier {
  readonly #options: GitHostVerifierOptions;

  constructor(options: GitHostVerifierOptions) {
    this.#options = options;
  }

  async installationRepositories(): Promise<GitHostRepository[]> {
    const jwt = await this.#appJwt();
    const installation = await this.#call('GET', `/app/installations/${this.#options.installationId}`, jwt);
    if (installation.repository_selection !== 'selected') throw new ForbiddenError('the verifier app installation must be scoped to selected repositories', { code: 'git_host_installation_not_scoped' });
    const token = await this.#call('POST', `/app/installations/${this.#options.installationId}/access_tokens`, jwt, { repository_ids: this.#options.repositoryIds.map(Number), permissions: { contents: 'read', metadata: 'read' } });
    if (typeof token.token !== 'string') throw unavailable('answered no installation token');
    const list = await this.#call('GET', '/installation/repositories', token.token);
    const repositories = Array.isArray(list.repositories) ? (list.repositories as { id?: unknown; full_name?: unknown }[]) : [];
    this.#installationToken = token.token;
    return repositories.filter((r) => r.id !== undefined && typeof r.full_name === 'string').map((r) => ({ id: String(r.id), fullName: r.full_name as string }));
  }

  #installationToken: string | undefined;

  async commitExists(repository: string, sha: string): Promise<boolean> {
    if (this.#installationToken === undefined) await this.installationRepositories();
    const [owner, name] = repository.split('/');
    const answer = await this.#call('GET', `/repos/${encodeURIComponent(owner ?? '')}/${encodeURIComponent(name ?? '')}/commits/${sha}`, this.#installationToken!, undefined, true);
    return answer.sha === sha;
  }

  async #appJwt(): Promise<string> {
    const key = crypto.createPrivateKey(fs.readFileSync(this.#options.privateKeyFile, 'utf8'));
    const now = Math.floor(Date.now() / 1000);
    return new SignJWT({}).setProtectedHeader({ alg: 'RS256' }).setIssuer(this.#options.appId).setIssuedAt(now - 60).setExpirationTime(now + 540).sign(key);
  }

  async #call(method: 'GET' | 'POST', pathname: string, bearer: string, body?: unknown, notFoundIsEmpty = false): Promise<Record<string, unknown>> {
    const url = new URL(`${this.#options.apiUrl.replace(/\/+$/, '')}${pathname}`);
    let response;
    try {
      response = await sendPinned(url, await resolveTarget(url, { allowPrivate: true }), {
        method,
        headers: { authorization: `Bearer ${bearer}`, accept: 'application/vnd.github+json', 'user-agent': 'svc-external-admission', ...(body === undefined ? {} : { 'content-type': 'application/json' }) },
        body: body === undefined ? '' : JSON.stringify(body),
        timeoutMs: this.#options.timeoutMs ?? 10_000,
        bodyLimit: 4 * 1024 * 1024,
        ...(this.#options.ca === undefined ? {} : { ca: this.#options.ca }),
      });
    } catch (error) {
      throw unavailable(`cannot be reached (${(error as Error).message})`);
    }
    if (notFoundIsEmpty && (response.status === 404 || response.status === 422)) return {};
    if (response.status < 200 || response.status >= 300) throw unavailable(`answered ${method} ${pathname} with ${response.status}`);
    try {
      return JSON.parse(response.body.toString('utf8')) as Record<string, unknown>;
    } catch {
      throw unavailable(`answered ${method} ${pathname} with a body that is not JSON`);
    }
  }
}

function unavailable(what: string): UnavailableError {
  return new UnavailableError(`the git-host API ${what}`, { code: 'git_host_unavailable', retryAfterSeconds: 5 });
}
