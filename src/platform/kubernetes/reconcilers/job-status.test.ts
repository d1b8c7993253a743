import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import type { V1ContainerStatus, V1Pod } from '@kubernetes/client-node';
import type { KubeClient } from '../runtime/kube-client.ts';
import { failedContainer, podOutput, terminationMessage } from './job-status.ts';

const done = (name: string, exitCode: number, message?: string): V1ContainerStatus => ({
  name,
  image: '',
  imageID: '',
  ready: false,
  restartCount: 0,
  state: { terminated: { exitCode, ...(message ? { message } : {}) } },
});
const pod = (init: V1ContainerStatus[], main: V1ContainerStatus[]): V1Pod => ({ status: { initContainerStatuses: init, containerStatuses: main } });

describe('a build pod\'s statuses (init containers fetch, kaniko; container push)', () => {
  it('reads the digest from the push container by name, and an init container\'s message too', () => {
    const p = pod([done('fetch', 0), done('kaniko', 0, 'kaniko says')], [done('push', 0, 'sha256:abc')]);
    assert.equal(terminationMessage(p, 'push'), 'sha256:abc');
    assert.equal(terminationMessage(p, 'kaniko'), 'kaniko says');
  });
  it('names the first step that exited non-zero, init containers first', () => {
    assert.equal(failedContainer(pod([done('fetch', 0), done('kaniko', 1)], [])), 'kaniko');
    assert.equal(failedContainer(pod([done('fetch', 2)], [])), 'fetch');
    assert.equal(failedContainer(pod([done('fetch', 0), done('kaniko', 0)], [done('push', 1)])), 'push');
    assert.equal(failedContainer(pod([done('fetch', 0)], [done('push', 0)])), undefined);
    assert.equal(failedContainer(undefined), undefined);
  });
});

describe("a job pod's output (a FunctionJob's message)", () => {
  const kubeWithLog = (log: string) => ({ podLogTail: async () => log }) as unknown as KubeClient;
  const jobPod: V1Pod = { metadata: { name: 'sum-r1-x', namespace: 'team' }, status: { containerStatuses: [done('function', 0, 'from termination')] } };
  it('is the log without its final newline, as sless dev reports a job\'s stdout', async () => {
    assert.equal(await podOutput(kubeWithLog('{"input":[100,200,300],"sum":600}\n'), jobPod, 'function', 1000), '{"input":[100,200,300],"sum":600}');
  });
  it('is the termination message when the log is empty', async () => {
    assert.equal(await podOutput(kubeWithLog('\n'), jobPod, 'function', 1000), 'from termination');
  });
});
