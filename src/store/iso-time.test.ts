import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { isoTime } from './iso-time.ts';

describe('isoTime', () => {
  it('writes what Date#toISOString writes: every millisecond of a second, fractions, second and year boundaries, in and out of order', () => {
    const now = Date.now();
    const cases = [
      0,
      999.9,
      1000,
      now,
      now + 0.75,
      now - 1,
      ...Array.from({ length: 1000 }, (_, i) => Math.floor(now / 1000) * 1000 + i),
      Date.UTC(2026, 11, 31, 23, 59, 59, 999),
      Date.UTC(2027, 0, 1),
      Date.UTC(9999, 11, 31, 23, 59, 59, 999),
      Date.UTC(10000, 0, 1),
      -1,
      -62198755200000,
      ...Array.from({ length: 2000 }, () => Math.random() * 4e12),
    ];
    for (const ms of cases) assert.equal(isoTime(ms), new Date(ms).toISOString(), `at ${ms}`);
  });
});
