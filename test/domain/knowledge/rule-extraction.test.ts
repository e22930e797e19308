// tier: quick
import test from 'ava';
import { sentencesOf } from '../../../domain/knowledge/rule-extraction.js';

test('sentencesOf strips the bullets of a list, the typographic ones included', (t) => {
  t.deepEqual(
    sentencesOf('- the queue drains first\n* workers stop after it\n\u2022 the lock is released\n\u00b7 the job ends'),
    ['the queue drains first', 'workers stop after it', 'the lock is released', 'the job ends'],
  );
});
