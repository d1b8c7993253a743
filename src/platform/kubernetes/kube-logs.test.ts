import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { mergeByTime, parseKubeLogLine, podSummary } from './kube-logs.ts';

describe('pod logs as log lines', () => {
  it('reads the timestamp the log API puts first (nanoseconds) and keeps the rest as the line', () => {
    assert.deepEqual(parseKubeLogLine('2026-12-06T11:30:30.123456789Z hello world', 'f-abc', 'x'), {
      time: '2026-12-06T11:30:30.123Z',
      replica: 'f-abc',
      stream: 'output',
      line: 'hello world',
    });
    assert.deepEqual(parseKubeLogLine('no stamp here', 'f-abc', 'fallback').time, 'fallback');
  });

  it('merges replicas by time and keeps the last `tail`', () => {
    const l = (time: string, replica: string) => ({ time, replica, stream: 'output' as const, line: `${replica}@${time}` });
    const merged = mergeByTime([[l('2026-01-01T00:00:01.000Z', 'a'), l('2026-01-01T00:00:03.000Z', 'a')], [l('2026-01-01T00:00:02.000Z', 'b')]], 2);
    assert.deepEqual(merged.map((x) => x.line), ['b@2026-01-01T00:00:02.000Z', 'a@2026-01-01T00:00:03.000Z']);
  });

  it('reads a pod only once its function container started', () => {
    assert.deepEqual(podSummary({ metadata: { name: 'p' }, status: { containerStatuses: [{ name: 'function', restartCount: 2, state: { running: {} } }] } }), { name: 'p', started: true, restarts: 2 });
    assert.equal(podSummary({ metadata: { name: 'p' }, status: {} })?.started, false);
  });
});
