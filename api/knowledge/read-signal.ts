/**
 * A middleware that tells the write path a read came (docs/adr/0210): every request of the REST app
 * but the two write routes (`POST .../write` and `POST .../write/batch`). While reads come, the group
 * commit keeps its groups short, so a read waits for one short group at most.
 */
import type Koa from 'koa';

const WRITE_PATH = /^\/v1\/namespaces\/[^/]+\/write(\/batch)?$/;

/** Calls `noteRead` for each request that is not a write, before the request runs. */
export function readSignal(noteRead: () => void): Koa.Middleware {
  return (ctx, next) => {
    if (!(ctx.method === 'POST' && WRITE_PATH.test(ctx.path))) noteRead();
    return next();
  };
}
