/**
 * On-demand profiling through the Node inspector (`node:inspector`): a CPU profile over a chosen
 * number of seconds and a heap snapshot. Admin only; one capture at a time.
 */
import Router from '@koa/router';
import { Session } from 'node:inspector/promises';
import { setTimeout as delay } from 'node:timers/promises';
import { ConflictError, ValidationError } from '../../domain/errors.js';
import { requirePermission } from './auth.js';

/** Longest CPU profile one request may ask for. */
export const MAX_PROFILE_SECONDS = 60;

/** `/debug/pprof/` (index), `/debug/pprof/profile?seconds=N`, `/debug/pprof/heap`. */
export function profilingRoutes(): Router {
  const router = new Router({ prefix: '/debug/pprof' });
  let busy = false;
  const exclusive = async <T>(fn: () => Promise<T>): Promise<T> => {
    if (busy)
      throw new ConflictError('another profile is being captured; try again when it finishes', {
        code: 'profile_in_progress',
      });
    busy = true;
    try {
      return await fn();
    } finally {
      busy = false;
    }
  };

  router.get('/', (ctx) => {
    requirePermission(ctx, 'admin');
    ctx.body = {
      profiles: [
        {
          name: 'profile',
          path: '/debug/pprof/profile?seconds=10',
          description: 'CPU profile (.cpuprofile JSON, open in Chrome DevTools)',
        },
        {
          name: 'heap',
          path: '/debug/pprof/heap',
          description: 'Heap snapshot (.heapsnapshot JSON, open in Chrome DevTools)',
        },
      ],
    };
  });

  router.get('/profile', async (ctx) => {
    requirePermission(ctx, 'admin');
    const raw = String(ctx.query.seconds ?? '10');
    const seconds = Number(raw);
    if (!/^\d+(\.\d+)?$/.test(raw) || seconds <= 0 || seconds > MAX_PROFILE_SECONDS) {
      throw new ValidationError(`seconds: must be a number in (0, ${MAX_PROFILE_SECONDS}]`, {
        code: 'invalid_request',
      });
    }
    const profile = await exclusive(async () => {
      const session = new Session();
      session.connect();
      try {
        await session.post('Profiler.enable');
        await session.post('Profiler.start');
        await delay(seconds * 1000);
        const { profile: captured } = await session.post('Profiler.stop');
        return captured;
      } finally {
        session.disconnect();
      }
    });
    ctx.set('Content-Disposition', `attachment; filename="knowledge-${Date.now()}.cpuprofile"`);
    ctx.type = 'application/json';
    ctx.body = JSON.stringify(profile);
  });

  router.get('/heap', async (ctx) => {
    requirePermission(ctx, 'admin');
    const chunks = await exclusive(async () => {
      const session = new Session();
      session.connect();
      const parts: string[] = [];
      session.on('HeapProfiler.addHeapSnapshotChunk', (message) => parts.push(message.params.chunk));
      try {
        await session.post('HeapProfiler.takeHeapSnapshot', { reportProgress: false });
      } finally {
        session.disconnect();
      }
      return parts;
    });
    ctx.set('Content-Disposition', `attachment; filename="knowledge-${Date.now()}.heapsnapshot"`);
    ctx.type = 'application/json';
    ctx.body = chunks.join('');
  });
  return router;
}
