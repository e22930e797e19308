/**
 * Scheduler targets: one scheduler per region. The local driver is one local target per region;
 * other drivers map regions to their own targets.
 */
import { LOCAL_REGION, type Scheduler } from '../../domain/scheduler/index.js';

/** Schedulers by region, opened on first use. */
export class SchedulerTargets {
  private readonly opened = new Map<string, Promise<Scheduler>>();

  /**
   * @param runsImages true when the driver runs container images (kubernetes, or the local driver
   *   with containers): image releases are then translated to image tasks instead of being refused
   *   as not runnable on the host.
   * @param onHost true when the driver runs apps on this host (its free memory is their room).
   */
  constructor(
    private readonly open: (region: string) => Promise<Scheduler>,
    readonly runsImages = false,
    readonly onHost = !runsImages,
  ) {}

  /** The scheduler of `region` (opened on first use). */
  get(region: string = LOCAL_REGION): Promise<Scheduler> {
    let target = this.opened.get(region);
    if (!target) {
      target = this.open(region);
      this.opened.set(region, target);
      target.catch(() => this.opened.delete(region));
    }
    return target;
  }

  /** Every scheduler opened so far, with its region. */
  async all(): Promise<{ region: string; scheduler: Scheduler }[]> {
    const out: { region: string; scheduler: Scheduler }[] = [];
    for (const [region, target] of this.opened) out.push({ region, scheduler: await target });
    return out;
  }
}
