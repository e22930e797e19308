/**
 * The fleet repository on the git host, reached through restricted mode's repository-scoped app:
 * a capacity plan is proposed as a pull request, and a dispatch starts the bound runner workflow.
 */

/** A pull request the platform opened. */
export interface PlanPullRequest {
  readonly number: number;
  readonly url: string;
  readonly branch: string;
  readonly path: string;
}

export interface FleetRepository {
  /** Commits `content` at `path` on a new branch from the default branch and opens a pull request. */
  openPullRequest(input: {
    readonly branch: string;
    readonly path: string;
    readonly content: string;
    readonly title: string;
    readonly body: string;
  }): Promise<PlanPullRequest>;
  /** Starts the bound workflow (`workflow_dispatch`) at the bound ref with `inputs`. */
  dispatchWorkflow(inputs: Readonly<Record<string, string>>): Promise<void>;
}
