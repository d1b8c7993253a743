import assert from 'node:assert/strict';
import { test } from 'node:test';
import { option, parseArgs, parseDuration } from './args.ts';
import { CliError } from './errors.ts';

const specs = { output: { short: 'o' }, header: { short: 'H' }, wait: { switch: true } };

test('options come as --name value, --name=value and -x value; positionals stay in order', () => {
  const a = parseArgs(
    ['get', '-o', 'json', 'functions', '--header=a: b', '-H', 'c: d', '--wait'],
    specs,
    'u',
  );
  assert.deepEqual(a.positionals, ['get', 'functions']);
  assert.equal(option(a, 'output'), 'json');
  assert.deepEqual(a.options.get('header'), ['a: b', 'c: d']);
  assert.equal(a.options.has('wait'), true);
  assert.equal(a.help, false);
});

test('--help and -h are seen anywhere; "--" ends the options', () => {
  assert.equal(parseArgs(['x', '-h'], specs, 'u').help, true);
  assert.deepEqual(parseArgs(['--', '-o', 'x'], specs, 'u').positionals, ['-o', 'x']);
});

test('an unknown option, a missing value and a value on a switch are one-line usage errors', () => {
  assert.throws(
    () => parseArgs(['--bogus'], specs, 'sless get ...'),
    (e: unknown) => e instanceof CliError && e.message === 'unknown option --bogus; usage: sless get ...',
  );
  assert.throws(() => parseArgs(['-o'], specs, 'u'), /-o needs a value/);
  assert.throws(() => parseArgs(['--wait=yes'], specs, 'u'), /--wait takes no value/);
});

test('durations: 5m, 30s, 1h, 250ms and bare seconds', () => {
  assert.equal(parseDuration('5m', 't'), 300_000);
  assert.equal(parseDuration('30s', 't'), 30_000);
  assert.equal(parseDuration('1h', 't'), 3_600_000);
  assert.equal(parseDuration('250ms', 't'), 250);
  assert.equal(parseDuration('2', 't'), 2000);
  assert.throws(
    () => parseDuration('soon', '--timeout'),
    /--timeout "soon" is not a duration; write it like 30s, 5m or 1h/,
  );
});
