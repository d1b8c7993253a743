// What /fn makes of a function's Deployment on Kubernetes: disabled is not idle.
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import type { V1Deployment } from '@kubernetes/client-node';
import { endpointOf } from '../load-endpoint.ts';
import type { FunctionResource } from '../objects/resources.ts';
import { DISABLED_ANNOTATION } from './workload-replicas.ts';

const fn = (min?: number): FunctionResource =>
  ({ metadata: { name: 'f', namespace: 'ns' }, spec: { timeoutSec: 9, ...(min !== undefined ? { scale: { min } } : {}) }, status: { phase: 'Ready' } }) as FunctionResource;
const dep = (replicas: number, available: number, disabled = false): V1Deployment => ({
  metadata: { name: 'f', namespace: 'ns', ...(disabled ? { annotations: { [DISABLED_ANNOTATION]: 'true' } } : {}) },
  spec: { replicas, selector: {}, template: {} },
  status: { availableReplicas: available },
});
const kind = (f: FunctionResource, d: V1Deployment) => endpointOf(f, d, 'ns', 'f', 'cluster.local');

describe('endpointOf with scaling', () => {
  it('a Deployment at 0 is idle (held and woken), unless it is marked disabled (503, never woken)', () => {
    assert.deepEqual(kind(fn(0), dep(0, 0)), { kind: 'idle', timeoutSec: 9 });
    assert.deepEqual(kind(fn(0), dep(0, 0, true)), { kind: 'disabled' });
  });
  it('a min-0 function waking (a replica asked for, none available yet) holds calls too', () => {
    assert.equal(kind(fn(0), dep(1, 0)).kind, 'idle');
    assert.equal(kind(fn(1), dep(1, 0)).kind, 'not-ready', 'min 1: nothing to wake, it is starting');
    assert.equal(kind(fn(0), dep(2, 1)).kind, 'ready');
  });
});
