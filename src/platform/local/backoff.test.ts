import assert from 'node:assert/strict';
import { test } from 'node:test';
import { backoffDelay } from './backoff.ts';

test('restart delays double from the base and stop at the cap', () => {
  const opts = { baseMs: 500, maxMs: 30_000 };
  assert.deepEqual(
    [0, 1, 2, 3, 4, 5, 6, 7, 50].map((n) => backoffDelay(n, opts)),
    [500, 1000, 2000, 4000, 8000, 16000, 30000, 30000, 30000],
  );
});
