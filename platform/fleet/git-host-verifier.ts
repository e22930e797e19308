/**
 * The bridge's git-host checks through its verifier app (the {@link GitHostVerifier} port): the
 * installation must be repository-scoped, an installation token limited to exactly the configured
 * repository ids lists the repositories, and a commit lookup proves the admitted source exists.
 * Only the pinned API URL is ever called.
 */
import { ForbiddenError } from '../../domain/errors.js';
import type { GitHostRepository, GitHostVerifier } from '../../domain/fleet/git-host-port.js';
import { GitHostAppClient, type GitHostAppOptions } from './git-host-app-client.js';

/** Options of {@link GitHostApiVerifier}. */
export interface GitHostVerifierOptions extends GitHostAppOptions {
  readonly repositoryIds: readonly string[];
}

export class GitHostApiVerifier implements GitHostVerifier {
  readonly #client: GitHostAppClient;
  readonly #repositoryIds: readonly string[];
  #token: string | undefined;

  constructor(options: GitHostVerifierOptions) {
    this.#client = new GitHostAppClient(options);
    this.#repositoryIds = options.repositoryIds;
  }

  async installationRepositories(): Promise<GitHostRepository[]> {
    const installation = await this.#client.installation();
    if (installation.repository_selection !== 'selected')
      throw new ForbiddenError('the verifier app installation must be scoped to selected repositories', {
        code: 'git_host_installation_not_scoped',
      });
    this.#token = await this.#client.installationToken(
      { repository_ids: this.#repositoryIds.map(Number) },
      { contents: 'read', metadata: 'read' },
    );
    const list = this.#client.expect(
      await this.#client.call('GET', '/installation/repositories', this.#token),
      [200],
      'the repository list',
    );
    const repositories = Array.isArray(list.repositories)
      ? (list.repositories as { id?: unknown; full_name?: unknown }[])
      : [];
    return repositories
      .filter((r) => r.id !== undefined && typeof r.full_name === 'string')
      .map((r) => ({ id: String(r.id), fullName: r.full_name as string }));
  }

  async commitExists(repository: string, sha: string): Promise<boolean> {
    if (this.#token === undefined) await this.installationRepositories();
    const [owner = '', name = ''] = repository.split('/');
    const answer = await this.#client.call(
      'GET',
      `/repos/${encodeURIComponent(owner)}/${encodeURIComponent(name)}/commits/${sha}`,
      this.#token!,
    );
    if (answer.status === 404 || answer.status === 422) return false;
    return this.#client.expect(answer, [200], 'the commit lookup').sha === sha;
  }
}
