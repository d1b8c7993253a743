import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { decide, INITIAL_STATE, type AutoscalerState, type ConcurrencySample } from './autoscaler.ts';
import { InFlightMeter } from './in-flight-meter.ts';
import { resolveScale } from '../manifest/scale-spec.ts';
import type { ScaleInput } from '../manifest/types.ts';

const NOW = 1_000_000;
/** One sample a second for the last `seconds`, each `concurrency`. */
const steady = (concurrency: number, seconds: number, endAgoS = 0): ConcurrencySample[] =>
  Array.from({ length: seconds }, (_, i) => ({ atMs: NOW - (endAgoS + seconds - 1 - i) * 1000, concurrency }));

interface Case {
  readonly what: string;
  readonly scale: ScaleInput;
  readonly samples?: ConcurrencySample[];
  readonly inFlight?: number;
  readonly lastRequestAgoS?: number;
  readonly ready: number;
  readonly desired: number;
  readonly state?: AutoscalerState;
  readonly want: number;
  readonly panics?: boolean;
}

const CASES: Case[] = [
  { what: 'no scale written: one replica for ever, traffic or not', scale: {}, ready: 1, desired: 1, want: 1 },
  { what: 'steady load of 3 x concurrency: 3 replicas', scale: { concurrency: 10 }, samples: steady(30, 60), lastRequestAgoS: 0, ready: 3, desired: 3, want: 3 },
  { what: 'steady load above max: capped at max', scale: { concurrency: 10, max: 2 }, samples: steady(50, 60), lastRequestAgoS: 0, ready: 2, desired: 2, want: 2 },
  { what: 'a burst at 1 ready replica panics up at once', scale: { concurrency: 10 }, samples: [...steady(1, 54, 6), ...steady(40, 6)], lastRequestAgoS: 0, ready: 1, desired: 1, want: 4, panics: true },
  { what: 'requests waiting at zero wake one replica (and more when many)', scale: { min: 0, concurrency: 10 }, inFlight: 1, lastRequestAgoS: 0, ready: 0, desired: 0, want: 1, panics: true },
  { what: '50 requests waiting at zero for concurrency 10: 5 replicas', scale: { min: 0, concurrency: 10 }, inFlight: 50, lastRequestAgoS: 0, ready: 0, desired: 0, want: 5, panics: true },
  { what: 'while panicking, a quiet moment does not scale in', scale: { concurrency: 10 }, samples: steady(5, 60), lastRequestAgoS: 0, ready: 4, desired: 4, state: { panicUntilMs: NOW + 1000 }, want: 4, panics: true },
  { what: 'after the load: scales in at most by half per decision', scale: { concurrency: 10 }, samples: steady(0, 60), lastRequestAgoS: 1, ready: 4, desired: 4, want: 2 },
  { what: 'after the load: back to min 1 in the end', scale: { concurrency: 10 }, samples: steady(0, 60), lastRequestAgoS: 400, ready: 2, desired: 2, want: 1 },
  { what: 'min 0, idle not yet passed: keeps one replica', scale: { min: 0, idle: '10s' }, samples: steady(0, 10), lastRequestAgoS: 5, ready: 1, desired: 1, want: 1 },
  { what: 'min 0, idle passed without a request: zero', scale: { min: 0, idle: '10s' }, samples: steady(0, 10), lastRequestAgoS: 11, ready: 1, desired: 1, want: 0 },
  { what: 'min 0, idle passed but a long request still in flight: keeps one', scale: { min: 0, idle: '10s' }, samples: steady(1, 10), inFlight: 1, lastRequestAgoS: 30, ready: 1, desired: 1, want: 1 },
  { what: 'min 2 idle: stays at 2', scale: { min: 2 }, lastRequestAgoS: 3600, ready: 2, desired: 2, want: 2 },
  { what: 'samples older than the stable window are forgotten', scale: { concurrency: 10, idle: '10s' }, samples: steady(100, 5, 20), lastRequestAgoS: 5, ready: 1, desired: 1, want: 1 },
];

describe('autoscaler: decide', () => {
  for (const c of CASES) {
    it(c.what, () => {
      const d = decide({
        scale: resolveScale(c.scale, 'nodejs20'),
        nowMs: NOW,
        samples: c.samples ?? [],
        inFlight: c.inFlight ?? 0,
        lastRequestAtMs: c.lastRequestAgoS === undefined ? undefined : NOW - c.lastRequestAgoS * 1000,
        ready: c.ready,
        desired: c.desired,
        state: c.state ?? INITIAL_STATE,
      });
      assert.equal(d.desired, c.want, d.reason);
      assert.equal(d.state.panicUntilMs !== undefined, c.panics ?? false, `panicking? ${d.reason}`);
    });
  }

  it('a panic ends one stable window after the last burst', () => {
    const scale = resolveScale({ concurrency: 10, idle: '10s' }, 'nodejs20');
    const base = { scale, samples: steady(0, 10), inFlight: 0, lastRequestAtMs: NOW, ready: 4, desired: 4 };
    assert.equal(decide({ ...base, nowMs: NOW, state: { panicUntilMs: NOW + 1 } }).desired, 4);
    const after = decide({ ...base, nowMs: NOW + 2, state: { panicUntilMs: NOW + 1 } });
    assert.equal(after.state.panicUntilMs, undefined);
    assert.equal(after.desired, 2);
  });
});

describe('in-flight meter', () => {
  it('averages concurrency over time, so short requests between samples count', () => {
    let t = 0;
    const m = new InFlightMeter(() => t);
    const a = m.begin();
    t = 250;
    const b = m.begin();
    t = 500;
    a();
    a(); // a second end changes nothing
    t = 1000;
    b();
    // 1 for 250 ms, 2 for 250 ms, 1 for 500 ms: 1.25 on average.
    assert.deepEqual(m.sample(), { atMs: 1000, concurrency: 1.25 });
    t = 2000;
    assert.deepEqual(m.sample(), { atMs: 2000, concurrency: 0 });
    assert.equal(m.lastRequestAtMs, 250);
    assert.equal(m.inFlight, 0);
  });
});
