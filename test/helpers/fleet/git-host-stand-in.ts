/**
 * A local git-host API answering what restricted mode asks of it: app installations (app JWTs
 * verified with each app's public key), installation tokens limited to the repositories asked
 * for, the installation's repositories, commit lookups, and, for the fleet repository, branch
 * creation, file commits, pull requests and workflow dispatches (recorded for the test to check).
 */
import { randomBytes, type KeyObject } from 'node:crypto';
import { jwtVerify } from 'jose';
import { startHttpsStandIn, type HttpsStandIn } from './https-stand-in.js';
import type { TestCertificates } from './test-certificates.js';

export interface StandInRepository {
  readonly id: string;
  readonly fullName: string;
  readonly commits: readonly string[];
}

export interface StandInApp {
  readonly appId: string;
  readonly installationId: string;
  readonly publicKey: KeyObject;
  /** Repository ids the installation reaches. */
  readonly repositoryIds: readonly string[];
  /** @default 'selected' */
  readonly repositorySelection?: 'selected' | 'all';
}

export interface GitHostStandIn extends HttpsStandIn {
  readonly branches: Map<string, string>;
  readonly files: Map<string, string>;
  readonly pulls: { number: number; title: string; head: string; base: string; body: string }[];
  readonly dispatches: { workflow: string; ref: string; inputs: Record<string, string> }[];
  /** Makes the next workflow dispatch fail with this status. */
  failNextDispatch(status: number): void;
}

export async function startGitHostStandIn(
  certs: TestCertificates,
  options: { readonly apps: readonly StandInApp[]; readonly repositories: readonly StandInRepository[] },
): Promise<GitHostStandIn> {
  const tokens = new Map<string, readonly string[]>();
  const branches = new Map<string, string>();
  const files = new Map<string, string>();
  const pulls: GitHostStandIn['pulls'] = [];
  const dispatches: GitHostStandIn['dispatches'] = [];
  let failDispatch: number | undefined;
  const byName = (owner: string, name: string) => options.repositories.find((r) => r.fullName === `${owner}/${name}`);
  const server = await startHttpsStandIn(certs, async (request) => {
    const bearer = (request.headers.authorization ?? '').replace(/^Bearer /, '');
    const body = request.body === '' ? {} : (JSON.parse(request.body) as Record<string, any>);
    const installation = /^\/app\/installations\/(\d+)(\/access_tokens)?$/.exec(request.path);
    if (installation) {
      const app = options.apps.find((a) => a.installationId === installation[1]);
      if (!app) return { status: 404, body: { message: 'Not Found' } };
      try {
        await jwtVerify(bearer, app.publicKey, { issuer: app.appId, algorithms: ['RS256'] });
      } catch {
        return { status: 401, body: { message: 'A JSON web token could not be decoded' } };
      }
      if (request.method === 'GET' && !installation[2])
        return {
          status: 200,
          body: { id: Number(app.installationId), repository_selection: app.repositorySelection ?? 'selected' },
        };
      if (request.method === 'POST' && installation[2]) {
        const asked = [
          ...((body.repository_ids as number[] | undefined) ?? []).map(String),
          ...((body.repositories as string[] | undefined) ?? []).map(
            (name) => options.repositories.find((r) => r.fullName.endsWith(`/${name}`))?.id ?? `missing:${name}`,
          ),
        ];
        if (asked.length === 0 || !asked.every((id) => app.repositoryIds.includes(id)))
          return {
            status: 422,
            body: { message: 'There is at least one repository that does not exist or is not accessible' },
          };
        const token = `ghs_${randomBytes(18).toString('hex')}`;
        tokens.set(token, asked);
        return { status: 201, body: { token, expires_at: new Date(Date.now() + 3_600_000).toISOString() } };
      }
      return { status: 404, body: { message: 'Not Found' } };
    }
    const allowed = tokens.get(bearer);
    if (allowed === undefined) return { status: 401, body: { message: 'Bad credentials' } };
    if (request.method === 'GET' && request.path === '/installation/repositories') {
      const repositories = options.repositories
        .filter((r) => allowed.includes(r.id))
        .map((r) => ({ id: Number(r.id), full_name: r.fullName }));
      return { status: 200, body: { total_count: repositories.length, repositories } };
    }
    const repo = /^\/repos\/([^/]+)\/([^/]+)(\/.*)?$/.exec(request.path);
    const repository = repo ? byName(repo[1]!, repo[2]!) : undefined;
    if (!repo || !repository || !allowed.includes(repository.id))
      return { status: 404, body: { message: 'Not Found' } };
    const rest = repo[3] ?? '';
    const commit = /^\/commits\/([0-9a-f]{40})$/.exec(rest);
    if (request.method === 'GET' && commit)
      return repository.commits.includes(commit[1]!)
        ? { status: 200, body: { sha: commit[1] } }
        : { status: 404, body: { message: 'Not Found' } };
    if (request.method === 'GET' && rest === '')
      return {
        status: 200,
        body: { id: Number(repository.id), full_name: repository.fullName, default_branch: 'main' },
      };
    if (request.method === 'GET' && rest === '/git/ref/heads/main')
      return { status: 200, body: { ref: 'refs/heads/main', object: { sha: 'e'.repeat(40), type: 'commit' } } };
    if (request.method === 'POST' && rest === '/git/refs') {
      if (branches.has(body.ref)) return { status: 422, body: { message: 'Reference already exists' } };
      branches.set(body.ref, body.sha);
      return { status: 201, body: { ref: body.ref, object: { sha: body.sha } } };
    }
    const content = /^\/contents\/(.+)$/.exec(rest);
    if (request.method === 'PUT' && content) {
      if (!branches.has(`refs/heads/${body.branch}`)) return { status: 404, body: { message: 'Branch not found' } };
      files.set(
        `${body.branch}:${decodeURIComponent(content[1]!)}`,
        Buffer.from(body.content, 'base64').toString('utf8'),
      );
      return { status: 201, body: { content: { path: decodeURIComponent(content[1]!) } } };
    }
    if (request.method === 'POST' && rest === '/pulls') {
      const number = pulls.length + 1;
      pulls.push({ number, title: body.title, head: body.head, base: body.base, body: body.body });
      return {
        status: 201,
        body: { number, html_url: `https://git.example.test/${repository.fullName}/pull/${number}` },
      };
    }
    const dispatch = /^\/actions\/workflows\/([^/]+)\/dispatches$/.exec(rest);
    if (request.method === 'POST' && dispatch) {
      if (failDispatch !== undefined) {
        const status = failDispatch;
        failDispatch = undefined;
        return { status, body: { message: 'Workflow does not have workflow_dispatch trigger' } };
      }
      dispatches.push({ workflow: decodeURIComponent(dispatch[1]!), ref: body.ref, inputs: body.inputs });
      return { status: 204 };
    }
    return { status: 404, body: { message: 'Not Found' } };
  });
  return { ...server, branches, files, pulls, dispatches, failNextDispatch: (status) => void (failDispatch = status) };
}
