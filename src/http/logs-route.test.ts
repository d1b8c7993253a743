import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { HttpError } from './errors.ts';
import { ndjson, parseLogQuery } from './logs-route.ts';

const NOW = Date.parse('2026-06-01T12:00:00Z');

describe('/v1 .../logs query', () => {
  it('reads follow, since (a duration or an RFC 3339 time) and tail', () => {
    assert.deepEqual(parseLogQuery({}, NOW), { follow: false });
    assert.deepEqual(parseLogQuery({ follow: '1', since: '10m', tail: '5' }, NOW), { follow: true, sinceMs: NOW - 600_000, tail: 5 });
    assert.deepEqual(parseLogQuery({ follow: 'false', since: '2026-06-01T11:00:00Z' }, NOW), { follow: false, sinceMs: NOW - 3600_000 });
    assert.equal(parseLogQuery({ since: '1d' }, NOW).sinceMs, NOW - 86_400_000);
    assert.equal(parseLogQuery({ tail: '0' }, NOW).tail, 0);
  });

  for (const [query, message] of [
    [{ since: 'ten minutes' }, /since must be a duration such as 30s, 10m, 2h or 1d, or an RFC 3339 time .*not "ten minutes"/],
    [{ since: '-5m' }, /since must be/],
    [{ since: '31d' }, /since reaches back at most 30d, not "31d"/],
    [{ tail: '-1' }, /tail must be a whole number of lines from 0 to 10000, not "-1"/],
    [{ tail: '20000' }, /tail must be .* not "20000"/],
    [{ tail: '1.5' }, /tail must be/],
    [{ follow: 'yes' }, /follow must be 1, true, 0 or false, not "yes"/],
  ] as const) {
    it(`refuses ${JSON.stringify(query)} with a 400 that says what it takes`, () => {
      assert.throws(
        () => parseLogQuery(query, NOW),
        (err: unknown) => err instanceof HttpError && err.statusCode === 400 && message.test(err.message),
      );
    });
  }

  it('writes one JSON object per line', () => {
    assert.equal(ndjson({ time: 't', replica: 'r', stream: 'stdout', line: 'a "quoted"\tline' }), '{"time":"t","replica":"r","stream":"stdout","line":"a \\"quoted\\"\\tline"}\n');
  });
});
