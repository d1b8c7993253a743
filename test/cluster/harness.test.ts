// The test cluster and its kubelet harness (test/helpers/kube.ts) behave like a real cluster to
// the objects other suites create: Jobs complete or fail, Deployments become Available, owners'
// deletion collects dependents.
import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import { ApiException, AppsV1Api, BatchV1Api, CoreV1Api, type KubeConfig, type V1Job } from '@kubernetes/client-node';
import { controllersRunning, eventually, freshNamespace, testKubeConfig, type TestNamespace } from '../helpers/kube.ts';
import { markDeploymentAvailable, markJobFailed, markJobSucceeded } from '../helpers/kube-harness.ts';

let kc: KubeConfig;
let ns: TestNamespace;

before(async () => {
  kc = testKubeConfig();
  ns = await freshNamespace(kc, 'harness');
});
after(async () => ns?.cleanup());

function job(name: string, extra: Partial<NonNullable<V1Job['spec']>> = {}): V1Job {
  return {
    metadata: { name },
    spec: {
      backoffLimit: 0,
      template: {
        metadata: { labels: { app: name } },
        spec: { restartPolicy: 'Never', containers: [{ name: 'fn', image: 'registry.local/fn:1' }] },
      },
      ...extra,
    },
  };
}

function condition(j: V1Job, type: string): string | undefined {
  return j.status?.conditions?.find((c) => c.type === type)?.status;
}

describe('eventually', () => {
  test('returns the first value that does not throw', async () => {
    let calls = 0;
    const value = await eventually(() => {
      calls += 1;
      if (calls < 3) throw new Error('not yet');
      return calls;
    }, { intervalMs: 1 });
    assert.equal(value, 3);
  });

  test('rethrows the last error after the timeout, saying how long it waited', async () => {
    await assert.rejects(
      eventually(() => assert.equal(1, 2), { timeoutMs: 50, intervalMs: 10 }),
      /after 50 ms: .*1 !== 2/s,
    );
  });
});

describe('kubelet harness', () => {
  test('the cluster under test runs kube-controller-manager (SLESS_TEST_KUBE_CONTROLLERS=1)', () => {
    assert.equal(controllersRunning(), true);
  });

  test('markJobSucceeded: the job controller completes the Job; the output is in the pod', async () => {
    const batch = kc.makeApiClient(BatchV1Api);
    const core = kc.makeApiClient(CoreV1Api);
    await batch.createNamespacedJob({ namespace: ns.name, body: job('ok-run') });
    const done = await markJobSucceeded(kc, ns.name, 'ok-run', { terminationMessage: '{"sum":600}' });
    assert.equal(condition(done, 'Complete'), 'True');
    assert.equal(condition(done, 'SuccessCriteriaMet'), 'True');
    assert.equal(done.status?.succeeded, 1);
    const pods = await core.listNamespacedPod({ namespace: ns.name, labelSelector: 'batch.kubernetes.io/job-name=ok-run' });
    assert.equal(pods.items[0]?.status?.containerStatuses?.[0]?.state?.terminated?.message, '{"sum":600}');
  });

  test('markJobFailed: the job controller fails the Job (backoffLimit 0)', async () => {
    const batch = kc.makeApiClient(BatchV1Api);
    await batch.createNamespacedJob({ namespace: ns.name, body: job('bad-run') });
    const failed = await markJobFailed(kc, ns.name, 'bad-run', { log: 'Error: boom' });
    assert.equal(condition(failed, 'Failed'), 'True');
    assert.equal(failed.status?.conditions?.find((c) => c.type === 'Failed')?.reason, 'BackoffLimitExceeded');
  });

  test('without a job controller the harness writes the Job status the apiserver accepts', async () => {
    // managedBy hands the Job to "another controller", so the running job controller leaves it alone.
    const batch = kc.makeApiClient(BatchV1Api);
    const core = kc.makeApiClient(CoreV1Api);
    const previous = process.env.SLESS_TEST_KUBE_CONTROLLERS;
    process.env.SLESS_TEST_KUBE_CONTROLLERS = '0';
    try {
      for (const [name, succeed] of [['manual-ok', true], ['manual-bad', false]] as const) {
        await batch.createNamespacedJob({ namespace: ns.name, body: job(name, { managedBy: 'sless.kube5s.ru/test-harness' }) });
        const finished = succeed
          ? await markJobSucceeded(kc, ns.name, name, { terminationMessage: 'done' })
          : await markJobFailed(kc, ns.name, name, { terminationMessage: 'boom' });
        assert.equal(condition(finished, succeed ? 'Complete' : 'Failed'), 'True');
        assert.ok(finished.status?.startTime);
        const pods = await core.listNamespacedPod({ namespace: ns.name, labelSelector: `batch.kubernetes.io/job-name=${name}` });
        assert.equal(pods.items.length, 1);
        assert.equal(pods.items[0]?.status?.phase, succeed ? 'Succeeded' : 'Failed');
        assert.equal(pods.items[0]?.metadata?.ownerReferences?.[0]?.name, name);
      }
    } finally {
      process.env.SLESS_TEST_KUBE_CONTROLLERS = previous;
    }
  });

  test('markDeploymentAvailable: ReplicaSet pods become Ready and the Deployment Available', async () => {
    const apps = kc.makeApiClient(AppsV1Api);
    await apps.createNamespacedDeployment({
      namespace: ns.name,
      body: {
        metadata: { name: 'web' },
        spec: {
          replicas: 2,
          selector: { matchLabels: { app: 'web' } },
          template: {
            metadata: { labels: { app: 'web' } },
            spec: { containers: [{ name: 'fn', image: 'registry.local/web:1', ports: [{ containerPort: 8080 }] }] },
          },
        },
      },
    });
    await markDeploymentAvailable(kc, ns.name, 'web');
    const d = await apps.readNamespacedDeployment({ name: 'web', namespace: ns.name });
    assert.equal(d.status?.availableReplicas, 2);
  });

  test('deleting an owner collects its dependents (garbage collector)', async () => {
    const batch = kc.makeApiClient(BatchV1Api);
    const core = kc.makeApiClient(CoreV1Api);
    await batch.deleteNamespacedJob({ name: 'ok-run', namespace: ns.name, propagationPolicy: 'Background' });
    await eventually(async () => {
      const pods = await core.listNamespacedPod({ namespace: ns.name, labelSelector: 'batch.kubernetes.io/job-name=ok-run' });
      assert.equal(pods.items.length, 0);
    });
    await assert.rejects(batch.readNamespacedJob({ name: 'ok-run', namespace: ns.name }), (e: unknown) => e instanceof ApiException && e.code === 404);
  });
});
