import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { fingerprintOwned, fingerprintRepository, FULL_SYNC_EVERY_MS, unchangedSince, type AppliedSync } from './unchanged-sync.ts';

const fn = (over: Record<string, unknown> = {}) => ({
  kind: 'Function',
  metadata: { name: 'hello', uid: 'u1', generation: 2, labels: { a: '1', b: '2' }, annotations: { k: 'v' }, ownerReferences: [{ uid: 'r1' }], ...over },
});
const repo = { metadata: { uid: 'r1', generation: 3 } };
const memo: AppliedSync = {
  revision: 'a'.repeat(40),
  repository: fingerprintRepository(repo),
  owned: fingerprintOwned([[fn()], [], []]),
  at: 1_000,
  outcome: { kind: 'ready', reason: 'Synced', message: 'ok' },
  status: {},
};
const current = { revision: memo.revision, repository: memo.repository, owned: memo.owned, now: 2_000 };

describe('a sync that may stop after ls-remote', () => {
  it('stops when the remote head, the repository spec and the owned objects are what the last full sync saw', () => {
    assert.equal(unchangedSince(memo, current), true);
  });

  it('runs in full after a push, a spec change, a recreated repository, or with no memo', () => {
    assert.equal(unchangedSince(memo, { ...current, revision: 'b'.repeat(40) }), false);
    assert.equal(unchangedSince(memo, { ...current, repository: fingerprintRepository({ metadata: { uid: 'r1', generation: 4 } }) }), false);
    assert.equal(unchangedSince(memo, { ...current, repository: fingerprintRepository({ metadata: { uid: 'r2', generation: 3 } }) }), false);
    assert.equal(unchangedSince(undefined, current), false);
  });

  it('runs in full when an owned object was edited, relabelled, re-owned, deleted, added or is being deleted', () => {
    for (const changed of [
      [[fn({ generation: 3 })], [], []],
      [[fn({ labels: { a: '1' } })], [], []],
      [[fn({ annotations: { k: 'w' } })], [], []],
      [[fn({ ownerReferences: [] })], [], []],
      [[fn({ deletionTimestamp: '2026-12-01T00:00:00Z' })], [], []],
      [[fn({ uid: 'u2' })], [], []],
      [[], [], []],
      [[fn()], [{ kind: 'Trigger', metadata: { name: 'hello-http', uid: 't1', generation: 1 } }], []],
    ]) {
      assert.equal(unchangedSince(memo, { ...current, owned: fingerprintOwned(changed) }), false, JSON.stringify(changed));
    }
  });

  it('ignores what a status write or a cache reorder changes: the order of objects and of their labels', () => {
    const two = [fn(), fn({ name: 'other', uid: 'u9' })];
    assert.equal(fingerprintOwned([two, [], []]), fingerprintOwned([[...two].reverse(), [], []]));
    assert.equal(fingerprintOwned([[fn()], [], []]), fingerprintOwned([[fn({ labels: { b: '2', a: '1' } })], [], []]));
  });

  it('keeps no shortcut for a sync that was not Ready, nor one older than the full-sync period', () => {
    assert.equal(unchangedSince({ ...memo, outcome: { kind: 'failed', reason: 'FunctionErrors', message: 'x' } }, current), false);
    assert.equal(unchangedSince(memo, { ...current, now: memo.at + FULL_SYNC_EVERY_MS }), false);
    assert.equal(unchangedSince(memo, { ...current, now: memo.at - 1 }), false);
  });

  it('keeps a fixed-size digest of the owned objects, however many there are (3,000 objects)', () => {
    const many = Array.from({ length: 3_000 }, (_, i) => fn({ name: `fn-${i}`, uid: `u-${i}` }));
    const digest = fingerprintOwned([many, [], []]);
    assert.match(digest, /^[0-9a-f]{64}$/);
    assert.notEqual(digest, fingerprintOwned([many.slice(1), [], []]));
  });
});
