/**
 * The API side of the platform lane: queues `platform.preflight`, `platform.upgrade` and
 * `platform.smoke` for the host agent (starting one when none runs), and shows one lane
 * operation with its upgrade record and steps.
 */
import { ConflictError, NotFoundError, ValidationError } from '../../domain/errors.js';
import type { Operation } from '../../domain/operations/index.js';
import {
  isFetchSelector,
  isPlatformKind,
  selectorCommit,
  type PlatformLaneStep,
  type PlatformUpgrade,
} from '../../domain/platform/index.js';
import { enqueueOperation, getOperation, listOperations } from '../../store/control/operations/operations.js';
import { getPlatformUpgrade, listLaneSteps } from '../../store/control/platform-lane.js';
import type { Db } from '../../store/database.js';

/** A lane request, as the route received it. */
export interface LaneRequest {
  readonly source?: unknown;
  readonly label?: unknown;
  readonly drainMode?: unknown;
}

/** One lane operation with its record and steps. */
export interface LaneOperationView {
  readonly operation: Operation;
  readonly upgrade: PlatformUpgrade | null;
  readonly steps: readonly PlatformLaneStep[];
}

/** What the service knows of the release policy's settings. */
export interface PlatformLaneServiceOptions {
  /** `SVC_RELEASE_FETCH_HOOK` is set: `platform-<sha>` sources can be fetched. @default false */
  readonly fetchHookConfigured?: boolean;
}

/** The service. */
export class PlatformLaneService {
  constructor(
    private readonly db: Db,
    /** Starts the host agent when none runs; returns its pid when it started one. */
    private readonly ensureAgent: () => number | undefined,
    private readonly options: PlatformLaneServiceOptions = {},
  ) {}

  /** Queues a lane operation; one upgrade at a time. */
  queue(
    kind: 'platform.preflight' | 'platform.upgrade' | 'platform.smoke',
    request: LaneRequest,
  ): { operation: Operation; agentStarted: boolean } {
    const payload: Record<string, unknown> = {};
    if (kind !== 'platform.smoke') {
      if (typeof request.source !== 'string' || request.source.trim() === '')
        throw new ValidationError(
          'source must name a release artifact (.tar.gz or its folder), a built checkout folder or git:<ref>',
          { code: 'invalid_source' },
        );
      payload['source'] = request.source.trim();
      this.#checkSelector(request.source.trim());
    }
    if (request.label !== undefined) {
      if (typeof request.label !== 'string' || !/^[\w.+-]{1,100}$/.test(request.label))
        throw new ValidationError('label must be 1-100 letters, digits, dots, plus, hyphens or underscores', {
          code: 'invalid_label',
        });
      payload['label'] = request.label;
    }
    if (request.drainMode !== undefined) {
      if (kind !== 'platform.upgrade' || !['fail', 'wait', 'force'].includes(request.drainMode as string))
        throw new ValidationError('drainMode must be fail, wait or force (upgrades only)', {
          code: 'invalid_drain_mode',
        });
      payload['drainMode'] = request.drainMode;
    }
    const active = listOperations(this.db, { status: ['queued', 'running'], limit: 500 }).find(
      (op) => op.kind === kind,
    );
    if (active)
      throw new ConflictError(`${kind} ${active.id} is ${active.status}: one at a time`, {
        code: 'platform_operation_active',
        details: { operation: active.id },
      });
    const operation = enqueueOperation(this.db, {
      kind,
      app: null,
      ref: typeof payload['source'] === 'string' ? payload['source'] : null,
      payload,
      maxAttempts: kind === 'platform.upgrade' ? 5 : 3,
    });
    const pid = this.ensureAgent();
    return { operation, agentStarted: pid !== undefined };
  }

  /** A fetch selector must be `platform-<full sha>`, and something must be able to fetch it (ADR 0142). */
  #checkSelector(source: string): void {
    if (!isFetchSelector(source)) return;
    const selected = selectorCommit(source);
    if ('error' in selected)
      throw new ValidationError(`source: ${selected.error}`, { code: 'invalid_release_selector' });
    if (this.options.fetchHookConfigured !== true) {
      throw new ConflictError(
        `source ${source} is a release tag, and SVC_RELEASE_FETCH_HOOK is not set on this platform: nothing can fetch it (give the archive's path, or configure the fetch hook)`,
        { code: 'release_fetch_not_configured' },
      );
    }
  }

  /** One lane operation. */
  get(id: string): LaneOperationView {
    const operation = getOperation(this.db, id);
    if (!operation || !isPlatformKind(operation.kind))
      throw new NotFoundError(`platform operation "${id}" does not exist`, { code: 'operation_not_found' });
    return { operation, upgrade: getPlatformUpgrade(this.db, id) ?? null, steps: listLaneSteps(this.db, id) };
  }
}
