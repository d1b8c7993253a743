// A queue-only function (http.enabled: false beside queue Triggers, docs/queues.md): its Deployment
// runs, marked so that /fn still answers "disabled" while queue deliveries find where it runs.
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { endpointOf } from './load-endpoint.ts';
import { functionDeployment } from './objects/function-workload.ts';
import { DISABLED_ANNOTATION, scaleOfSpec, workloadReplicas } from './scaling/workload-replicas.ts';
import { trimDeployment } from './serving-cache.ts';
import { fn, settings } from './objects/test-fixtures.ts';

const available = <T extends { status?: object }>(d: T): T => ({ ...d, status: { availableReplicas: 1 } });

describe('a function with http off and queue Triggers', () => {
  it('runs: its Deployment keeps its floor of replicas and carries the http-disabled mark', () => {
    const scale = scaleOfSpec(fn.spec);
    assert.equal(workloadReplicas(false, scale, undefined, true), 1, 'queue-only: max(1, min)');
    assert.equal(workloadReplicas(false, { ...scale, min: 3 }, { replicas: 0, disabled: true }, true), 3);
    assert.equal(workloadReplicas(false, scale, undefined, false), 0, 'http off and no queues: 0');
    const dep = functionDeployment(settings, fn, { imageRef: 'i', httpEnabled: false, replicas: 1 });
    assert.equal(dep.spec?.replicas, 1);
    assert.equal(dep.metadata?.annotations?.[DISABLED_ANNOTATION], 'true');
    assert.equal(functionDeployment(settings, fn, { imageRef: 'i', httpEnabled: true, replicas: 1 }).metadata?.annotations, undefined);
  });

  it('is "disabled" for /fn, with the running endpoint for queue deliveries, also as the serving watch keeps it', () => {
    const dep = available(functionDeployment(settings, fn, { imageRef: 'i', httpEnabled: false, replicas: 1 }));
    // The real node showed it: the watch's trimmed copy had lost the mark, and /fn served the function.
    trimDeployment(dep);
    const endpoint = endpointOf(fn, dep, 'shop', 'hello', 'cluster.local');
    assert.equal(endpoint.kind, 'disabled');
    assert.equal(endpoint.kind === 'disabled' && endpoint.forQueues?.kind, 'ready');
    const off = endpointOf(fn, functionDeployment(settings, fn, { imageRef: 'i', httpEnabled: false, replicas: 0 }), 'shop', 'hello', 'cluster.local');
    assert.deepEqual(off, { kind: 'disabled' });
  });
});
