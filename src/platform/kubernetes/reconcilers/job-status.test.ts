import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import type { V1ContainerStatus, V1Job, V1Pod } from '@kubernetes/client-node';
import type { KubeClient } from '../api-client/kube-client.ts';
import { failedContainer, latestJobPod, podOutput, settledJobPod, succeededPodMessage, terminationMessage } from './job-status.ts';

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

describe("a finished Job's pod from the build pods' cache", () => {
  const JOB = 'batch.kubernetes.io/job-name';
  const jobOf = (succeeded: number, failed = 0): V1Job => ({ metadata: { name: 'b-1', namespace: 'builds' }, status: { succeeded, failed } });
  const podOf = (name: string, phase: string, at: string, job = 'b-1'): V1Pod => ({
    metadata: { name, namespace: 'builds', labels: { [JOB]: job }, creationTimestamp: at as unknown as Date },
    status: { phase },
  });

  it('answers the newest of its pods when the cache shows every pod the Job counted, each finished', () => {
    const pods = [podOf('b-1-a', 'Failed', '2026-01-01T00:00:00Z'), podOf('b-1-b', 'Succeeded', '2026-01-01T00:01:00Z'), podOf('c-1-a', 'Succeeded', '2026-01-01T00:02:00Z', 'c-1')];
    assert.equal(settledJobPod(jobOf(1, 1), pods)?.metadata?.name, 'b-1-b');
  });

  it('answers none while the cache lags: a pod not finished yet, or fewer pods than the Job counted', () => {
    assert.equal(settledJobPod(jobOf(1), [podOf('b-1-a', 'Running', '2026-01-01T00:00:00Z')]), undefined);
    assert.equal(settledJobPod(jobOf(1, 1), [podOf('b-1-b', 'Succeeded', '2026-01-01T00:01:00Z')]), undefined, 'the retry pod is not seen yet');
    assert.equal(settledJobPod(jobOf(1), []), undefined);
  });

  it('lists the pods only when the cache cannot answer', async () => {
    const listed: string[] = [];
    const kube = { listPods: async (ns: string, sel: string) => (listed.push(`${ns} ${sel}`), [podOf('b-1-l', 'Succeeded', '2026-01-01T00:00:00Z')]) } as unknown as KubeClient;
    const cache = (pods: V1Pod[]) => ({ get: () => undefined, list: () => pods });
    assert.equal((await latestJobPod(kube, jobOf(1), cache([podOf('b-1-c', 'Succeeded', '2026-01-01T00:00:00Z')])))?.metadata?.name, 'b-1-c');
    assert.deepEqual(listed, []);
    assert.equal((await latestJobPod(kube, jobOf(1), cache([podOf('b-1-c', 'Pending', '2026-01-01T00:00:00Z')])))?.metadata?.name, 'b-1-l');
    assert.equal((await latestJobPod(kube, jobOf(1)))?.metadata?.name, 'b-1-l');
    assert.deepEqual(listed, [`builds ${JOB}=b-1`, `builds ${JOB}=b-1`]);
  });

  it("reads a running Job's digest once its pod Succeeded (the Job's Complete comes later), from the cache alone", () => {
    const cache = (pods: V1Pod[]) => ({ get: () => undefined, list: () => pods });
    const succeeded = { ...podOf('b-1-a', 'Succeeded', '2026-01-01T00:00:00Z'), status: { phase: 'Succeeded', containerStatuses: [done('push', 0, 'sha256:abc')] } };
    const running = { ...podOf('b-1-a', 'Running', '2026-01-01T00:00:00Z'), status: { phase: 'Running', containerStatuses: [done('push', 0, 'sha256:abc')] } };
    assert.equal(succeededPodMessage(jobOf(0), cache([succeeded]), 'push'), 'sha256:abc');
    assert.equal(succeededPodMessage(jobOf(0), cache([running]), 'push'), undefined, 'not before the pod says Succeeded');
    assert.equal(succeededPodMessage(jobOf(0), cache([podOf('c-1-a', 'Succeeded', '2026-01-01T00:00:00Z', 'c-1')]), 'push'), undefined, "another Job's pod");
    assert.equal(succeededPodMessage(jobOf(0), undefined, 'push'), undefined);
  });
});
