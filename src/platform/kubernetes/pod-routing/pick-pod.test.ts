import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { pickLeastLoaded } from './pick-pod.ts';

describe('picking a pod', () => {
  it('takes the pod with the fewest calls in flight', () => {
    assert.equal(pickLeastLoaded([{ inFlight: 3 }, { inFlight: 1 }, { inFlight: 2 }], 0), 1);
  });
  it('takes equal pods in turn from the cursor', () => {
    const pods = [{ inFlight: 0 }, { inFlight: 0 }, { inFlight: 0 }];
    assert.deepEqual([0, 1, 2, 3].map((c) => pickLeastLoaded(pods, c)), [0, 1, 2, 0]);
    assert.equal(pickLeastLoaded([{ inFlight: 1 }, { inFlight: 2 }, { inFlight: 1 }], 1), 2);
  });
  it('-1 without pods', () => {
    assert.equal(pickLeastLoaded([], 0), -1);
  });
});
