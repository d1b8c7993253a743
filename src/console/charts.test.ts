import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import type { InvocationRecord } from '../store/types.ts';
import { bucketsOf, chartsOf, quantile, WINDOWS } from './charts.ts';

const NOW = Date.parse('2026-06-01T12:30:30Z');
const call = (minutesAgo: number, durationMs: number, status = 200): InvocationRecord => ({
  namespace: 'dev',
  function: 'f',
  method: 'GET',
  path: '/',
  status,
  durationMs,
  requestBytes: 0,
  responseBytes: 0,
  startedAt: new Date(NOW - minutesAgo * 60_000).toISOString(),
});
const hour = WINDOWS[0]!;

describe('function charts', () => {
  it('takes nearest-rank quantiles', () => {
    assert.equal(quantile([], 0.5), undefined);
    assert.equal(quantile([1, 2, 3, 4], 0.5), 2);
    assert.equal(quantile([1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 13, 14, 15, 16, 17, 18, 19, 100], 0.95), 19);
  });

  it('puts calls in minute buckets ending with the current one; older calls are left out', () => {
    const buckets = bucketsOf([call(0, 10), call(0, 30, 502), call(1, 20), call(61, 5)], hour, NOW);
    assert.equal(buckets.length, 60);
    assert.deepEqual(buckets.at(-1), { start: Date.parse('2026-06-01T12:30:00Z'), calls: 2, errors: 1, p50: 10, p95: 30 });
    assert.deepEqual(buckets.at(-2), { start: Date.parse('2026-06-01T12:29:00Z'), calls: 1, errors: 0, p50: 20, p95: 20 });
    assert.equal(buckets.reduce((n, b) => n + b.calls, 0), 3);
  });

  it('draws three SVG charts per window with a summary for screen readers, and nothing from elsewhere', () => {
    const charts = chartsOf([call(0, 10), call(0, 30, 500), call(5, 20)], hour, NOW);
    assert.deepEqual(charts.map((c) => c.title), ['Requests per minute, last hour', 'Latency p50 and p95, last hour', 'Error rate (5xx), last hour']);
    assert.equal(charts[2]?.summary, '1 of 3 calls answered 5xx in the last hour.');
    for (const c of charts) {
      assert.match(c.svg, /^<svg class="chart" [^>]*role="img" aria-labelledby="chart-hour-\w+-t chart-hour-\w+-d"/);
      assert.doesNotMatch(c.svg, /style=|href=|<script/);
      assert.equal(c.labels.length, 60);
    }
    assert.equal(charts[1]?.series.length, 2);
  });

  it('says so when there were no calls', () => {
    const [rate, latency] = chartsOf([], WINDOWS[1]!, NOW);
    assert.equal(rate?.summary, '0 calls in the last day, at most 0 per minute.');
    assert.equal(latency?.summary, 'No calls in the last day.');
  });
});
