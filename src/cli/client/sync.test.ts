import assert from 'node:assert/strict';
import { test } from 'node:test';
import { syncProgress } from './sync.ts';

const before = {
  revision: 'aaa',
  last_sync_time: '2026-12-06T09:00:00.000Z',
  functions: [{ name: 'a' }, { name: 'b' }],
};
const after = { ...before, revision: 'bbb', last_sync_time: '2026-12-06T09:01:00.000Z' };

test('waits while neither the revision nor the last sync time has moved', () => {
  assert.equal(syncProgress(before, before, []).state, 'waiting');
});

test('after the sync: waits for every function of the repository to be Ready, then is done', () => {
  assert.deepEqual(
    syncProgress(before, after, [
      { name: 'a', phase: 'Ready' },
      { name: 'b', phase: 'Building' },
    ]),
    { state: 'waiting', detail: 'waiting for b (Building)' },
  );
  assert.deepEqual(
    syncProgress(before, { ...before, last_sync_time: 'later' }, [
      { name: 'a', phase: 'Ready' },
      { name: 'b', phase: 'Ready' },
      { name: 'other', phase: 'Failed' },
    ]),
    {
      state: 'done',
      detail: 'revision aaa: 2 functions Ready',
    },
  );
});

test('a function still Ready with its previous code_hash is waited for', () => {
  const now = { ...after, functions: [{ name: 'a', code_hash: 'sha256:new' }] };
  assert.deepEqual(syncProgress(before, now, [{ name: 'a', phase: 'Ready', code_hash: 'sha256:old' }]), {
    state: 'waiting',
    detail: 'waiting for a (previous code)',
  });
  assert.equal(
    syncProgress(before, now, [{ name: 'a', phase: 'Ready', code_hash: 'sha256:new' }]).state,
    'done',
  );
});

test('one Failed or invalid function, or a repository not ready, fails the wait and is named', () => {
  assert.deepEqual(
    syncProgress(before, after, [
      { name: 'a', phase: 'Ready' },
      { name: 'b', phase: 'Failed', message: 'build failed: exit 1' },
    ]),
    {
      state: 'failed',
      detail: 'function b failed: build failed: exit 1',
    },
  );
  assert.equal(
    syncProgress(
      before,
      { ...after, functions: [{ name: 'a', error: 'function.yaml:1: runtime: unknown' }] },
      [],
    ).detail,
    'function a is invalid: function.yaml:1: runtime: unknown',
  );
  assert.equal(
    syncProgress(
      before,
      { ...after, ready: { status: 'False', reason: 'GitAuthFailed', message: 'bad credentials' } },
      [],
    ).detail,
    'repository not ready: GitAuthFailed bad credentials',
  );
});
