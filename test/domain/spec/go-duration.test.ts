// tier: quick
import test from 'ava';
import { ValidationError } from '../../../domain/errors.js';
import { parseGoDuration, secondsToGoDuration, tryParseGoDuration } from '../../../domain/spec/index.js';

const valid: ReadonlyArray<[string, number]> = [
  ['0', 0],
  ['+0', 0],
  ['-0', 0],
  ['300ms', 300],
  ['10s', 10_000],
  ['2m', 120_000],
  ['1h30m', 5_400_000],
  ['1h30m15s', 5_415_000],
  ['-1.5h', -5_400_000],
  ['1.5s', 1_500],
  ['.5s', 500],
  ['5.s', 5_000],
  ['1500us', 1.5],
  ['1500\u00b5s', 1.5],
  ['1500\u03bcs', 1.5],
  ['2000000ns', 2],
  ['1ns', 0.000001],
  ['2h45m30.5s', 9_930_500],
  ['1m1m', 120_000],
];

for (const [text, milliseconds] of valid) {
  test(`parseGoDuration reads ${JSON.stringify(text)} as ${milliseconds} ms`, (t) => {
    const value = parseGoDuration(text);
    t.is(value.text, text);
    t.is(value.milliseconds, milliseconds);
  });
}

test('parseGoDuration keeps whole nanoseconds exactly', (t) => {
  t.is(parseGoDuration('1.000000001s').nanoseconds, 1_000_000_001n);
  t.is(parseGoDuration('2562047h47m16.854775807s').nanoseconds, 9_223_372_036_854_775_807n);
  t.is(parseGoDuration('-2562047h47m16.854775808s').nanoseconds, -9_223_372_036_854_775_808n);
});

const invalid: ReadonlyArray<[string, RegExp]> = [
  ['', /empty/],
  ['10', /missing unit/],
  ['1.5', /missing unit/],
  ['1d', /unknown unit "d"/],
  ['1 s', /unknown unit " s"/],
  ['1hh', /unknown unit "hh"/],
  ['s', /expected a number/],
  ['.s', /expected a number/],
  ['-', /empty/],
  ['1h-5m', /unknown unit "h-"/],
  ['2562047h47m16.854775808s', /too long/],
  ['9999999999999999999h', /too long/],
];

for (const [text, reason] of invalid) {
  test(`tryParseGoDuration rejects ${JSON.stringify(text)} with a reason`, (t) => {
    const parsed = tryParseGoDuration(text);
    t.false(parsed.ok);
    if (!parsed.ok) t.regex(parsed.reason, reason);
  });
}

test('parseGoDuration throws a ValidationError naming the text and the problem', (t) => {
  const error = t.throws(() => parseGoDuration('10'), {
    instanceOf: ValidationError,
    message: /^"10" is not a Go duration: missing unit/,
  });
  t.is(error?.code, 'invalid_duration');
  t.deepEqual(error?.details, { value: '10' });
});

test('secondsToGoDuration writes whole seconds with the s unit', (t) => {
  t.is(secondsToGoDuration(30), '30s');
  t.is(parseGoDuration(secondsToGoDuration(45)).milliseconds, 45_000);
});
