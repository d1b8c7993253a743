// Routine syncs step aside for urgent ones (urgent-gate.ts): at a phase boundary a routine run waits while an
// urgent run is running, goes on when the urgent runs end, and never waits longer than its bound.
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { FakeTimers } from './fake-timers.ts';
import { holdMs, UrgentGate } from './urgent-gate.ts';

const tick = () => new Promise((r) => setImmediate(r));
const OPTS = { maxWaitMs: 2000, maxHoldMs: 5000, quietMs: 1000 };

/** Starts a boundary wait; `done()` says whether it has resolved yet. */
function waitAt(gate: UrgentGate, turn: ReturnType<UrgentGate['routine']>) {
  let resolved = false;
  void gate.boundary(turn).then(() => (resolved = true));
  return { done: async () => (await tick(), resolved) };
}

describe('UrgentGate', () => {
  it('lets a routine run through at once when no urgent run is running', async () => {
    const gate = new UrgentGate({ ...OPTS, timers: new FakeTimers() });
    const w = waitAt(gate, gate.routine());
    assert.equal(await w.done(), true);
  });

  it('holds a routine run at a boundary while an urgent run runs, and lets it go when that run ends', async () => {
    const timers = new FakeTimers();
    const gate = new UrgentGate({ ...OPTS, timers });
    const end = gate.begin();
    const turn = gate.routine();
    const w = waitAt(gate, turn);
    timers.advance(100);
    assert.equal(await w.done(), false, 'waits while the urgent run runs');
    end();
    assert.equal(await w.done(), true, 'goes on once it ended');
    assert.equal(turn.waitedMs, 100);
  });

  it('waits until the last of several urgent runs ends', async () => {
    const timers = new FakeTimers();
    const gate = new UrgentGate({ ...OPTS, timers });
    const endA = gate.begin();
    const endB = gate.begin();
    const w = waitAt(gate, gate.routine());
    endA();
    assert.equal(await w.done(), false);
    endB();
    assert.equal(await w.done(), true);
  });

  it('never holds one routine run longer than maxWaitMs over all its boundaries', async () => {
    const timers = new FakeTimers();
    const gate = new UrgentGate({ ...OPTS, timers });
    gate.begin(); // never ends
    const turn = gate.routine();
    const first = waitAt(gate, turn);
    timers.advance(1500);
    assert.equal(await first.done(), false);
    timers.advance(500);
    assert.equal(await first.done(), true, 'released at its bound');
    // Its budget is spent: the next boundary of the same run does not wait at all.
    const second = waitAt(gate, turn);
    assert.equal(await second.done(), true);
    assert.equal(turn.waitedMs, 2000);
    // Another routine run has its own budget.
    const other = waitAt(gate, gate.routine());
    assert.equal(await other.done(), false);
  });

  it('ends an end() called twice only once', async () => {
    const gate = new UrgentGate({ ...OPTS, timers: new FakeTimers() });
    const endA = gate.begin();
    const endB = gate.begin();
    endA();
    endA();
    const w = waitAt(gate, gate.routine());
    assert.equal(await w.done(), false, 'B still runs');
    endB();
    assert.equal(await w.done(), true);
  });

  it('stops holding routine runs when urgent runs come back to back past maxHoldMs, until they pause for quietMs', async () => {
    const timers = new FakeTimers();
    const gate = new UrgentGate({ ...OPTS, timers });
    // Urgent runs of 400 ms each with 100 ms between them: one stretch.
    for (let t = 0; t < 5000; t += 500) {
      const end = gate.begin();
      timers.advance(400);
      end();
      timers.advance(100);
    }
    const end = gate.begin();
    assert.equal(holdMs(gate.state(), timers.now(), 0, OPTS), 0, 'the stretch is 5 s long: routine runs go on');
    const w = waitAt(gate, gate.routine());
    assert.equal(await w.done(), true);
    end();
    // A pause of quietMs ends the stretch: the next urgent run holds routine runs again.
    timers.advance(1000);
    const again = gate.begin();
    const held = waitAt(gate, gate.routine());
    assert.equal(await held.done(), false);
    again();
    assert.equal(await held.done(), true);
  });

  it('releases a waiting routine run when the stretch reaches maxHoldMs', async () => {
    const timers = new FakeTimers();
    const gate = new UrgentGate({ ...OPTS, maxWaitMs: 10_000, timers });
    gate.begin();
    timers.advance(4000);
    const w = waitAt(gate, gate.routine());
    timers.advance(999);
    assert.equal(await w.done(), false);
    timers.advance(1);
    assert.equal(await w.done(), true, 'the stretch is over its 5 s');
  });
});

describe('holdMs', () => {
  const state = (urgent: number, stretchStart?: number) => ({ urgent, ...(stretchStart === undefined ? {} : { stretchStart }) });
  it('is 0 with no urgent run, else the least of the run budget left and the stretch left', () => {
    assert.equal(holdMs(state(0), 100, 0, OPTS), 0);
    assert.equal(holdMs(state(1, 0), 100, 0, OPTS), 2000);
    assert.equal(holdMs(state(1, 0), 100, 1500, OPTS), 500);
    assert.equal(holdMs(state(1, 0), 4500, 0, OPTS), 500);
    assert.equal(holdMs(state(1, 0), 5000, 0, OPTS), 0);
    assert.equal(holdMs(state(1, 0), 100, 2000, OPTS), 0);
  });
});
