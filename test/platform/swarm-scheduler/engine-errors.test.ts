// tier: quick
import test from 'ava';
import { ConflictError, UnavailableError } from '../../../domain/errors.js';
import { fromEngine } from '../../../platform/swarm-scheduler/engine.js';

test('an engine refusal is reported as the swarm being unavailable, never as the caller’s bad request', (t) => {
  const refused = Object.assign(new Error('(HTTP code 400) unexpected'), {
    statusCode: 400,
    json: { message: 'rpc error: Jobs may not have an update config' },
  });
  const reported = fromEngine(refused);
  t.true(reported instanceof UnavailableError);
  t.like(reported, {
    code: 'swarm_engine_failed',
    message: 'the swarm engine answered 400: rpc error: Jobs may not have an update config',
    details: { status: 400 },
  });
  const domain = new ConflictError('already');
  t.is(fromEngine(domain), domain);
  const plain = new Error('socket hang up');
  t.is(fromEngine(plain), plain);
});
