/**
 * What the deploy pipeline needs from the rest of the control plane, gathered in one place.
 */
import type { EventEmitterPort } from '../../domain/events/index.js';
import type { Registry } from '../../domain/registry/index.js';
import type { Logger } from '../../platform/logger.js';
import type { ReleaseBuilder } from '../../platform/release-builder/index.js';
import type { Db } from '../../store/database.js';
import type { SchedulerTargets } from '../apps/scheduler-targets.js';
import type { Controller } from '../runtime/controller.js';

/** Dependencies of the pipeline and the deploy service. */
export interface PipelineDependencies {
  readonly db: Db;
  readonly appsDir: string;
  readonly dataDir: string;
  /** `SVC_PROFILE`: production requires digest-pinned images. */
  readonly profile: string;
  /** `SVC_SOURCE_ALLOWED_SIGNERS`: under the production profile, commits must be signed by one of its keys. */
  readonly allowedSignersFile?: string;
  readonly targets: SchedulerTargets;
  readonly registry: Registry;
  /** The app controller: submit = record the release and reconcile the app. */
  readonly appController: Controller;
  readonly builder: ReleaseBuilder;
  /**
   * Verifies a `build.image` by digest: signed by a key the platform trusts, built from the resolved
   * commit (ADR 0223); undefined where no container runtime runs.
   */
  readonly verifyImage?: (image: string, commit: string) => Promise<void>;
  /** Removes images of removed releases from the registry and the engine's storage; resolves with how many went. */
  readonly pruneImages?: (images: readonly string[]) => Promise<number>;
  readonly events: EventEmitterPort;
  readonly logger: Logger;
  /** Deadline of the healthy step. @default 120000 */
  readonly healthyTimeoutMs?: number;
  /** Limit of the test command. @default 600000 */
  readonly testTimeoutMs?: number;
  /** Asks the operation worker to claim now (after an enqueue). */
  readonly wake: () => void;
  /** The snapshot step: a database dump before migrations (the snapshots capability); absent: skipped with the reason. */
  readonly snapshot?: (app: string, commit: string | null) => Promise<{ readonly message: string }>;
  /** The migrate step: runs the app's declared migrations from the checkout; absent: skipped with the reason. */
  readonly migrate?: (
    app: string,
    migrationsDir: string,
    commit: string | null,
  ) => Promise<{ readonly message: string }>;
  /** The routing step (`forge` in the spec): reconciles the tunnel ingress now (the routing controller); absent: skipped with the reason. */
  readonly route?: (
    app: string,
  ) => Promise<{ readonly rules: readonly { readonly hostname: string }[]; readonly file: string }>;
}
