import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import type { FunctionResource } from './objects/resources.ts';
import { kubeFunctionState } from './kube-function-state.ts';

const fn = (generation: number, status: FunctionResource['status']): FunctionResource => ({ metadata: { name: 'hello', generation }, status });
const cond = (type: string, status: 'True' | 'False' | 'Unknown', message = '') => ({ type, status, reason: 'R', message, lastTransitionTime: '2026-12-01T00:00:00Z' });

describe('kubeFunctionState', () => {
  it('serving when Ready=True for the generation the sync applied', () => {
    assert.deepEqual(kubeFunctionState(fn(3, { observedGeneration: 3, conditions: [cond('Ready', 'True')] }), 3), { kind: 'serving' });
  });
  it('pinned when Ready=True while a rollback pins it (the sless.kube5s.ru/pinned annotation): built, not live', () => {
    const pinned: FunctionResource = {
      ...fn(3, { observedGeneration: 3, conditions: [cond('Ready', 'True'), cond('Pinned', 'True')] }),
      metadata: { name: 'hello', generation: 3, annotations: { 'sless.kube5s.ru/pinned': '{"revision":2,"since":"2026-12-06T10:00:00Z"}' } },
    };
    assert.deepEqual(kubeFunctionState(pinned, 3), { kind: 'pinned', revision: 2 });
  });
  it('pending while the cache still shows the object before the apply, or the controller has not observed it', () => {
    assert.equal(kubeFunctionState(fn(2, { observedGeneration: 2, conditions: [cond('Ready', 'True')] }), 3).kind, 'pending');
    assert.equal(kubeFunctionState(fn(3, { observedGeneration: 2, conditions: [cond('Ready', 'True')] }), undefined).kind, 'pending');
    assert.equal(kubeFunctionState(undefined, 1).kind, 'pending');
  });
  it('pending with the message while building or retrying; failed when Stalled (a failed build)', () => {
    assert.deepEqual(kubeFunctionState(fn(1, { observedGeneration: 1, phase: 'Building', conditions: [cond('Ready', 'Unknown', 'building image')] }), 1), {
      kind: 'pending',
      message: 'building image',
    });
    assert.deepEqual(
      kubeFunctionState(fn(1, { observedGeneration: 1, phase: 'Failed', message: 'build failed (Job b/x, BackoffLimitExceeded):\nlog', conditions: [cond('Ready', 'False'), cond('Stalled', 'True')] }), 1),
      { kind: 'failed', message: 'build failed (Job b/x, BackoffLimitExceeded):\nlog' },
    );
  });
});
