/**
 * The view of active (unresolved) incident groups, kept up to date incrementally: groups touched by
 * a commit are re-read, and everything is re-read when a snooze ends (a snooze ending changes the
 * view without a write).
 */
import type { Db } from '../../store/database.js';
import {
  activeGroupOf,
  activeGroups,
  nextSnoozeEndMs,
  type ActiveGroup,
  type GroupScope,
} from '../../store/control/events.js';

/**
 * Touched groups re-read one by one at most; past it the next read re-reads the whole view in one
 * query. Without a cap a host that records events of many distinct groups while nobody reads the view
 * held every touched group in memory, and the next read re-read each with its own query.
 */
export const MAX_GROUPS_TO_REREAD = 1000;

/** Identity of an incident group. */
function groupId(scope: GroupScope): string {
  return JSON.stringify([scope.source, scope.app, scope.environment, scope.correlationKey]);
}

/** The active incident groups of one event database. */
export class ActiveGroupsView {
  private view: { groups: Map<string, ActiveGroup>; list: ActiveGroup[]; validUntilMs: number } | undefined;
  private readonly dirtyGroups = new Map<string, GroupScope>();

  constructor(private readonly db: Db) {}

  /**
   * Marks the group of `scope` to be re-read at the next {@link list}. Without a view (none read yet,
   * or too many groups touched since) the next read re-reads everything, so nothing is marked.
   */
  touch(scope: GroupScope): void {
    if (this.view === undefined) return;
    if (this.dirtyGroups.size >= MAX_GROUPS_TO_REREAD) {
      this.view = undefined;
      this.dirtyGroups.clear();
      return;
    }
    this.dirtyGroups.set(groupId(scope), scope);
  }

  /** Groups marked to be re-read one by one at the next read (at most {@link MAX_GROUPS_TO_REREAD}). */
  get groupsToReread(): number {
    return this.dirtyGroups.size;
  }

  /**
   * Unresolved incident groups, most recently seen first. Served from the incrementally maintained
   * view: after a commit only the touched groups are re-read; after a snooze end, all of them.
   */
  list(nowMs: number): ActiveGroup[] {
    let view = this.view;
    if (!view || nowMs >= view.validUntilMs) {
      this.dirtyGroups.clear();
      const groups = new Map(activeGroups(this.db, nowMs).map((g) => [groupId(g), g]));
      view = {
        groups,
        list: [...groups.values()],
        validUntilMs: nextSnoozeEndMs(this.db, nowMs) ?? Number.POSITIVE_INFINITY,
      };
      this.view = view;
      return view.list;
    }
    if (this.dirtyGroups.size > 0) {
      for (const [id, scope] of this.dirtyGroups) {
        const group = activeGroupOf(this.db, scope, nowMs);
        if (group) view.groups.set(id, group);
        else view.groups.delete(id);
      }
      this.dirtyGroups.clear();
      view.list = [...view.groups.values()].sort((a, b) =>
        a.lastSeen < b.lastSeen ? 1 : a.lastSeen > b.lastSeen ? -1 : 0,
      );
      view.validUntilMs = nextSnoozeEndMs(this.db, nowMs) ?? Number.POSITIVE_INFINITY;
    }
    return view.list;
  }
}
