/**
 * The driver's jobs and allocations by app (ADR 0195): the app controller asks for one app's jobs
 * and allocations on every reconcile, and scanning all of them each time made a resync over 500
 * apps quadratic. Rebuilt after a job or allocation is removed; an app's records never change app.
 */
import type { AllocationRecord, DriverState, JobRecord } from './driver-state.js';

/** Jobs and allocations of the driver's state, by app. */
export class AppIndex {
  #byApp: { jobs: Map<string, JobRecord[]>; allocations: Map<string, AllocationRecord[]> } | undefined;

  constructor(private readonly state: DriverState) {}

  /** Says that a job or an allocation was added to or removed from the state. */
  changed(): void {
    this.#byApp = undefined;
  }

  /** Says that `record` was put in the state in place of `previous` (if any), of the same id. */
  jobPut(record: JobRecord, previous: JobRecord | undefined): void {
    const index = this.#byApp;
    if (index === undefined) return;
    if (previous !== undefined && previous.spec.app !== record.spec.app) return this.changed();
    const ofApp = index.jobs.get(record.spec.app);
    const at = previous === undefined ? -1 : (ofApp?.indexOf(previous) ?? -1);
    if (ofApp && at >= 0) ofApp[at] = record;
    else if (previous !== undefined) this.changed();
    else if (ofApp) ofApp.push(record);
    else index.jobs.set(record.spec.app, [record]);
  }

  /** Says that `record` was placed: added to the index as it is (a rebuild per placement was quadratic while 500 apps started). */
  allocationPlaced(record: AllocationRecord): void {
    const ofApp = this.#byApp?.allocations.get(record.app);
    if (ofApp) ofApp.push(record);
    else this.#byApp?.allocations.set(record.app, [record]);
  }

  /** The jobs of `app`. */
  jobsOf(app: string): readonly JobRecord[] {
    return this.#index().jobs.get(app) ?? [];
  }

  /** The allocations of `app`. */
  allocationsOf(app: string): readonly AllocationRecord[] {
    return this.#index().allocations.get(app) ?? [];
  }

  #index(): { jobs: Map<string, JobRecord[]>; allocations: Map<string, AllocationRecord[]> } {
    if (this.#byApp === undefined) {
      const jobs = new Map<string, JobRecord[]>();
      for (const job of Object.values(this.state.jobs)) {
        const list = jobs.get(job.spec.app);
        if (list) list.push(job);
        else jobs.set(job.spec.app, [job]);
      }
      const allocations = new Map<string, AllocationRecord[]>();
      for (const record of Object.values(this.state.allocations)) {
        const list = allocations.get(record.app);
        if (list) list.push(record);
        else allocations.set(record.app, [record]);
      }
      this.#byApp = { jobs, allocations };
    }
    return this.#byApp;
  }
}
