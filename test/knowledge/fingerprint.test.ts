// tier: quick
import test from 'ava';
import { createHash } from 'node:crypto';
import fc from 'fast-check';
import { canonicalContent } from '../../domain/knowledge/fingerprint.js';
import { fingerprintOf } from '../../knowledge/write/write-service.js';

// The definition the fast paths of docs/adr/0208 must keep: NFKC, lower case, whitespace collapsed, trimmed.
const reference = (content: string) => content.normalize('NFKC').toLowerCase().replace(/\s+/g, ' ').trim();

const samples = [
  'disk is full on DB-1 ',
  '  Disk\tIS   full\non db-1',
  '',
  'ERR-42 topic7 wabx',
  'ﬁle ＡＢＣ ① Ｘ²', // compatibility forms that NFKC folds
  'école\u00a0Café', // no-break space: whitespace, and non-ASCII letters
  'cafe\u0301 vs café', // combining accent, composed by NFKC
  '\u2003em space\u3000ideographic',
];

test('canonical content is NFKC, lower case, collapsed whitespace, trimmed, for ASCII and other text', (t) => {
  for (const s of samples) t.is(canonicalContent(s), reference(s), JSON.stringify(s));
  t.is(canonicalContent('ﬁle ＡＢＣ'), 'file abc');
  t.is(canonicalContent('  Disk\tIS   full\n'), 'disk is full');
});

test('canonical content equals the reference for any text, whitespace of every kind included', (t) => {
  // Text built mostly of whitespace (space, tab, line breaks, no-break and other Unicode spaces, the
  // byte order mark) and letters that NFKC or lower case change, so runs and single characters of
  // each kind meet the fast path's test.
  const pieces = fc.constantFrom(
    ' ',
    '  ',
    '\t',
    '\n',
    '\r\n',
    '\u00a0',
    '\u2003',
    '\u3000',
    '\ufeff',
    '\u2028',
    'A',
    'b',
    'ﬁ',
    'Ｘ',
    'é',
    '1',
  );
  fc.assert(
    fc.property(fc.array(fc.oneof(pieces, fc.string()), { maxLength: 12 }), (parts) => {
      const s = parts.join('');
      return canonicalContent(s) === reference(s);
    }),
    { numRuns: 2000 },
  );
  t.pass();
});

test('the fingerprint is the SHA-256 hex digest of the canonical content, as stored before', (t) => {
  for (const s of samples)
    t.is(fingerprintOf(s), createHash('sha256').update(reference(s)).digest('hex'), JSON.stringify(s));
  t.is(fingerprintOf('Disk is full'), fingerprintOf('  disk   IS full '));
  t.not(fingerprintOf('disk is full'), fingerprintOf('disk is fall'));
});
