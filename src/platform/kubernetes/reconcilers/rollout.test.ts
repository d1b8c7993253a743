import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import type { V1Deployment, V1Pod } from '@kubernetes/client-node';
import { buildRetryDelayMs, classifyBuildFailure } from './build-failure.ts';
import { rolloutOf } from './rollout.ts';

const IMAGE = 'reg/x:1@sha256:' + 'a'.repeat(64);
const dep = (status: V1Deployment['status'], replicas = 1, generation = 2): V1Deployment => ({ metadata: { name: 'f', namespace: 'n', generation }, spec: { replicas, selector: {}, template: {} }, status });
const pod = (waiting?: string): V1Pod => ({
  metadata: { name: 'f-1' },
  spec: { containers: [{ name: 'function', image: IMAGE }] },
  status: { containerStatuses: [{ name: 'function', image: IMAGE, imageID: '', ready: false, restartCount: 3, ...(waiting ? { state: { waiting: { reason: waiting } } } : {}) }] },
});

describe('rolloutOf: Ready means serving', () => {
  it('scaling alone (the rolled-out form, only replicas moved) keeps a function available while pods start or stop', () => {
    const waking = dep({ observedGeneration: 1, replicas: 1, updatedReplicas: 1, availableReplicas: 0 });
    assert.equal(rolloutOf(waking, [], IMAGE, { scalingOnly: true }).state, 'available');
    assert.equal(rolloutOf(dep({ observedGeneration: 2, replicas: 3, updatedReplicas: 3, availableReplicas: 1 }, 3), [], IMAGE, { scalingOnly: true }).state, 'available');
    assert.equal(rolloutOf(waking, [], IMAGE).state, 'progressing', 'a new form still rolls out');
    assert.equal(rolloutOf(waking, [pod('CrashLoopBackOff')], IMAGE, { scalingOnly: true }).state, 'failing', 'a woken pod that crash-loops says so');
  });
  it('is available only when the new spec is seen and every replica is updated and available', () => {
    assert.equal(rolloutOf(dep({ observedGeneration: 2, replicas: 1, updatedReplicas: 1, availableReplicas: 1 }), [], IMAGE).state, 'available');
    assert.equal(rolloutOf(dep({ observedGeneration: 1, replicas: 1, updatedReplicas: 1, availableReplicas: 1 }), [], IMAGE).state, 'progressing');
    assert.equal(rolloutOf(dep({ observedGeneration: 2, replicas: 2, updatedReplicas: 1, availableReplicas: 1 }), [], IMAGE).state, 'progressing', 'old pod still there');
    assert.equal(rolloutOf(dep({ observedGeneration: 2, replicas: 1, updatedReplicas: 1, availableReplicas: 0 }), [], IMAGE).state, 'progressing');
    assert.equal(rolloutOf(undefined, [], IMAGE).state, 'progressing');
    assert.equal(rolloutOf(dep({ observedGeneration: 2, replicas: 0 }, 0), [], IMAGE).state, 'available', 'http disabled: 0 replicas');
  });
  it('names crash loops and image pull failures of the new pods; a passed progress deadline stalls', () => {
    const rolling = dep({ observedGeneration: 2, replicas: 2, updatedReplicas: 1, availableReplicas: 1 });
    for (const reason of ['CrashLoopBackOff', 'ImagePullBackOff', 'ErrImagePull']) {
      const r = rolloutOf(rolling, [pod(reason)], IMAGE);
      assert.equal(r.state, 'failing');
      assert.equal(r.state === 'failing' && r.reason, reason);
    }
    assert.equal(rolloutOf(rolling, [pod('ContainerCreating')], IMAGE).state, 'progressing');
    const traceback = 'Traceback (most recent call last):\n  File "/app/handler.py", line 1\n    def handle(event, context=None)\n                                   ^\nSyntaxError: expected \':\'\n';
    const crashed = pod('CrashLoopBackOff');
    crashed.status!.containerStatuses![0]!.state!.waiting!.message = 'back-off 40s restarting failed container=function';
    crashed.status!.containerStatuses![0]!.lastState = { terminated: { exitCode: 1, reason: 'Error', message: traceback } };
    const why = rolloutOf(rolling, [crashed], IMAGE);
    assert.match(why.message, /CrashLoopBackOff: exit code 1 \(Error\): .*SyntaxError: expected ':'; the previous version keeps serving$/s, 'says why: the crashed process\'s last output');
    assert.doesNotMatch(why.message, /back-off/);
    const late = dep({ observedGeneration: 2, conditions: [{ type: 'Progressing', status: 'False', reason: 'ProgressDeadlineExceeded', message: 'too slow' }] });
    assert.equal(rolloutOf(late, [], IMAGE).state, 'stalled');
  });
});

describe('classifyBuildFailure', () => {
  const job = (reason = 'BackoffLimitExceeded') => ({ status: { conditions: [{ type: 'Failed', status: 'True', reason }] } });
  const podWith = (failed: string, reason = 'Error', exitCode = 1): V1Pod => ({
    status: {
      initContainerStatuses: [
        { name: 'fetch', image: '', imageID: '', ready: false, restartCount: 0, state: { terminated: { exitCode: failed === 'fetch' ? exitCode : 0, reason: failed === 'fetch' ? reason : 'Completed' } } },
        { name: 'kaniko', image: '', imageID: '', ready: false, restartCount: 0, state: failed === 'kaniko' ? { terminated: { exitCode, reason } } : { terminated: { exitCode: 0 } } },
      ],
      containerStatuses: [{ name: 'push', image: '', imageID: '', ready: false, restartCount: 0, state: failed === 'push' ? { terminated: { exitCode, reason } } : { waiting: { reason: 'PodInitializing' } } }],
    },
  });
  it('the user build step failing is deterministic; fetch, push, eviction, deadline and a missing pod are infrastructure', () => {
    assert.equal(classifyBuildFailure(job(), podWith('kaniko')).kind, 'deterministic');
    assert.equal(classifyBuildFailure(job(), podWith('kaniko', 'OOMKilled', 137)).kind, 'deterministic');
    assert.equal(classifyBuildFailure(job(), podWith('fetch')).kind, 'infrastructure');
    assert.equal(classifyBuildFailure(job(), podWith('push')).kind, 'infrastructure');
    assert.equal(classifyBuildFailure(job('DeadlineExceeded'), podWith('kaniko')).kind, 'infrastructure');
    assert.equal(classifyBuildFailure(job(), undefined).kind, 'infrastructure');
    assert.equal(classifyBuildFailure(job(), { status: { reason: 'Evicted' } }).kind, 'infrastructure');
  });
  it('backs off 30 s doubling, capped at 30 min', () => {
    assert.deepEqual([1, 2, 3, 7, 20].map(buildRetryDelayMs), [30_000, 60_000, 120_000, 1_800_000, 1_800_000]);
  });
});
