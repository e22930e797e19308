/**
 * The settings of an app as its page shows them: what its spec asks of the platform beyond the jobs
 * (source, build, deploy policy, snapshot policy, expected secrets), each as the component that
 * applies it reads it (ADR 0196).
 */
import type { CanonicalAppSpec } from '../spec/index.js';
import { repoLinks, type RepoLinks } from './repo-links.js';

/** The spec-derived settings of an app (REST: snake_case, as spec fields are in REST answers). */
export interface AppSettings {
  /** Deploy and recovery workflows include the app. */
  readonly deploy: boolean;
  /** Where deploys clone from (the clone step); null: the app's folder in the apps repository. */
  readonly repo: {
    readonly url: string;
    readonly branch: string;
    /** A push webhook on the branch deploys (the webhook receiver). */
    readonly auto_deploy: boolean;
    readonly repo_web: string | null;
    readonly links: RepoLinks | null;
  } | null;
  /** How the release is built (the build and test steps). */
  readonly build: { readonly dockerfile: string; readonly image: string | null; readonly test: string | null };
  /** What a failed deploy does and how long canaries run before their health is judged (the health gate). */
  readonly deploy_policy: {
    readonly auto_rollback: boolean;
    readonly canaries: readonly {
      readonly process: string;
      readonly count: number;
      readonly evaluate_after: string | null;
    }[];
  };
  /** The snapshot policy (the snapshot service), when the app has a database. */
  readonly snapshots: {
    readonly keep: number;
    readonly pre_restore: boolean;
    readonly export_bucket: string | null;
  } | null;
  /** Secret names the preflight and production admission expect to have values. */
  readonly expected_secrets: readonly string[];
}

/** The settings of `spec`; `commit` is the commit the app runs, for the links. */
export function appSettings(spec: CanonicalAppSpec, commit?: string | null): AppSettings {
  const repo = spec.repo;
  return {
    deploy: spec.deploy,
    repo:
      repo === undefined
        ? null
        : {
            url: repo.url,
            branch: repo.branch,
            auto_deploy: repo.autoDeploy,
            repo_web: repo.repoWeb ?? null,
            links: repoLinks(spec, commit) ?? null,
          },
    build: { dockerfile: spec.build.dockerfile, image: spec.build.image ?? null, test: spec.build.test ?? null },
    deploy_policy: {
      auto_rollback: spec.deployPolicy.autoRollback,
      canaries: Object.entries(spec.processes)
        .filter(([, process]) => process.canary !== undefined)
        .sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0))
        .map(([name, process]) => ({
          process: name,
          count: process.canary?.count ?? 0,
          evaluate_after: process.canary?.evaluateAfter ?? null,
        })),
    },
    snapshots:
      spec.infrastructure?.postgres === undefined
        ? null
        : {
            keep: spec.snapshots.keep,
            pre_restore: spec.snapshots.preRestore,
            export_bucket: spec.snapshots.exportBucket ?? null,
          },
    expected_secrets: [...spec.secrets].sort(),
  };
}
