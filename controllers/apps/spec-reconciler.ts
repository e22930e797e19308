/**
 * The spec controller: reads `<appsDir>/<app>/infraspec.yaml`, validates and canonicalizes it, and
 * records the desired spec, its generation and the `Valid` condition. An invalid edit keeps the
 * last valid spec running (the condition says why the new one was refused); a deleted file marks
 * the app for deletion, which the app controller finalizes.
 */
import fs from 'node:fs';
import path from 'node:path';
import { canonicalDigest } from '../../domain/canonical-json.js';
import { setCondition, summarizeReady } from '../../domain/status/conditions.js';
import {
  validateDeployGroup,
  validateInfraspec,
  type CanonicalAppSpec,
  type Finding,
  type SchedulerDriver,
} from '../../domain/spec/index.js';
import { discoverSpecFiles, readSpecText, SPEC_FILE_NAME, DEPLOY_GROUPS_DIR } from '../../platform/spec-files.js';
import type { Db } from '../../store/database.js';
import { getApp, listApps, markAppDeleted, setAppStatus, upsertAppSpec } from '../../store/control/apps.js';
import { removeDeployGroup, upsertDeployGroup } from '../../store/control/deploy-groups.js';
import { writeRederivable } from '../../store/rederivable-writes.js';
import type { Reconciler } from '../runtime/controller.js';

/** Finalizer the app controller removes once the app's jobs are stopped. */
export const STOP_JOBS_FINALIZER = 'svc.dev/stop-jobs';

export interface SpecReconcilerOptions {
  readonly db: Db;
  readonly appsDir: string;
  /** Called after an app's record changed (enqueue it on the app controller). */
  readonly onAppChanged: (app: string) => void;
  readonly now?: () => Date;
  /** The scheduler driver apps run on: fields it cannot honour are warnings of the spec. @default local */
  readonly driver?: SchedulerDriver;
  /** Whether the control plane reads Kafka consumer lag (SVC_KAFKA_EXPORTER_URL): false refuses kafka_lag. */
  readonly kafkaLagSource?: boolean;
}

/** Keys: `<app>` for app specs, `group:<name>` for deploy groups. */
export function createSpecReconciler(options: SpecReconcilerOptions): Reconciler {
  const now = options.now ?? (() => new Date());
  // The last validation of each app's file, reused while its text is the same: a resync re-reads
  // every file, and validating 500 unchanged specs was a fifth of its time (ADR 0195).
  const validations: ValidationCache = new Map();
  return {
    name: 'spec',
    listKeys() {
      const keys = new Set<string>();
      for (const file of discoverSpecFiles(options.appsDir))
        keys.add(file.kind === 'app' ? file.key : `group:${file.key}`);
      for (const app of listApps(options.db)) keys.add(app.name);
      return [...keys];
    },
    async reconcile(key) {
      if (key.startsWith('group:')) {
        reconcileGroup(options, key.slice('group:'.length), now());
        return;
      }
      // One transaction for the spec and its condition, without an fsync of its own: both are read
      // again from the file on every start (ADR 0195).
      const changed = writeRederivable(options.db, () => reconcileApp(options, key, now(), validations));
      if (changed) options.onAppChanged(key);
    },
  };
}

type ValidationCache = Map<string, { readonly text: string; readonly result: ReturnType<typeof validateInfraspec> }>;

/** Validates the text of `name`'s file, or answers the previous result when the text did not change. */
function validated(
  cache: ValidationCache,
  name: string,
  text: string,
  options: Parameters<typeof validateInfraspec>[1],
) {
  const previous = cache.get(name);
  if (previous !== undefined && previous.text === text) return previous.result;
  const result = validateInfraspec(text, options);
  cache.set(name, { text, result });
  return result;
}

// The generation of each validated spec object (a cached validation answers the same object).
const generations = new WeakMap<CanonicalAppSpec, string>();
function generationOf(spec: CanonicalAppSpec): string {
  let generation = generations.get(spec);
  if (generation === undefined) {
    generation = canonicalDigest(spec);
    generations.set(spec, generation);
  }
  return generation;
}

/** Records the spec of `name`; true when anything changed. */
function reconcileApp(options: SpecReconcilerOptions, name: string, now: Date, validations: ValidationCache): boolean {
  const file = path.join(options.appsDir, name, SPEC_FILE_NAME);
  const existing = getApp(options.db, name);
  if (!fs.existsSync(file)) {
    validations.delete(name);
    return existing !== undefined && markAppDeleted(options.db, name, now) === 'updated';
  }
  const rel = path.relative(options.appsDir, file);
  let findings: Finding[];
  let spec: CanonicalAppSpec | undefined;
  try {
    const result = validated(validations, name, readSpecText(file), {
      fileName: rel,
      driver: options.driver,
      kafkaLagSource: options.kafkaLagSource,
    });
    findings = [...result.findings];
    spec = result.valid ? result.spec : undefined;
    const specName = (result.spec as { name?: unknown } | undefined)?.name;
    if (result.valid && specName !== name) {
      findings.push({
        path: 'name',
        rule: 'name.matchesFolder',
        message: `name: "${String(specName)}" must equal the app folder name "${name}" (${rel})`,
        line: null,
        column: null,
        severity: 'error',
      });
      spec = undefined;
    }
  } catch (error) {
    findings = [
      {
        path: '',
        rule: 'file.unreadable',
        message: `${rel}: ${(error as Error).message}`,
        line: null,
        column: null,
        severity: 'error',
      },
    ];
  }
  const valid = spec !== undefined;
  const write = upsertAppSpec(
    options.db,
    {
      name,
      file: rel,
      // An invalid edit keeps the last valid spec and generation: the app keeps running as it was.
      spec: valid ? spec : (existing?.committedSpec ?? null),
      generation: spec !== undefined ? generationOf(spec) : (existing?.generation ?? null),
      findings,
      finalizers: [STOP_JOBS_FINALIZER],
    },
    now,
  );
  const errors = findings.filter((f) => f.severity === 'error');
  // The upsert wrote neither conditions nor the observed generation: the row read first still has them.
  const current = existing?.conditions ?? [];
  const conditions = summarizeReady(
    setCondition(
      current,
      valid
        ? { type: 'Valid', status: 'True', reason: 'SpecValid', message: `${rel} is valid` }
        : {
            type: 'Valid',
            status: 'False',
            reason: 'SpecInvalid',
            message: `${errors.length} error(s): ${errors
              .slice(0, 3)
              .map((f) => f.message)
              .join('; ')}${existing?.spec ? '; the last valid spec stays in effect' : ''}`,
          },
      now,
    ),
    now,
  );
  const status = setAppStatus(
    options.db,
    name,
    { conditions, observedGeneration: existing?.observedGeneration ?? null },
    now,
  );
  return write !== 'unchanged' || status !== 'unchanged';
}

function reconcileGroup(options: SpecReconcilerOptions, name: string, now: Date): void {
  const dir = path.join(options.appsDir, DEPLOY_GROUPS_DIR);
  const file = ['.yaml', '.yml'].map((ext) => path.join(dir, name + ext)).find((f) => fs.existsSync(f));
  if (!file) {
    removeDeployGroup(options.db, name);
    return;
  }
  const rel = path.relative(options.appsDir, file);
  const result = validateDeployGroup(readSpecText(file), { fileName: rel });
  upsertDeployGroup(
    options.db,
    {
      name,
      file: rel,
      group: result.valid ? (result.group ?? null) : null,
      findings: [...result.findings],
      generation: result.valid ? canonicalDigest(result.group) : null,
    },
    now,
  );
}
