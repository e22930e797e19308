/**
 * The fleet repository through restricted mode's git-host app (the {@link FleetRepository} port):
 * every call uses an installation token limited to the one configured repository; a plan pull
 * request is a branch from the default branch, one file and a pull request; a dispatch is a
 * `workflow_dispatch` of the bound workflow at the bound ref.
 */
import { ConflictError } from '../../domain/errors.js';
import type { FleetRepository, PlanPullRequest } from '../../domain/fleet/fleet-repository-port.js';
import { GitHostAppClient, type GitHostAppOptions } from './git-host-app-client.js';

/** Options of {@link GitHostFleetRepository}. */
export interface GitHostFleetRepositoryOptions extends GitHostAppOptions {
  /** `owner/name`. */
  readonly repository: string;
  /** Workflow file path, e.g. `.github/workflows/admit.yml`. */
  readonly workflow: string;
  /** Ref the workflow runs at, e.g. `refs/heads/main`. */
  readonly ref: string;
}

export class GitHostFleetRepository implements FleetRepository {
  readonly #client: GitHostAppClient;
  readonly #options: GitHostFleetRepositoryOptions;

  constructor(options: GitHostFleetRepositoryOptions) {
    this.#client = new GitHostAppClient(options);
    this.#options = options;
  }

  async openPullRequest(input: {
    branch: string;
    path: string;
    content: string;
    title: string;
    body: string;
  }): Promise<PlanPullRequest> {
    const token = await this.#token({ contents: 'write', pull_requests: 'write', metadata: 'read' });
    const repo = `/repos/${this.#options.repository}`;
    const about = this.#client.expect(await this.#client.call('GET', repo, token), [200], 'the repository');
    const base = typeof about.default_branch === 'string' ? about.default_branch : 'main';
    const head = this.#client.expect(
      await this.#client.call('GET', `${repo}/git/ref/heads/${encodeURIComponent(base)}`, token),
      [200],
      'the default branch',
    );
    const sha = (head.object as { sha?: unknown } | undefined)?.sha;
    const created = await this.#client.call('POST', `${repo}/git/refs`, token, {
      ref: `refs/heads/${input.branch}`,
      sha,
    });
    if (created.status === 422)
      throw new ConflictError(`branch ${input.branch} already exists in ${this.#options.repository}`, {
        code: 'pull_request_exists',
        details: { branch: input.branch },
      });
    this.#client.expect(created, [201], 'the branch creation');
    this.#client.expect(
      await this.#client.call(
        'PUT',
        `${repo}/contents/${input.path.split('/').map(encodeURIComponent).join('/')}`,
        token,
        { message: input.title, content: Buffer.from(input.content, 'utf8').toString('base64'), branch: input.branch },
      ),
      [201],
      'the file commit',
    );
    const pull = this.#client.expect(
      await this.#client.call('POST', `${repo}/pulls`, token, {
        title: input.title,
        head: input.branch,
        base,
        body: input.body,
      }),
      [201],
      'the pull request',
    );
    return { number: Number(pull.number), url: String(pull.html_url), branch: input.branch, path: input.path };
  }

  async dispatchWorkflow(inputs: Readonly<Record<string, string>>): Promise<void> {
    const token = await this.#token({ actions: 'write', metadata: 'read' });
    const workflow = encodeURIComponent(this.#options.workflow.split('/').at(-1)!);
    this.#client.expect(
      await this.#client.call(
        'POST',
        `/repos/${this.#options.repository}/actions/workflows/${workflow}/dispatches`,
        token,
        { ref: this.#options.ref, inputs },
      ),
      [204],
      'the workflow dispatch',
    );
  }

  #token(permissions: Record<string, string>): Promise<string> {
    return this.#client.installationToken({ repositories: [this.#options.repository.split('/')[1]!] }, permissions);
  }
}
