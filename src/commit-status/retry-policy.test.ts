import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { decideRetry } from './retry-policy.ts';

describe('decideRetry', () => {
  const settings = { baseMs: 100, maxMs: 1000, attempts: 5 };
  it('retries with doubling delays, capped, when the server is down or answers 5xx, 408 or 429', () => {
    assert.deepEqual([1, 2, 3, 4].map((n) => decideRetry(undefined, n, settings)), [100, 200, 400, 800].map((delayMs) => ({ kind: 'retry', delayMs })));
    assert.deepEqual(decideRetry(503, 1, { ...settings, maxMs: 50 }), { kind: 'retry', delayMs: 50 });
    assert.equal(decideRetry(429, 1, settings).kind, 'retry');
    assert.equal(decideRetry(408, 1, settings).kind, 'retry');
  });
  it('gives up after the last attempt, and at once on refusals retrying cannot fix', () => {
    assert.equal(decideRetry(500, 5, settings).kind, 'drop');
    for (const status of [400, 401, 403, 404, 422]) assert.equal(decideRetry(status, 1, settings).kind, 'drop', String(status));
    assert.match((decideRetry(403, 1, settings) as { hint: string }).hint, /write commit statuses/);
  });
});
