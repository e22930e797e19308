/**
 * Translation of an app spec into scheduler jobs: what a translation needs besides the spec (the release,
 * the platform's infrastructure settings, pipeline-resolved values) and what it returns.
 */
import type { JobSpec } from '../scheduler/index.js';

/** The release a deploy runs: how its processes start unless a process sets its own command. */
export interface TranslationRelease {
  /** Full commit sha of the release; recorded as job meta `svc.commit`. */
  readonly commit: string;
  /** Absolute host directory of a native release (from `releaseLaunch`). */
  readonly workdir?: string;
  /** The release's default command (Dockerfile CMD/ENTRYPOINT): a shell string or argv. */
  readonly command?: string | readonly string[];
  /** Environment baked into the release (Dockerfile ENV); the lowest-precedence environment layer. */
  readonly env: Readonly<Record<string, string>>;
  /** External image reference, for image releases; passed through to the tasks. */
  readonly image?: string;
  /** The Dockerfile's `USER`, the user processes run as unless they name their own uid/gid. */
  readonly user?: string;
}

/** Connection settings of the platform's backing services; never holds passwords. */
export interface TranslationInfrastructure {
  readonly postgres?: {
    readonly host: string;
    readonly port: number;
    readonly user: string;
    /** Path of a libpq password file, given to the app as `PGPASSFILE`. */
    readonly passwordFile?: string;
  };
  readonly redis?: { readonly url: string };
  /** Comma-separated broker addresses. */
  readonly kafka?: { readonly brokers: string };
  readonly nats?: { readonly url: string };
  readonly s3?: {
    readonly endpoint: string;
    readonly region?: string;
    /**
     * The app's own key for the platform's S3 proxy (ADR 0188): an AWS shared-credentials file,
     * given as `AWS_SHARED_CREDENTIALS_FILE`, and its (not secret) access key id.
     */
    readonly credentialsFile?: string;
    readonly accessKeyId?: string;
  };
}

/** Everything {@link translateApp} needs besides the canonical spec. */
export interface TranslationInput {
  readonly release: TranslationRelease;
  /** Connection settings for the infrastructure the spec declares. */
  readonly infrastructure?: TranslationInfrastructure;
  /**
   * Values resolved by the deploy pipeline (for example secrets), the highest-precedence environment
   * layer; withheld from processes that declare `schedulerVariables`.
   */
  readonly pipelineEnv?: Readonly<Record<string, string>>;
  /** Values of the job-owned scheduler variables, keyed by variable KEY. */
  readonly schedulerVariables?: Readonly<Record<string, string>>;
  /**
   * Region names selected for this deploy (keys of the spec's `regions`, or `local` for a spec without
   * regions). @default every target of the spec
   */
  readonly regions?: readonly string[];
}

/** Something the translation did that the caller should know about; `path` points into the spec. */
export interface TranslationWarning {
  /** Dotted spec path, for example `processes.web.port`. */
  readonly path: string;
  readonly message: string;
}

/** The jobs of one app, sorted by id, and the warnings raised while translating. */
export interface Translation {
  readonly jobs: JobSpec[];
  readonly warnings: TranslationWarning[];
}
