// tier: quick
import test from 'ava';
import { RecentAccessRing } from '../../../domain/observability/index.js';

test('RecentAccessRing counts the last events by status bucket and forgets the oldest when full', (t) => {
  const ring = new RecentAccessRing(3);
  for (const status of [200, 404, 503]) ring.record(status);
  t.deepEqual(ring.counts(), { '1xx': 0, '2xx': 1, '3xx': 0, '4xx': 1, '5xx': 1, other: 0 });
  ring.record(201);
  ring.record(42);
  t.is(ring.size, 3);
  t.deepEqual(ring.counts(), { '1xx': 0, '2xx': 1, '3xx': 0, '4xx': 0, '5xx': 1, other: 1 });
});

test('RecentAccessRing refuses a capacity that is not a positive whole number', (t) => {
  t.throws(() => new RecentAccessRing(0), { instanceOf: RangeError, message: /capacity: 0/ });
});
