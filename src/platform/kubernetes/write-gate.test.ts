import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { FakeTimers } from './api-client/fake-timers.ts';
import { WriteGate, WriteRefusedError } from './write-gate.ts';

describe('the write gate', () => {
  it('admits reads always, writes only before the deadline, and aborts writes in flight when it closes', () => {
    const timers = new FakeTimers();
    timers.advance(1_000);
    const gate = new WriteGate(timers);
    assert.equal(gate.admit('GET'), undefined);
    assert.throws(() => gate.admit('PATCH'), WriteRefusedError);
    gate.openUntil(3_000);
    const inFlight = gate.admit('PATCH');
    assert.ok(inFlight && !inFlight.aborted);
    timers.advance(500);
    gate.close('replica-a stopped leading');
    assert.ok(inFlight.aborted);
    assert.throws(() => gate.admit('DELETE'), /replica-a stopped leading/);
    assert.equal(gate.admit('GET'), undefined);
    gate.openUntil(5_000);
    const again = gate.admit('PUT');
    assert.ok(again && !again.aborted);
  });

  it('aborts writes in flight when the deadline passes without a renewal', () => {
    const timers = new FakeTimers();
    const gate = new WriteGate(timers);
    gate.openUntil(2_000);
    const inFlight = gate.admit('PATCH')!;
    timers.advance(1_999);
    assert.ok(!inFlight.aborted);
    timers.advance(1);
    assert.ok(inFlight.aborted);
    assert.throws(() => gate.admit('POST'), /not renewed in time/);
  });

  it('lets a write in flight finish when the Lease was renewed before the old deadline (a slow write under load)', () => {
    const timers = new FakeTimers();
    const gate = new WriteGate(timers);
    gate.openUntil(2_000);
    // Admitted 0.5 s before the deadline; the API server takes 3 s to answer it.
    timers.advance(1_500);
    const slow = gate.admit('PATCH')!;
    timers.advance(400);
    gate.openUntil(timers.now() + 2_000); // renewed
    timers.advance(1_900); // past the old deadline (2 s)
    assert.ok(!slow.aborted, 'the renewal moved the deadline on: the write may finish');
    timers.advance(100);
    assert.ok(slow.aborted, 'then the renewed deadline passed with no renewal');
  });
});
