/**
 * A middleware that tells the write path a read came (docs/adr/0210): every request of the REST app
 * but the two write routes (`POST .../write` and `POST .../write/batch`). While reads come, the group
 * commit keeps its groups short, so a read waits for one short group at most.
 */
import type Koa from 'koa';

const WRITE_PATH = /^\/v1\/namespaces\/[^/]+\/write(\/batch)?$/;

/** Calls `noteRead` when a request that is not a write arrives and again when it is answered. */
export function readSignal(noteRead: () => void): Koa.Middleware {
  return async (ctx, next) => {
    if (ctx.method === 'POST' && WRITE_PATH.test(ctx.path)) return next();
    noteRead();
    try {
      await next();
    } finally {
      noteRead();
    }
  };
}
