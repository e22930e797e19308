/**
 * Reading git-host push payloads: the GitHub `push` event and a generic form
 * `{ repository, ref, after, deleted? }`, and matching their repository to an app's `repo.url`.
 */

/** The facts of a push the receiver decides on. */
export interface PushFacts {
  /** Repository identities the payload names (full name and URLs). */
  readonly repositories: readonly string[];
  /** Display name of the repository. */
  readonly repository: string | null;
  readonly ref: string | null;
  /** The branch for `refs/heads/<branch>` refs. */
  readonly branch: string | null;
  /** The pushed head commit (40 hex), null for deletions. */
  readonly commit: string | null;
  readonly deleted: boolean;
}

const str = (v: unknown): string | null => (typeof v === 'string' && v.length > 0 ? v : null);

/** Extracts the push facts from a parsed payload (GitHub or generic form). */
export function pushFacts(payload: unknown): PushFacts {
  const p = (payload ?? {}) as Record<string, unknown>;
  const repo = p.repository;
  const repositories: string[] = [];
  let display: string | null = null;
  if (repo && typeof repo === 'object') {
    const r = repo as Record<string, unknown>;
    for (const k of ['full_name', 'clone_url', 'ssh_url', 'git_url', 'html_url', 'url']) {
      const v = str(r[k]);
      if (v) repositories.push(v);
    }
    display = str(r.full_name) ?? str(r.clone_url);
  } else if (str(repo)) {
    repositories.push(repo as string);
    display = repo as string;
  }
  const ref = str(p.ref);
  const branch = ref?.startsWith('refs/heads/') ? ref.slice('refs/heads/'.length) : null;
  const after = str(p.after);
  const deleted = p.deleted === true || (after !== null && /^0{40}$/.test(after));
  return {
    repositories,
    repository: display,
    ref,
    branch,
    commit: after && /^[0-9a-f]{40}$/.test(after) && !deleted ? after : null,
    deleted,
  };
}

/** A repository URL or path reduced to `host/owner/name` form for comparison. */
export function normalizeRepository(url: string): string {
  return url
    .trim()
    .toLowerCase()
    .replace(/^[a-z+]+:\/\//, '')
    .replace(/^[^@/]+@/, '')
    .replace(/^([^/:]+):(?!\d)/, '$1/')
    .replace(/\/+$/, '')
    .replace(/\.git$/, '');
}

/** True when an app's `repo.url` names one of the pushed repository identities. */
export function repositoryMatches(repoUrl: string, identities: readonly string[]): boolean {
  const mine = normalizeRepository(repoUrl);
  return identities.some((identity) => {
    const theirs = normalizeRepository(identity);
    // A full name (owner/name) matches any URL or path that ends with it.
    return theirs === mine || (!theirs.includes('.') && theirs.split('/').length === 2 && mine.endsWith(`/${theirs}`));
  });
}
