/**
 * The platform self-upgrade lane, run by the host agent: `platform.preflight` (stage, verify,
 * candidate), `platform.upgrade` (the same, then drain, promote, restart, postflight, and a
 * rollback when postflight fails) and `platform.smoke` (postflight on demand). A resumed upgrade
 * attempt continues from the phase the previous one recorded (ADR 0086).
 */
import type { EventEmitterPort } from '../../domain/events/event-port.js';
import type { Operation, RecoveryDecision } from '../../domain/operations/index.js';
import {
  readPlatformLanePayload,
  releasesToPrune,
  resumePlan,
  UpgradePhase,
  type PlatformUpgrade,
  type ReleaseSource,
  type UpgradeDrainMode,
} from '../../domain/platform/index.js';
import type { ApiRestarter, ReleaseManifest } from '../../platform/platform-lane/index.js';
import { waitForApi } from '../../platform/platform-lane/index.js';
import {
  activeAppOperations,
  closeInterruptedLaneSteps,
  getPlatformUpgrade,
  listPlatformBuildsOnDisk,
  markPlatformBuildPromoted,
  markPlatformBuildPruned,
  recordPlatformBuild,
  savePlatformUpgrade,
} from '../../store/control/platform-lane.js';
import type { OperationContext, OperationHandler, OperationHandlers } from '../operations/index.js';
import { LaneStepFailure, LaneSteps } from './lane-steps.js';
import type { LaneDataBackup } from './lane-data-backup.js';
import { prepareRelease, type ReleasePreparationOptions } from './release-preparation.js';

/** What the lane needs; wiring builds each part. */
export interface PlatformLaneOptions extends ReleasePreparationOptions {
  /** The running API's own tree, staged as the first release when `current` does not exist yet. */
  readonly baseline: () => ReleaseSource | undefined;
  readonly restarter: ApiRestarter;
  /** The databases' copy taken before the new release first starts, restored on rollback (ADR 0089). */
  readonly backup: LaneDataBackup;
  readonly events: EventEmitterPort;
  readonly drainMode: UpgradeDrainMode;
  readonly drainTimeoutMs: number;
  /** How long a started API may take to be healthy on the expected release. */
  readonly bootTimeoutMs: number;
  /** Releases kept on disk when an upgrade ends (ADR 0088). */
  readonly releaseKeep: number;
  /** Bearer token of the API's probes. */
  readonly token?: string;
}

/** The lane. */
export class PlatformLane {
  constructor(private readonly options: PlatformLaneOptions) {}

  /** Registers the three platform handlers. */
  register(handlers: OperationHandlers): void {
    const recovered = (operation: Operation, decision: RecoveryDecision) => this.#recovered(operation, decision);
    handlers.register('platform.preflight', { run: (ctx) => this.preflight(ctx), recovered });
    handlers.register('platform.upgrade', { run: (ctx) => this.upgrade(ctx), recovered } satisfies OperationHandler);
    handlers.register('platform.smoke', { run: (ctx) => this.smoke(ctx), recovered });
  }

  /** `platform.preflight`: stage, verify and check a candidate; changes nothing. */
  async preflight(ctx: OperationContext): Promise<Record<string, unknown>> {
    const steps = new LaneSteps(this.options.db, ctx);
    const release = await prepareRelease(this.options, ctx, steps);
    return { release: release.id, label: release.label, sha256: release.sha256, commit: release.commit };
  }

  /** `platform.smoke`: postflight checks of the running API, on demand. */
  async smoke(ctx: OperationContext): Promise<Record<string, unknown>> {
    const steps = new LaneSteps(this.options.db, ctx);
    const current = this.options.folders.current();
    const message = await steps.run('postflight', async () => this.#postflight(current?.id, ctx.signal));
    return { release: current?.id ?? null, message };
  }

  /** `platform.upgrade`, from the start or resumed from the recorded phase. */
  async upgrade(ctx: OperationContext): Promise<Record<string, unknown>> {
    const { db } = this.options;
    const id = ctx.operation.id;
    closeInterruptedLaneSteps(db, id);
    const steps = new LaneSteps(db, ctx);
    let record = getPlatformUpgrade(db, id);
    const plan = resumePlan(record?.phase);
    if (plan === 'done') return receipt(record!);
    if (plan === 'start') {
      const payload = readPlatformLanePayload(ctx.operation.payload);
      const drainMode = payload.drainMode ?? this.options.drainMode;
      if (record === undefined)
        await this.#emit(
          'platform.upgrade.started',
          'info',
          `Platform upgrade from ${payload.source ?? '(none)'} started`,
          ctx.operation,
          { source: payload.source, drainMode },
        );
      record = savePlatformUpgrade(db, id, { phase: UpgradePhase.preparing, drainMode });
      let release: ReleaseManifest;
      let from: string;
      try {
        from = await this.#baseline(ctx.signal);
        release = await prepareRelease(this.options, ctx, steps);
        record = savePlatformUpgrade(db, id, {
          phase: UpgradePhase.preparing,
          fromRelease: from,
          toRelease: release.id,
        });
        await steps.run('drain', () => this.#drain(drainMode, ctx.signal));
      } catch (error) {
        return this.#fail(ctx, `not promoted: ${(error as Error).message}`, error);
      }
      // From here a resumed attempt re-promotes, restarts and checks (phase first, then the swap).
      record = savePlatformUpgrade(db, id, { phase: UpgradePhase.promoted });
      await steps.run('promote', async () => {
        this.options.folders.swap(release.id);
        markPlatformBuildPromoted(db, release.id);
        return `current -> releases/${release.id} (was ${from})`;
      });
    }
    if (plan === 'start' || plan === 'restart-and-check') {
      const target = record!.toRelease!;
      try {
        if (plan === 'restart-and-check') {
          await steps.run('promote', async () => {
            this.options.folders.swap(target);
            return `resumed: current -> releases/${target}`;
          });
        }
        await steps.run('restart', () => this.#restart(id, 'backup'));
        const message = await steps.run('postflight', () => this.#postflight(target, ctx.signal));
        record = savePlatformUpgrade(db, id, { phase: UpgradePhase.succeeded, message });
        const pruned = this.#prune(ctx, [target, record.fromRelease]);
        await this.#emit('platform.upgrade.succeeded', 'info', `Platform upgraded to ${target}`, ctx.operation, {
          from: record.fromRelease,
          to: target,
          pruned,
        });
        return { ...receipt(record), pruned };
      } catch (error) {
        if (ctx.signal.aborted) throw error;
        record = savePlatformUpgrade(db, id, {
          phase: UpgradePhase.rollingBack,
          message: `${(error as Error).message}`,
        });
        await this.#emit(
          'platform.upgrade.failed',
          'warning',
          `Platform upgrade to ${target} failed its ${error instanceof LaneStepFailure ? error.step : 'postflight'}; rolling back`,
          ctx.operation,
          {
            from: record.fromRelease,
            to: target,
            reason: (error as Error).message,
          },
        );
      }
    }
    return this.#rollback(ctx, steps, getPlatformUpgrade(db, id)!);
  }

  async #rollback(ctx: OperationContext, steps: LaneSteps, record: PlatformUpgrade): Promise<never> {
    const { db } = this.options;
    const from = record.fromRelease;
    const why = record.message ?? 'postflight failed';
    if (from === null) return this.#fail(ctx, `${why}; no previous release to roll back to`);
    try {
      await steps.run('rollback', async () => {
        this.options.folders.swap(from);
        markPlatformBuildPromoted(db, from);
        const restarted = await this.#restart(ctx.operation.id, 'keep-schema');
        return `current -> releases/${from}; ${restarted}; ${await this.#postflight(from, ctx.signal)}`;
      });
    } catch (error) {
      if (ctx.signal.aborted) throw error;
      savePlatformUpgrade(db, ctx.operation.id, {
        phase: UpgradePhase.failed,
        message: `${why}; the rollback failed too: ${(error as Error).message}; the databases' copy from before the upgrade is in ${this.options.backup.folder(ctx.operation.id)}`,
      });
      await this.#emit('platform.upgrade.failed', 'critical', `Platform rollback to ${from} failed`, ctx.operation, {
        from,
        to: record.toRelease,
        reason: (error as Error).message,
      });
      throw new Error(`${why}; the rollback to ${from} failed too: ${(error as Error).message}`);
    }
    savePlatformUpgrade(db, ctx.operation.id, { phase: UpgradePhase.rolledBack });
    this.#prune(ctx, [from]);
    await this.#emit(
      'platform.upgrade.rolled_back',
      'warning',
      `Platform upgrade to ${record.toRelease ?? '?'} rolled back to ${from}`,
      ctx.operation,
      { from, to: record.toRelease, reason: why },
    );
    throw new Error(`rolled back to ${from}: ${why}`);
  }

  async #fail(ctx: OperationContext, message: string, cause?: unknown): Promise<never> {
    if (ctx.signal.aborted && cause instanceof Error) throw cause;
    savePlatformUpgrade(this.options.db, ctx.operation.id, { phase: UpgradePhase.failed, message });
    this.#prune(ctx, []);
    await this.#emit('platform.upgrade.failed', 'warning', 'Platform upgrade failed before promotion', ctx.operation, {
      reason: message,
    });
    throw new Error(message, cause === undefined ? undefined : { cause });
  }

  /** The release `current` points at; the running API's tree is staged and linked first when there is none. */
  async #baseline(signal: AbortSignal): Promise<string> {
    const current = this.options.folders.current();
    if (current) return current.id;
    const source = this.options.baseline();
    if (!source)
      throw new Error(
        'no current release and the running API is not a built tree: start it from a built checkout or a release first',
      );
    const staged = await this.options.folders.stage(source, { signal });
    const m = staged.manifest;
    recordPlatformBuild(this.options.db, {
      id: m.id,
      label: m.label,
      version: m.version,
      commit: m.commit,
      sha256: m.sha256,
      source: m.source,
      verification: 'off',
      verificationMessage: 'the running build, installed as the first release',
    });
    this.options.folders.swap(m.id);
    markPlatformBuildPromoted(this.options.db, m.id);
    return m.id;
  }

  /** The drain gate. */
  async #drain(mode: UpgradeDrainMode, signal: AbortSignal): Promise<string> {
    const active = activeAppOperations(this.options.db);
    if (mode === 'force')
      return `force: gate skipped with ${active.running} running and ${active.queued} queued app operation(s); running ones are interrupted by the restart and recovered`;
    if (mode === 'fail') {
      if (active.running + active.queued > 0)
        throw new LaneStepFailure(
          'drain',
          `${active.running} running and ${active.queued} queued app operation(s): SVC_DRAIN_MODE=fail refuses to upgrade`,
          'operations_active',
        );
      return 'fail: no active app operations';
    }
    const started = Date.now();
    const deadline = started + this.options.drainTimeoutMs;
    // Another process's rows: polled (no event crosses processes). New claims are held meanwhile.
    for (;;) {
      signal.throwIfAborted();
      const now = activeAppOperations(this.options.db);
      if (now.running === 0)
        return `wait: ${active.running} running app operation(s) finished in ${Date.now() - started} ms; ${now.queued} queued wait for the new API`;
      if (Date.now() > deadline)
        throw new LaneStepFailure(
          'drain',
          `${now.running} app operation(s) still running after ${this.options.drainTimeoutMs} ms (SVC_DRAIN_TIMEOUT)`,
          'drain_timeout',
        );
      await new Promise((resolve) => setTimeout(resolve, 100));
    }
  }

  /**
   * Restarts the API from `current`. Between the stop and the start, while no API runs, an upgrade
   * copies the databases (once per upgrade: before the new release first starts and migrates). A
   * rollback leaves them as they are: a platform rollback does not undo schema changes, and the
   * previous release runs on the newer schema (spec "Versioning" 3, ADR 0089). With a restart
   * command or a supervisor (`stop` mode) the API cannot be stopped apart from its start: the copy is
   * taken while it runs (app operations are held).
   */
  async #restart(operationId: string, data: 'backup' | 'keep-schema'): Promise<string> {
    const { restarter, backup } = this.options;
    const stopped = await restarter.stopRecorded();
    const note = data === 'backup' ? await backup.take(operationId) : 'the databases keep their schema';
    await restarter.startStopped(stopped);
    return `API process ${stopped.replaced ?? '(none)'} ${stopped.stopped ? 'stopped' : 'replaced'}; ${note}; started from ${this.options.folders.currentLink}`;
  }

  async #postflight(release: string | undefined, signal: AbortSignal): Promise<string> {
    const outcome = await waitForApi(() => this.options.restarter.record()?.url, {
      ...(release === undefined ? {} : { release }),
      timeoutMs: this.options.bootTimeoutMs,
      signal,
      // A started API that exits fails the check at once instead of at the deadline.
      alive: () => this.options.restarter.startedAlive() !== false,
      ...(this.options.token === undefined ? {} : { token: this.options.token }),
    });
    if (!outcome.ok) throw new LaneStepFailure('postflight', outcome.reason, 'postflight_failed');
    return outcome.reason;
  }

  /**
   * Removes release folders beyond the `releaseKeep` most recently used, never `current`, the
   * upgrade's own releases, or one a live process runs from; the records stay as history. Best
   * effort: a folder that cannot be removed now is tried again after the next upgrade.
   */
  #prune(ctx: OperationContext, protect: readonly (string | null)[]): string[] {
    const { folders, db } = this.options;
    const keep = new Set(protect.filter((id): id is string => id !== null));
    const current = folders.current()?.id;
    if (current !== undefined) keep.add(current);
    const onDisk = listPlatformBuildsOnDisk(db)
      .map((b) => b.id)
      .filter((id) => folders.has(id));
    const pruned: string[] = [];
    for (const id of releasesToPrune(onDisk, this.options.releaseKeep, keep, (id) => folders.inUse(id))) {
      try {
        folders.remove(id);
        markPlatformBuildPruned(db, id);
        pruned.push(id);
      } catch (error) {
        ctx.logger.warn({ release: id, err: (error as Error).message }, 'removing an old platform release failed');
      }
    }
    if (pruned.length > 0) ctx.logger.info({ pruned, keep: this.options.releaseKeep }, 'old platform releases removed');
    return pruned;
  }

  #recovered(operation: Operation, decision: RecoveryDecision): void {
    closeInterruptedLaneSteps(this.options.db, operation.id);
    if (decision.action === 'fail' && operation.kind === 'platform.upgrade') {
      const record = getPlatformUpgrade(this.options.db, operation.id);
      if (record && resumePlan(record.phase) !== 'done')
        savePlatformUpgrade(this.options.db, operation.id, { phase: UpgradePhase.failed, message: decision.reason });
    }
  }

  async #emit(
    type: string,
    severity: 'info' | 'warning' | 'critical',
    title: string,
    operation: Operation,
    metadata: Record<string, unknown>,
  ): Promise<void> {
    try {
      await this.options.events.emit({
        type,
        severity,
        title,
        metadata: { operationId: operation.id, correlationKey: 'platform:upgrade', ...metadata },
      });
    } catch {
      // Events are best effort here: the operation row and steps are the record.
    }
  }
}

function receipt(record: PlatformUpgrade): Record<string, unknown> {
  return {
    phase: record.phase,
    from: record.fromRelease,
    to: record.toRelease,
    drainMode: record.drainMode,
    message: record.message,
  };
}
