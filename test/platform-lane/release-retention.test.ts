// tier: quick
import test from 'ava';
import { releasesToPrune } from '../../domain/platform/index.js';

const never = () => false;

test('releasesToPrune keeps the most recently used releases up to the limit and removes the rest', (t) => {
  t.deepEqual(releasesToPrune(['e', 'd', 'c', 'b', 'a'], 3, new Set(), never), ['b', 'a']);
  t.deepEqual(releasesToPrune(['b', 'a'], 3, new Set(), never), []);
});

test('releasesToPrune never removes a protected release, and protected ones count toward the limit', (t) => {
  // The rollback target is old but protected: it takes one of the three places.
  t.deepEqual(releasesToPrune(['e', 'd', 'c', 'b', 'a'], 3, new Set(['a']), never), ['c', 'b']);
  // More protected releases than the limit: all of them stay, nothing else does.
  t.deepEqual(releasesToPrune(['e', 'd', 'c', 'b', 'a'], 2, new Set(['a', 'b', 'c']), never), ['e', 'd']);
});

test('releasesToPrune leaves a release a live process runs from', (t) => {
  t.deepEqual(
    releasesToPrune(['e', 'd', 'c', 'b', 'a'], 2, new Set(), (id) => id === 'b'),
    ['c', 'a'],
  );
});
