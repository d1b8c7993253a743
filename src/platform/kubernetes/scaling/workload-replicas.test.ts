// The reconciler sets a Deployment's replicas only where it must; between the bounds the autoscaler's count stands.
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { resolveScale } from '../../../manifest/scale-spec.ts';
import { workloadReplicas } from './workload-replicas.ts';

describe('workloadReplicas', () => {
  const scale = resolveScale({ min: 0, max: 4 }, 'nodejs20');
  it('is 0 when http is disabled', () => assert.equal(workloadReplicas(false, scale, { replicas: 3, disabled: false }), 0));
  it('starts a new Deployment (or one switched on again) with one replica, or min', () => {
    assert.equal(workloadReplicas(true, scale, undefined), 1);
    assert.equal(workloadReplicas(true, scale, { replicas: 0, disabled: true }), 1);
    assert.equal(workloadReplicas(true, resolveScale({ min: 3 }, 'nodejs20'), undefined), 3);
  });
  it('leaves the live count between the bounds: 0 (idle) and 3 stay', () => {
    assert.equal(workloadReplicas(true, scale, { replicas: 0, disabled: false }), 0);
    assert.equal(workloadReplicas(true, scale, { replicas: 3, disabled: false }), 3);
  });
  it('pulls it into new bounds', () => {
    assert.equal(workloadReplicas(true, resolveScale({ min: 2, max: 4 }, 'nodejs20'), { replicas: 0, disabled: false }), 2);
    assert.equal(workloadReplicas(true, resolveScale({ max: 2 }, 'nodejs20'), { replicas: 5, disabled: false }), 2);
  });
});
