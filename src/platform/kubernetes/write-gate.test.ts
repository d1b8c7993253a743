import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { WriteGate, WriteRefusedError } from './write-gate.ts';

describe('the write gate', () => {
  it('admits reads always, writes only before the deadline, and aborts writes in flight when it closes', () => {
    let now = 1_000;
    const gate = new WriteGate({ now: () => now });
    assert.equal(gate.admit('GET'), undefined);
    assert.throws(() => gate.admit('PATCH'), WriteRefusedError);
    gate.openUntil(3_000);
    const inFlight = gate.admit('PATCH');
    assert.ok(inFlight && !inFlight.aborted);
    now = 3_000;
    assert.throws(() => gate.admit('POST'), /not renewed in time/);
    now = 2_000;
    gate.close('replica-a stopped leading');
    assert.ok(inFlight.aborted);
    assert.throws(() => gate.admit('DELETE'), /replica-a stopped leading/);
    assert.equal(gate.admit('GET'), undefined);
    gate.openUntil(5_000);
    const again = gate.admit('PUT');
    assert.ok(again && !again.aborted);
  });
});
