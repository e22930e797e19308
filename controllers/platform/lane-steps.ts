/**
 * Recorded steps of a platform lane operation: each step is a row (running, then succeeded or
 * failed with a message), and the operation's stage follows it (which holds app operations
 * during the hold stages).
 */
import type { UpgradeStep } from '../../domain/platform/index.js';
import { endLaneStep, startLaneStep } from '../../store/control/platform-lane.js';
import type { Db } from '../../store/database.js';
import type { OperationContext } from '../operations/index.js';

/** Steps that change the runtime (promotion, restarts). */
const MUTABLE: ReadonlySet<UpgradeStep> = new Set<UpgradeStep>(['promote', 'restart', 'postflight', 'rollback']);

/** A failed step: the lane ends (or rolls back) with its message. */
export class LaneStepFailure extends Error {
  constructor(
    readonly step: UpgradeStep,
    message: string,
    readonly code = 'platform_step_failed',
  ) {
    super(message);
    this.name = 'LaneStepFailure';
  }
}

/** Records the steps of one attempt. */
export class LaneSteps {
  constructor(
    private readonly db: Db,
    private readonly context: OperationContext,
  ) {}

  /** Runs `body` as step `step`: its message on success; a thrown error fails the step (and is rethrown as a {@link LaneStepFailure}). */
  async run(step: UpgradeStep, body: () => Promise<string>): Promise<string> {
    this.context.signal.throwIfAborted();
    this.context.stage(step, MUTABLE.has(step));
    const seq = startLaneStep(this.db, this.context.operation.id, this.context.operation.attempts, step);
    try {
      const message = await body();
      endLaneStep(this.db, seq, 'succeeded', message);
      this.context.logger.info({ step, message }, 'platform lane step succeeded');
      return message;
    } catch (error) {
      const message = error instanceof Error ? error.message : String(error);
      endLaneStep(this.db, seq, 'failed', message);
      this.context.logger.warn({ step, err: message }, 'platform lane step failed');
      if (error instanceof LaneStepFailure) throw error;
      throw new LaneStepFailure(step, message, (error as { code?: string }).code ?? 'platform_step_failed');
    }
  }

  /** Records a skipped step with the reason. */
  skip(step: UpgradeStep, reason: string): void {
    startLaneStep(this.db, this.context.operation.id, this.context.operation.attempts, step, 'skipped', reason);
  }
}
