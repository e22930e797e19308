/**
 * The git-host checks the external-admission bridge makes through its verifier app: the
 * installation is repository-scoped to exactly the configured repositories, and the admitted commit
 * exists in the admitted repository.
 */

/** A repository the installation reaches. */
export interface GitHostRepository {
  readonly id: string;
  readonly fullName: string;
}

export interface GitHostVerifier {
  /** The installation's repositories (it must select repositories, not all). */
  installationRepositories(): Promise<readonly GitHostRepository[]>;
  /** True when `sha` is a commit of `repository` (`owner/name`). */
  commitExists(repository: string, sha: string): Promise<boolean>;
}
