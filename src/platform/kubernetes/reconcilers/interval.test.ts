import assert from 'node:assert/strict';
import { it } from 'node:test';
import { parseInterval, syncInterval } from './interval.ts';

it('parses Go-style durations and falls back on anything else', () => {
  assert.deepEqual(
    ['1m', '30s', '1h30m', '500ms', '1.5s', undefined, 'soon', '0s'].map((t) => parseInterval(t, 42)),
    [60_000, 30_000, 5_400_000, 500, 1_500, 42, 42, 42],
  );
});

it('never syncs more often than the floor: 1ms and 500ms wait the floor, longer intervals stay', () => {
  assert.deepEqual(
    ['1ms', '500ms', '10s', '1m', undefined].map((t) => syncInterval(t, 10_000)),
    [10_000, 10_000, 10_000, 60_000, 60_000],
  );
});
