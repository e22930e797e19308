/**
 * The routing controller's reconciler: one key (`tunnel`). It derives the desired ingress from the
 * apps (deployable, released, healthy; minus hostnames toggled off), plans the tunnel config file
 * against what is on disk, writes it atomically only when it differs (which also corrects hand
 * edits), runs the optional reload command, and writes each app's `Routed` condition.
 */
import path from 'node:path';
import type { CanonicalAppSpec } from '../../domain/spec/index.js';
import {
  desiredIngress,
  disabledHostnames,
  isGatewayManaged,
  normalizeHostname,
  planTunnelConfig,
  publicProcess,
  type AddressOptions,
  type DesiredRule,
  type EndpointToggle,
  type RoutableApp,
  type TunnelConfig,
} from '../../domain/routing/index.js';
import {
  getCondition,
  setCondition,
  summarizeReady,
  type Condition,
  type ConditionInput,
} from '../../domain/status/conditions.js';
import fs from 'node:fs';
import {
  readTunnelConfigFile,
  renderTunnelConfig,
  runReloadCommand,
  writeFileAtomic,
  type ReloadResult,
  type TunnelFileRead,
} from '../../platform/edge/index.js';
import type { Logger } from '../../platform/logger.js';
import type { Db } from '../../store/database.js';
import {
  AppRowsReader,
  getApp,
  setAppStatus,
  hasSpec,
  type AppRow,
  type AppWithSpec,
} from '../../store/control/apps.js';
import { listEndpointToggles } from '../../store/control/routing-toggles.js';
import { writeRederivable } from '../../store/rederivable-writes.js';
import type { Reconciler } from '../runtime/controller.js';

/** The single key of the routing controller. */
export const TUNNEL_KEY = 'tunnel';

/** Where and how the tunnel config is written. */
export interface TunnelSettings {
  readonly file: string;
  readonly tunnel: string;
  readonly credentialsFile: string;
  /** Run with `/bin/sh -c` after a change. */
  readonly reloadCommand?: string;
  readonly networking?: AddressOptions['networking'];
  readonly nodeIp?: string;
}

export interface RoutingReconcilerOptions {
  readonly db: Db;
  readonly tunnel: TunnelSettings;
  readonly logger: Logger;
  /** The wake gateway's address for the edge (the control plane URL), once it listens. */
  readonly gatewayUrl: () => string | undefined;
  /** Called on every reconcile with the rules, apps and toggles it read (the wake gateway's host map follows them). */
  readonly onRules?: (
    rules: readonly DesiredRule[],
    apps: readonly AppRow[],
    toggles: readonly EndpointToggle[],
  ) => void;
  readonly now?: () => Date;
}

/** What the last reconcile did, for `GET /api/tunnel/ingress`. */
export interface RoutingState {
  readonly file: string;
  readonly config: TunnelConfig | undefined;
  readonly rules: readonly DesiredRule[];
  readonly lastReconciledAt: string | undefined;
  readonly lastChangedAt: string | undefined;
  readonly lastReload: (ReloadResult & { readonly at: string }) | undefined;
  readonly lastError: string | undefined;
  /** Reconciles started so far; `routeApp` waits for one that started after its request. */
  readonly generation: number;
}

/** The routing reconciler plus the state it keeps for the API. */
export interface RoutingReconciler extends Reconciler {
  state(): RoutingState;
}

/** True when the app's deployment should receive traffic: deployed, and healthy or gateway-managed. */
export function isRoutable(app: AppRow, spec: CanonicalAppSpec): boolean {
  if (!spec.deploy || app.release === null || app.deletedAt !== null) return false;
  const { conditions } = app;
  if (getCondition(conditions, 'Deployed')?.status !== 'True') return false;
  if (getCondition(conditions, 'Healthy')?.status === 'True') return true;
  const process = publicProcess(spec);
  return process !== undefined && isGatewayManaged(spec, process);
}

/** Creates the routing reconciler. */
export function createRoutingReconciler(options: RoutingReconcilerOptions): RoutingReconciler {
  const now = options.now ?? (() => new Date());
  // The parsed file, reused while its identity (inode, size, mtime) is unchanged: most reconciles
  // change nothing, and parsing YAML on each would cost the event loop the wake gateway shares.
  let cached: { key: string; read: TunnelFileRead } | undefined;
  const identity = (): string | undefined => {
    try {
      const st = fs.statSync(options.tunnel.file);
      return `${st.ino}:${st.size}:${st.mtimeMs}:${st.ctimeMs}`;
    } catch {
      return undefined;
    }
  };
  // Each reconcile reads every app; only the rows changed since the previous one are parsed (ADR 0190).
  const appRows = new AppRowsReader(options.db);
  const readObserved = (): TunnelFileRead => {
    const key = identity();
    if (key !== undefined && cached?.key === key) return cached.read;
    const read = readTunnelConfigFile(options.tunnel.file);
    cached = key === undefined ? undefined : { key, read };
    return read;
  };
  let state: RoutingState = {
    file: options.tunnel.file,
    config: undefined,
    rules: [],
    lastReconciledAt: undefined,
    lastChangedAt: undefined,
    lastReload: undefined,
    lastError: undefined,
    generation: 0,
  };
  return {
    name: 'routing',
    listKeys: () => [TUNNEL_KEY],
    state: () => state,
    async reconcile(key) {
      if (key !== TUNNEL_KEY) return;
      state = { ...state, generation: state.generation + 1 };
      const apps = appRows
        .list()
        .filter(hasSpec)
        .filter((a) => a.deletedAt === null);
      const routable: RoutableApp[] = apps.map((a) => ({ spec: a.spec, routable: isRoutable(a, a.spec) }));
      const toggles = listEndpointToggles(options.db);
      const disabled = disabledHostnames(toggles);
      const gatewayUrl = options.gatewayUrl();
      const rules = desiredIngress(routable, disabled, {
        networking: options.tunnel.networking,
        nodeIp: options.tunnel.nodeIp,
        ...(gatewayUrl ? { gatewayUrl } : {}),
      });
      options.onRules?.(rules, apps, toggles);
      const observed = readObserved();
      const plan = planTunnelConfig(observed.state === 'ok' ? observed.config : undefined, rules, {
        tunnel: options.tunnel.tunnel,
        credentialsFile: options.tunnel.credentialsFile,
      });
      const at = now().toISOString();
      let error: string | undefined;
      if (plan.changed) {
        try {
          writeFileAtomic(options.tunnel.file, renderTunnelConfig(plan.config));
          options.logger.info(
            {
              file: options.tunnel.file,
              added: plan.added,
              removed: plan.removed,
              updated: plan.updated,
              repaired: plan.repaired || observed.state === 'unreadable',
            },
            'tunnel config written',
          );
          state = { ...state, lastChangedAt: at };
          if (options.tunnel.reloadCommand !== undefined) {
            const reload = await runReloadCommand(options.tunnel.reloadCommand, {
              SVC_TUNNEL_CONFIG: options.tunnel.file,
              SVC_TUNNEL_NAME: options.tunnel.tunnel,
            });
            state = { ...state, lastReload: { ...reload, at } };
            if (!reload.ok) options.logger.warn({ exitCode: reload.exitCode }, 'tunnel reload command failed');
          }
        } catch (cause) {
          error = `writing ${path.basename(options.tunnel.file)} failed: ${(cause as Error).message}`;
          options.logger.error({ err: cause, file: options.tunnel.file }, 'tunnel config write failed');
        }
      }
      state = {
        ...state,
        config: error === undefined ? plan.config : state.config,
        rules,
        lastReconciledAt: at,
        lastError: error,
      };
      writeRederivable(options.db, () => {
        for (const app of apps)
          writeRouted(options, app, routedCondition(app, rules, disabled, error, state.lastReload), now());
      });
      if (error !== undefined) throw new Error(error);
    },
  };
}

function routedCondition(
  app: AppWithSpec,
  rules: readonly DesiredRule[],
  disabled: ReadonlySet<string>,
  error: string | undefined,
  reload: RoutingState['lastReload'],
): ConditionInput {
  const { spec } = app;
  const declared = (spec.endpoints ?? [])
    .map((e) => normalizeHostname(e.url))
    .filter((h): h is string => h !== undefined);
  if (declared.length === 0)
    return { type: 'Routed', status: 'True', reason: 'NoEndpoints', message: 'the app declares no public endpoints' };
  if (!spec.deploy)
    return { type: 'Routed', status: 'Unknown', reason: 'NotDeployed', message: 'deploy is false in the spec' };
  if (error !== undefined) return { type: 'Routed', status: 'False', reason: 'TunnelWriteFailed', message: error };
  const mine = rules.filter((r) => r.app === spec.name).map((r) => r.hostname);
  const off = declared.filter((h) => disabled.has(h));
  const taken = declared.filter((h) => !off.includes(h) && !mine.includes(h) && rules.some((r) => r.hostname === h));
  if (mine.length === 0 && off.length === declared.length)
    return {
      type: 'Routed',
      status: 'True',
      reason: 'AllEndpointsDisabled',
      message: `every endpoint is toggled off: ${off.join(', ')}`,
    };
  if (mine.length === 0 && taken.length === 0) {
    if (publicProcess(spec) === undefined)
      return {
        type: 'Routed',
        status: 'False',
        reason: 'NoProcessWithPort',
        message: 'endpoints are declared but no process has a port',
      };
    return {
      type: 'Routed',
      status: 'False',
      reason: 'WaitingForHealthyDeployment',
      message: `${declared.length} endpoint(s) are routed once a release is deployed and healthy`,
    };
  }
  if (taken.length > 0)
    return {
      type: 'Routed',
      status: 'False',
      reason: 'HostnameConflict',
      message: `routed to another app: ${taken.join(', ')}`,
    };
  const reloadNote = reload && !reload.ok ? `; the reload command failed (exit ${reload.exitCode ?? 'unknown'})` : '';
  return {
    type: 'Routed',
    status: 'True',
    reason: 'IngressWritten',
    message: `routed: ${mine.join(', ')}${off.length > 0 ? `; toggled off: ${off.join(', ')}` : ''}${reloadNote}`,
  };
}

function sameRouted(conditions: readonly Condition[], input: ConditionInput): boolean {
  const previous = getCondition(conditions, 'Routed');
  return (
    previous !== undefined &&
    previous.status === input.status &&
    previous.reason === input.reason &&
    previous.message === input.message
  );
}

function writeRouted(options: RoutingReconcilerOptions, row: AppRow, input: ConditionInput, now: Date): void {
  if (sameRouted(row.conditions, input)) return;
  // Re-read before writing: the app controller may have written other conditions since.
  const app = getApp(options.db, row.name);
  if (!app || sameRouted(app.conditions, input)) return;
  const conditions = summarizeReady(setCondition(app.conditions, input, now), now);
  // The condition is derived again on every reconcile: committed without an fsync of its own (ADR 0195).
  writeRederivable(options.db, () =>
    setAppStatus(options.db, app.name, { conditions, observedGeneration: app.observedGeneration }, now),
  );
}
