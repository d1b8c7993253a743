import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import type { KubernetesListObject, KubernetesObject, V1Pod } from '@kubernetes/client-node';
import { jobForCache, listAllPages, podForCache, slimObject } from './slim.ts';

describe('slimObject', () => {
  it('drops managedFields and the last-applied annotation, keeps everything else', () => {
    const obj = {
      metadata: { name: 'a', managedFields: [{ manager: 'sless' }], annotations: { 'kubectl.kubernetes.io/last-applied-configuration': '{}', keep: 'yes' }, labels: { l: '1' } },
      spec: { x: 1 },
    } as KubernetesObject & { spec: unknown };
    const out = slimObject(obj);
    assert.equal(out, obj, 'in place');
    assert.deepEqual(out, { metadata: { name: 'a', annotations: { keep: 'yes' }, labels: { l: '1' } }, spec: { x: 1 } });
  });
});

describe('listAllPages', () => {
  it('follows continue tokens, transforms every item and keeps the first page resourceVersion', async () => {
    const pages: Record<string, KubernetesListObject<KubernetesObject>> = {
      '': { items: [{ metadata: { name: 'a' } }], metadata: { resourceVersion: '10', _continue: 'p2' } },
      p2: { items: [{ metadata: { name: 'b' } }], metadata: { resourceVersion: '10', _continue: 'p3' } },
      p3: { items: [{ metadata: { name: 'c' } }], metadata: { resourceVersion: '10' } },
    };
    const asked: Array<{ limit: number; _continue?: string }> = [];
    const list = await listAllPages(
      async (o) => {
        asked.push(o);
        return pages[o._continue ?? '']!;
      },
      (o) => ({ ...o, metadata: { ...o.metadata, labels: { seen: 'y' } } }),
      1,
    );
    assert.deepEqual(list.items.map((i) => `${i.metadata?.name}:${i.metadata?.labels?.seen}`), ['a:y', 'b:y', 'c:y']);
    assert.equal(list.metadata?.resourceVersion, '10');
    assert.equal(list.metadata?._continue, undefined);
    assert.deepEqual(asked, [{ limit: 1 }, { limit: 1, _continue: 'p2' }, { limit: 1, _continue: 'p3' }]);
  });
});

describe('listAllPages over custom objects', () => {
  it('follows the raw `metadata.continue` of untyped (CRD) lists: a restarted controller must not cache only the first 500', async () => {
    // CustomObjectsApi answers plain JSON: no ObjectSerializer renames `continue` to `_continue` there.
    const pages: Record<string, unknown> = {
      '': { items: [{ metadata: { name: 'a' } }], metadata: { resourceVersion: '7', continue: 'p2' } },
      p2: { items: [{ metadata: { name: 'b' } }], metadata: { resourceVersion: '7' } },
    };
    const list = await listAllPages(async (o) => pages[o._continue ?? ''] as KubernetesListObject<KubernetesObject>, undefined, 1);
    assert.deepEqual(list.items.map((i) => i.metadata?.name), ['a', 'b']);
    assert.equal((list.metadata as { continue?: string } | undefined)?.continue, undefined, 'the answer is one whole list');
  });
});

describe('jobForCache', () => {
  it("keeps a Job's metadata and status, drops its spec (the pod template no reconciler reads)", () => {
    const job = { metadata: { name: 'build-a', labels: { l: '1' }, uid: 'u' }, spec: { template: { spec: { containers: [{ name: 'kaniko', args: ['--context=https://...'] }] } } }, status: { succeeded: 1 } };
    assert.equal(jobForCache(job), job, 'in place');
    assert.deepEqual(job, { metadata: { name: 'build-a', labels: { l: '1' }, uid: 'u' }, status: { succeeded: 1 } });
  });
});

describe('podForCache', () => {
  it("keeps what a finished build is read for (phase, reason, each step's terminated state), drops the spec and the rest", () => {
    const terminated = { exitCode: 0, message: 'sha256:abc', reason: 'Completed' };
    const pod = {
      metadata: { name: 'build-a-x1', labels: { 'batch.kubernetes.io/job-name': 'build-a' }, creationTimestamp: '2026-01-01T00:00:00Z' },
      spec: { containers: [{ name: 'push', env: [{ name: 'A', value: 'b' }] }] },
      status: {
        phase: 'Succeeded',
        podIP: '10.0.0.1',
        conditions: [{ type: 'Ready', status: 'False' }],
        initContainerStatuses: [{ name: 'fetch', image: 'tools', imageID: 'x', ready: false, restartCount: 0, state: { terminated: { exitCode: 0 } } }],
        containerStatuses: [{ name: 'push', image: 'tools', ready: false, restartCount: 1, state: { terminated }, lastState: { terminated: { exitCode: 1 } } }],
      },
    };
    assert.equal(podForCache(pod as unknown as V1Pod), pod, 'in place');
    assert.deepEqual(pod, {
      metadata: { name: 'build-a-x1', labels: { 'batch.kubernetes.io/job-name': 'build-a' }, creationTimestamp: '2026-01-01T00:00:00Z' },
      status: {
        phase: 'Succeeded',
        initContainerStatuses: [{ name: 'fetch', state: { terminated: { exitCode: 0 } } }],
        containerStatuses: [{ name: 'push', state: { terminated }, lastState: { terminated: { exitCode: 1 } } }],
      },
    });
  });

  it('keeps an evicted pod\'s reason and a running container as its name alone', () => {
    const pod = { metadata: { name: 'p' }, status: { phase: 'Failed', reason: 'Evicted', containerStatuses: [{ name: 'kaniko', state: { running: {} } }] } };
    assert.deepEqual(podForCache(pod as unknown as V1Pod).status, { phase: 'Failed', reason: 'Evicted', containerStatuses: [{ name: 'kaniko' }] });
  });
});
