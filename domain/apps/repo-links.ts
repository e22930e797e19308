/**
 * Links into an app's repository on the web (`repo.repoWeb`): the repository, the deployed commit,
 * the release's tree and the spec file, as the console shows them (ADR 0196).
 */
import type { CanonicalAppSpec } from '../spec/index.js';

/** The web links of an app; each is absent when the spec or the release does not give what it needs. */
export interface RepoLinks {
  readonly repository: string;
  /** The branch that is deployed. */
  readonly branch: string;
  /** The spec file at the deployed commit, else on the deployed branch. */
  readonly spec_file: string;
  /** The commit the app runs. */
  readonly commit?: string;
  /** The tree of the release the app runs. */
  readonly release?: string;
}

/** The file name of an app spec inside its repository. */
export const SPEC_FILE_IN_REPO = 'infraspec.yaml';

function segment(value: string): string {
  return value.split('/').map(encodeURIComponent).join('/');
}

/**
 * The links of `spec` for the commit it runs, or undefined without `repo.repoWeb`. The paths
 * (`/commit/<sha>`, `/tree/<ref>`, `/blob/<ref>/<file>`) are those GitHub, GitLab, Gitea and Forgejo share.
 */
export function repoLinks(spec: CanonicalAppSpec, commit?: string | null): RepoLinks | undefined {
  const web = spec.repo?.repoWeb;
  if (web === undefined) return undefined;
  const base = web.replace(/\/+$/, '').replace(/\.git$/, '');
  const branch = spec.repo?.branch ?? 'main';
  const ref = commit ?? branch;
  return {
    repository: base,
    branch: `${base}/tree/${segment(branch)}`,
    spec_file: `${base}/blob/${segment(ref)}/${SPEC_FILE_IN_REPO}`,
    ...(commit ? { commit: `${base}/commit/${commit}`, release: `${base}/tree/${commit}` } : {}),
  };
}
