/**
 * The platform rollup (`GET /api/ops/platform`): the running build, apps, operations, incidents and
 * the snapshot inventory per app with its policy keep count and over-limit totals.
 */

/** Snapshot state of one app-owned database. */
export interface SnapshotReadinessFacts {
  readonly app: string;
  readonly database: string;
  readonly snapshots: number;
  readonly keep: number;
  readonly overLimit: number;
  readonly latestRestorePoint: {
    readonly filename: string;
    readonly createdAt: string;
    readonly sizeBytes: number;
  } | null;
}

/** Snapshot totals over every app-owned database. */
export interface SnapshotRollup {
  readonly apps: readonly {
    readonly app: string;
    readonly database: string;
    readonly snapshots: number;
    readonly keep: number;
    readonly overLimit: number;
    readonly latestAt: string | null;
  }[];
  readonly totals: {
    readonly databases: number;
    readonly snapshots: number;
    /** Sum of the policies' keep counts: the dumps retention would leave. */
    readonly keep: number;
    readonly overLimit: number;
    readonly appsOverLimit: number;
    readonly appsWithoutSnapshot: number;
  };
}

/** Totals of the snapshot inventory. */
export function rollupSnapshots(entries: readonly SnapshotReadinessFacts[]): SnapshotRollup {
  const apps = [...entries]
    .sort((a, b) => a.app.localeCompare(b.app))
    .map((e) => ({
      app: e.app,
      database: e.database,
      snapshots: e.snapshots,
      keep: e.keep,
      overLimit: e.overLimit,
      latestAt: e.latestRestorePoint?.createdAt ?? null,
    }));
  return {
    apps,
    totals: {
      databases: apps.length,
      snapshots: apps.reduce((n, a) => n + a.snapshots, 0),
      keep: apps.reduce((n, a) => n + a.keep, 0),
      overLimit: apps.reduce((n, a) => n + a.overLimit, 0),
      appsOverLimit: apps.filter((a) => a.overLimit > 0).length,
      appsWithoutSnapshot: apps.filter((a) => a.snapshots === 0).length,
    },
  };
}

/** Facts of the rollup. */
export interface PlatformFacts {
  readonly build: {
    readonly name: string;
    readonly version: string;
    readonly label: string;
    readonly commit: string | null;
    readonly node: string;
  };
  readonly profile: string;
  readonly environment: string;
  readonly startedAt: string;
  readonly apps: readonly {
    readonly name: string;
    readonly valid: boolean;
    readonly deploy: boolean;
    readonly released: boolean;
    readonly deleted: boolean;
  }[];
  readonly operations: Readonly<Record<string, number>>;
  readonly drain: unknown;
  readonly activeIncidents: number;
  readonly snapshots: readonly SnapshotReadinessFacts[];
}

/** The rollup. */
export function rollupPlatform(facts: PlatformFacts) {
  const live = facts.apps.filter((a) => !a.deleted);
  return {
    platform: { ...facts.build, profile: facts.profile, environment: facts.environment, startedAt: facts.startedAt },
    apps: {
      total: live.length,
      invalid: live.filter((a) => !a.valid).length,
      deployEnabled: live.filter((a) => a.deploy).length,
      released: live.filter((a) => a.released).length,
    },
    operations: { counts: facts.operations, drain: facts.drain },
    incidents: { active: facts.activeIncidents },
    snapshots: rollupSnapshots(facts.snapshots),
  };
}
