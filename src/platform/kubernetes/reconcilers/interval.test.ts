import assert from 'node:assert/strict';
import { it } from 'node:test';
import { parseInterval } from './interval.ts';

it('parses Go-style durations and falls back on anything else', () => {
  assert.deepEqual(
    ['1m', '30s', '1h30m', '500ms', '1.5s', undefined, 'soon', '0s'].map((t) => parseInterval(t, 42)),
    [60_000, 30_000, 5_400_000, 500, 1_500, 42, 42, 42],
  );
});
