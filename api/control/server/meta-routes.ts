/**
 * Meta routes of the control plane: health, version and capability discovery.
 */
import Router from '@koa/router';
import type { BuildInfo } from '../../../domain/build-info.js';

export interface MetaRoutesOptions {
  readonly build: BuildInfo;
  readonly profile: string;
  readonly environment: string;
  /** Capability names this process serves, advertised by `/api/v1/capabilities`. */
  readonly capabilities: () => readonly Capability[];
  /** Extra health facts (e.g. database reachable); a throw marks the platform unhealthy. */
  readonly healthChecks?: Record<string, () => boolean>;
  /** `restricted` in authority-only mode (docs/restricted-mode.md). @default full */
  readonly mode?: 'full' | 'restricted';
}

/** One advertised capability: a feature and the routes that serve it. */
export interface Capability {
  readonly name: string;
  readonly routes: readonly string[];
  readonly description: string;
}

/** Routes `/api/health`, `/api/version`, `/api/v1/capabilities`. */
export function metaRoutes(options: MetaRoutesOptions): Router {
  const router = new Router();
  const started = new Date();
  router.get('/api/health', (ctx) => {
    const checks: Record<string, 'pass' | 'fail'> = {};
    for (const [name, check] of Object.entries(options.healthChecks ?? {})) {
      try {
        checks[name] = check() ? 'pass' : 'fail';
      } catch {
        checks[name] = 'fail';
      }
    }
    const healthy = Object.values(checks).every((v) => v === 'pass');
    ctx.status = healthy ? 200 : 503;
    ctx.body = {
      status: healthy ? 'ok' : 'degraded',
      checks,
      uptimeSeconds: Math.round((Date.now() - started.getTime()) / 1000),
    };
  });
  router.get('/api/version', (ctx) => {
    ctx.body = {
      name: options.build.name,
      version: options.build.version,
      label: options.build.label,
      commit: options.build.commit,
      node: options.build.node,
      release: options.build.release ?? null,
      apiVersions: ['v1'],
      startedAt: started.toISOString(),
    };
  });
  router.get('/api/v1/capabilities', (ctx) => {
    ctx.body = {
      apiVersion: 'v1',
      mode: options.mode ?? 'full',
      profile: options.profile,
      environment: options.environment,
      capabilities: options.capabilities(),
    };
  });
  return router;
}
