import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { sameConditions, summarize } from './conditions.ts';
import { capBytes } from './job-status.ts';

const T0 = '2026-01-01T00:00:00.000Z';
const T1 = '2026-01-01T00:01:00.000Z';

describe('summarize', () => {
  it('sets Ready=True with observedGeneration when ready, and nothing else', () => {
    const s = summarize(undefined, { kind: 'ready', reason: 'Synced', message: 'ok' }, 3, T0);
    assert.deepEqual(s, {
      observedGeneration: 3,
      conditions: [{ type: 'Ready', status: 'True', reason: 'Synced', message: 'ok', lastTransitionTime: T0, observedGeneration: 3 }],
    });
  });
  it('marks progress as Ready=Unknown + Reconciling, retried failures as Ready=False + Reconciling, terminal problems as Ready=False + Stalled (kstatus)', () => {
    const p = summarize(undefined, { kind: 'progressing', reason: 'Building', message: 'b' }, 1, T0);
    assert.deepEqual(p.conditions.map((c) => `${c.type}=${c.status}`), ['Ready=Unknown', 'Reconciling=True']);
    const s = summarize(undefined, { kind: 'stalled', reason: 'EmptySource', message: 'e' }, 1, T0);
    assert.deepEqual(s.conditions.map((c) => `${c.type}=${c.status}`), ['Ready=False', 'Stalled=True']);
    const f = summarize(undefined, { kind: 'failed', reason: 'SyncFailed', message: 'f' }, 1, T0);
    // Ready=False alone reads as Current (done) to kstatus and Flux health checks.
    assert.deepEqual(f.conditions.map((c) => `${c.type}=${c.status}`), ['Ready=False', 'Reconciling=True']);
  });
  it('keeps lastTransitionTime while the status stays the same', () => {
    const first = summarize(undefined, { kind: 'ready', reason: 'Synced', message: 'a' }, 1, T0);
    const again = summarize(first.conditions, { kind: 'ready', reason: 'FunctionErrors', message: 'b' }, 2, T1);
    assert.equal(again.conditions[0]?.lastTransitionTime, T0);
    const flipped = summarize(first.conditions, { kind: 'failed', reason: 'SyncFailed', message: 'c' }, 2, T1);
    assert.equal(flipped.conditions[0]?.lastTransitionTime, T1);
  });
  it('while suspended keeps Ready as it was (status, reason, message, transition time) at the new generation, and drops Reconciling and Stalled', () => {
    const stalled = summarize(undefined, { kind: 'stalled', reason: 'EmptySource', message: 'e' }, 4, T0);
    const s = summarize(stalled.conditions, { kind: 'suspended', reason: 'Suspended', message: 'not syncing' }, 5, T1);
    assert.deepEqual(s, {
      observedGeneration: 5,
      conditions: [{ type: 'Ready', status: 'False', reason: 'EmptySource', message: 'e', lastTransitionTime: T0, observedGeneration: 5 }],
    });
    // Never reconciled: nothing to keep, and nothing in progress either.
    assert.deepEqual(summarize(undefined, { kind: 'suspended', reason: 'Suspended', message: 'x' }, 1, T0), { observedGeneration: 1, conditions: [] });
  });
  it('recognises a status that already says the same, to skip a write', () => {
    const a = summarize(undefined, { kind: 'ready', reason: 'Synced', message: 'a' }, 1, T0).conditions;
    assert.equal(sameConditions(a, summarize(a, { kind: 'ready', reason: 'Synced', message: 'a' }, 1, T1).conditions), true);
    assert.equal(sameConditions(a, summarize(a, { kind: 'ready', reason: 'Synced', message: 'a' }, 2, T1).conditions), false);
  });
});

describe('capBytes', () => {
  it('keeps the end of long output, within the byte budget', () => {
    assert.equal(capBytes('short', 10), 'short');
    const capped = capBytes(`${'x'.repeat(100)}the end`, 10);
    assert.equal(capped, '…xxxthe end');
  });
});

describe('summarize: conditions a reconciler states beside the summary', () => {
  it('adds them with their own transition time, and a run that no longer states one drops it', () => {
    const pinned = { type: 'Pinned', status: 'True' as const, reason: 'RolledBack', message: 'serving revision 2; git is ahead: push a fix or undo the rollback' };
    const first = summarize(undefined, { kind: 'ready', reason: 'Pinned', message: 'm' }, 4, '2026-12-06T10:00:00Z', [pinned]);
    assert.deepEqual(
      first.conditions.map((c) => [c.type, c.status, c.reason, c.lastTransitionTime, c.observedGeneration]),
      [
        ['Ready', 'True', 'Pinned', '2026-12-06T10:00:00Z', 4],
        ['Pinned', 'True', 'RolledBack', '2026-12-06T10:00:00Z', 4],
      ],
    );
    const again = summarize(first.conditions, { kind: 'ready', reason: 'Pinned', message: 'm' }, 4, '2026-12-06T11:00:00Z', [pinned]);
    assert.equal(again.conditions[1]?.lastTransitionTime, '2026-12-06T10:00:00Z');
    assert.ok(sameConditions(first.conditions, again.conditions));
    const undone = summarize(again.conditions, { kind: 'ready', reason: 'Deployed', message: 'm' }, 4, '2026-12-06T12:00:00Z');
    assert.deepEqual(undone.conditions.map((c) => c.type), ['Ready']);
  });
});
