/**
 * A control plane over a real apps repository: one app code repository (a small server), each
 * app's spec committed to the apps folder, and (unless `release: false`) a release built by the
 * release builder and recorded for the app, so the app controller runs it.
 */
import { execFileSync } from 'node:child_process';
import fs from 'node:fs';
import path from 'node:path';
import type { ExecutionContext } from 'ava';
import { startControlPlane, type ControlPlane } from '../../wiring/control-plane.js';
import type { SvcConfig } from '../../platform/config.js';
import { silentLogger } from '../../platform/logger.js';
import { ReleaseBuilder } from '../../platform/release-builder/index.js';
import { getApp, setAppRelease } from '../../store/control/apps.js';
import { closePlaneAndStopApps } from './stop-apps.js';
import { tempDir } from './temp-dir.js';
import { testConfig } from './test-config.js';
import { waitForReconciled } from './wait-for.js';

/** Runs git with a fixed identity in `cwd`; returns its trimmed output. */
export function git(cwd: string, ...args: string[]): string {
  return execFileSync('git', ['-c', 'user.name=t', '-c', 'user.email=t@example.test', ...args], {
    cwd,
    encoding: 'utf8',
  }).trim();
}

/** One app of {@link startPlaneWithApps}. */
export interface CommittedApp {
  readonly name: string;
  /** The `infraspec.yaml` text. */
  readonly spec: string;
  /** Build and record a release. @default true */
  readonly release?: boolean;
  /** More files of the app's folder in the apps repository (a deploy builds from that folder). */
  readonly files?: Readonly<Record<string, string>>;
}

/** Starts a plane (stopped with its app processes in teardown) with `apps` committed and released from a code repository holding `server.mjs`. */
export async function startPlaneWithApps(
  t: ExecutionContext,
  options: { server: string; apps: readonly CommittedApp[]; env?: Record<string, string>; tempPrefix?: string },
): Promise<{ plane: ControlPlane; config: SvcConfig; code: string }> {
  const root = tempDir(t, ...(options.tempPrefix === undefined ? [] : [options.tempPrefix]));
  const code = path.join(root, 'code');
  fs.mkdirSync(code);
  fs.writeFileSync(path.join(code, 'server.mjs'), options.server);
  fs.writeFileSync(
    path.join(code, 'Dockerfile'),
    'FROM node:20-alpine\nWORKDIR /app\nCOPY . .\nCMD ["node", "server.mjs"]\n',
  );
  git(code, 'init', '-q', '-b', 'main');
  git(code, 'add', '-A');
  git(code, 'commit', '-q', '-m', 'app');
  const config = testConfig(t, options.env ?? {});
  fs.mkdirSync(config.appsDir, { recursive: true });
  git(config.appsDir, 'init', '-q', '-b', 'main');
  for (const app of options.apps) {
    fs.mkdirSync(path.join(config.appsDir, app.name), { recursive: true });
    fs.writeFileSync(path.join(config.appsDir, app.name, 'infraspec.yaml'), app.spec);
    for (const [file, text] of Object.entries(app.files ?? {}))
      fs.writeFileSync(path.join(config.appsDir, app.name, file), text);
  }
  git(config.appsDir, 'add', '-A');
  git(config.appsDir, 'commit', '-q', '-m', 'apps');
  const plane = await startControlPlane(config, silentLogger());
  t.teardown(() => closePlaneAndStopApps(plane, config));
  const builder = new ReleaseBuilder({ dataDir: config.dataDir, logger: silentLogger() });
  for (const app of options.apps) {
    await waitForReconciled([plane.reconcilers.specController], () => getApp(plane.db, app.name)?.spec != null, {
      what: `spec of ${app.name} read`,
    });
    if (app.release === false) continue;
    const release = await builder.build({ app: app.name, repoUrl: code, ref: 'main' });
    setAppRelease(plane.db, app.name, { commit: release.manifest.commit, dir: release.dir });
    plane.reconcilers.appController.enqueue(app.name);
  }
  return { plane, config, code };
}
