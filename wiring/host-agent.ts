/**
 * Composition root of the host agent (`svc agent`): control.db, an event service that records
 * the lane's events (the API's dispatcher delivers them), the release folders, the API restarter,
 * the candidate check, the signature hook, and an operation worker whose only handlers are the
 * platform lane's.
 */
import fs from 'node:fs';
import path from 'node:path';
import type { SvcConfig } from '../platform/config.js';
import type { Logger } from '../platform/logger.js';
import { packageRoot, releaseFolder } from '../platform/build-info.js';
import { openControlStore } from '../store/open-stores.js';
import { SINK_TARGET } from '../store/control/event-outbox.js';
import { systemClock } from '../domain/events/clock.js';
import { EventService } from '../controllers/events/event-service.js';
import { NotificationService } from '../controllers/events/notification-service.js';
import { OperationHandlers, OperationWorker } from '../controllers/operations/index.js';
import { HostAgent, LaneDataBackup, PlatformLane } from '../controllers/platform/index.js';
import {
  ApiRestarter,
  ArtifactSource,
  BuiltCheckoutSource,
  FetchedReleaseSource,
  GitRefSource,
  ReleaseFolders,
  apiAlive,
  acquireAgentLock,
  checkCandidate,
  isArtifactFolder,
  isReleaseArtifact,
  launchAgent,
  readApiProcess,
  reapCandidates,
  releaseListeners,
  handOffsSettled,
  runVerifyHook,
} from '../platform/platform-lane/index.js';
import { isFetchSelector, type ReleaseSource } from '../domain/platform/index.js';

/** A running host agent. */
export interface RunningHostAgent {
  readonly agent: HostAgent;
  readonly folders: ReleaseFolders;
  close(): Promise<void>;
}

/** Options that tests shorten. */
export interface HostAgentTuning {
  /** @default 10000 */
  readonly idleExitMs?: number;
}

/**
 * `git:<ref>` builds the ref from the platform repository; `platform-<sha>` is fetched by
 * `SVC_RELEASE_FETCH_HOOK`; a `.tar.gz`/`.tgz` or a folder holding `svc` and `svc-release.json` is
 * the release artifact (its `.sig` checked with `SVC_RELEASE_PUBLIC_KEY`); anything else is a
 * built checkout folder.
 */
function sourceFor(config: SvcConfig, spec: string): ReleaseSource {
  const publicKey = config.releasePublicKey === undefined ? {} : { publicKey: config.releasePublicKey };
  if (spec.startsWith('git:')) return new GitRefSource(config.platformRepo ?? packageRoot(), spec.slice(4));
  if (isFetchSelector(spec)) {
    if (config.releaseFetchHook === undefined)
      throw new Error(`${spec} is a release tag, and SVC_RELEASE_FETCH_HOOK is not set: nothing can fetch it`);
    return new FetchedReleaseSource(spec, {
      hook: config.releaseFetchHook,
      ...(config.releaseRepository === undefined ? {} : { repository: config.releaseRepository }),
      ...publicKey,
    });
  }
  if (isReleaseArtifact(spec)) return new ArtifactSource(spec, publicKey);
  return new BuiltCheckoutSource(spec);
}

/** The running API's own tree (a built checkout, or the release artifact's folder), staged as the first release. */
function baselineSource(platformDir: string): ReleaseSource | undefined {
  const root = readApiProcess(platformDir)?.root;
  if (root === undefined) return undefined;
  if (fs.existsSync(path.join(root, 'dist', 'cli', 'main.js'))) return new BuiltCheckoutSource(root);
  if (isArtifactFolder(root)) return new ArtifactSource(root);
  return undefined;
}

/** Starts the host agent for `config`'s data folder; a live agent there is a conflict. */
export function startHostAgent(config: SvcConfig, logger: Logger, tuning: HostAgentTuning = {}): RunningHostAgent {
  const log = logger.child({ service: 'host-agent' });
  const releaseLock = acquireAgentLock(config.platformDir);
  const ownRelease = realpath(releaseFolder() ?? packageRoot());
  // A newer release may have migrated control.db before its postflight failed: this agent opens it
  // all the same, to finish the rollback (ADR 0089).
  const store = openControlStore(config.dataDir);
  const folders = new ReleaseFolders(config.platformDir);
  folders.cleanStaging();
  const scratchDir = path.join(config.platformDir, 'candidates');
  const reaped = reapCandidates(scratchDir);
  if (reaped > 0) log.warn({ reaped }, 'candidate APIs of a previous agent stopped');
  const environment = config.eventEnvironment ?? config.environment;
  const notifications = new NotificationService(
    store.db,
    systemClock,
    { allowPrivate: config.notifyAllowPrivate },
    config.eventSource,
    environment,
  );
  const events = new EventService({
    db: store.db,
    clock: systemClock,
    source: config.eventSource,
    environment,
    logger: log,
    deliveryTargets: (row) => [
      ...(config.eventSinkUrl === undefined ? [] : [SINK_TARGET]),
      ...notifications.targetsFor(row.severity),
    ],
  });
  const restarter = new ApiRestarter({
    platformDir: config.platformDir,
    currentLink: folders.currentLink,
    env: { ...process.env, SVC_DATA_DIR: config.dataDir, SVC_PLATFORM_DIR: config.platformDir },
    ...(config.agentRestartCommand === undefined ? {} : { restartCommand: config.agentRestartCommand }),
    mode: config.agentRestartMode,
  });
  const lane = new PlatformLane({
    db: store.db,
    folders,
    sourceFor: (spec) => sourceFor(config, spec),
    baseline: () => baselineSource(config.platformDir),
    restarter,
    backup: new LaneDataBackup({
      db: store.db,
      dataDir: config.dataDir,
      backupsDir: path.join(config.platformDir, 'backups'),
    }),
    candidate: (options) =>
      checkCandidate({
        ...options,
        env: process.env,
        timeoutMs: config.upgradeBootTimeoutMs,
        ...(config.apiToken === undefined ? {} : { token: config.apiToken }),
      }),
    ...(config.releaseVerifyHook === undefined
      ? {}
      : { verify: (dir, manifest, signal) => runVerifyHook(config.releaseVerifyHook!, dir, manifest, { signal }) }),
    signaturePolicy: config.releaseSignaturePolicy,
    ...(config.releasePublicKey === undefined ? {} : { publicKeyFingerprint: config.releasePublicKey.fingerprint }),
    events,
    drainMode: config.drainMode,
    drainTimeoutMs: config.drainTimeoutMs,
    releaseKeep: config.releaseKeep,
    bootTimeoutMs: config.upgradeBootTimeoutMs,
    scratchDir,
    ...(config.apiToken === undefined ? {} : { token: config.apiToken }),
  });
  const handlers = new OperationHandlers();
  lane.register(handlers);
  const worker = new OperationWorker({
    db: store.db,
    handlers,
    logger: log,
    concurrency: 1,
    leaseMs: config.operationLeaseMs,
  });
  const agent = new HostAgent({
    db: store.db,
    worker,
    logger: log,
    apiAlive: () => apiAlive(readApiProcess(config.platformDir)),
    dataPresent: () => fs.existsSync(store.file),
    noApi: () => {
      const released = releaseListeners();
      if (released.length > 0) log.info({ listeners: released }, 'no API runs: listening sockets released');
    },
    handOver: () => successorReason(folders, ownRelease),
    ...(tuning.idleExitMs === undefined ? {} : { idleExitMs: tuning.idleExitMs }),
  });
  agent.start();
  log.info({ platformDir: config.platformDir, current: folders.current()?.id ?? null }, 'host agent started');
  let closing: Promise<void> | undefined;
  return {
    agent,
    folders,
    close() {
      closing ??= (async () => {
        await agent.stop();
        await events.close();
        store.db.close();
        releaseLock();
        if (agent.handingOver) {
          handOver(config, log, folders);
          // The successor takes the listening sockets from this process: it stays until it has.
          await handOffsSettled();
        }
      })();
      return closing;
    },
  };
}

function realpath(dir: string): string {
  try {
    return fs.realpathSync(dir);
  } catch {
    return path.resolve(dir);
  }
}

/** Why this agent should leave for the release `current` points at, or undefined when it runs that release. */
function successorReason(folders: ReleaseFolders, ownRelease: string): string | undefined {
  const current = folders.current();
  if (current === undefined || !folders.has(current.id)) return undefined;
  const dir = realpath(current.dir);
  return dir === ownRelease ? undefined : `current points at ${current.id}; this agent runs ${ownRelease}`;
}

/**
 * Starts the successor from the current release (after this agent released its lock), unless a
 * service manager runs the agent (`SVC_AGENT=off`): then leaving is enough, and the unit starts the
 * agent again from `current`.
 */
function handOver(config: SvcConfig, log: Logger, folders: ReleaseFolders): void {
  const current = folders.current();
  if (config.agentMode === 'off' || current === undefined) {
    log.info({ release: current?.id ?? null }, 'host agent left for its service manager to start the current release');
    return;
  }
  try {
    const dir = realpath(current.dir);
    const pid = launchAgent({
      platformDir: config.platformDir,
      releaseDir: dir,
      dataDir: config.dataDir,
      cwd: process.cwd(),
      env: { ...process.env, SVC_DATA_DIR: config.dataDir, SVC_PLATFORM_DIR: config.platformDir },
    });
    log.info(
      { release: current.id, successor: pid ?? null },
      pid === undefined ? 'another host agent already runs' : 'host agent handed over to the current release',
    );
  } catch (error) {
    // The API starts an agent again when lane work is queued (SVC_AGENT=auto).
    log.error({ err: error, release: current.id }, 'starting the host agent of the current release failed');
  }
}
