// KubernetesPlatform.readLogs against the real API server (no kubelet here, so no log is ever read:
// the real node suite shows lines): which pods it reads, that pods starting while a client follows are
// picked up at once, 404 for an unknown function, and that platform namespaces are refused.
import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { PlatformError, type LogLine } from '../../src/platform/types.ts';
import { setupPlatformKit, type PlatformKit } from './kube-platform-kit.ts';

let kit: PlatformKit;
before(async () => {
  kit = await setupPlatformKit('klogs');
  await kit.platform.createFunction(kit.ns, { name: 'talker', runtime: 'nodejs20' });
});
after(() => kit.dispose());

/**
 * A pod of the function as its Deployment would make it, its container marked started, on a Node whose
 * kubelet address answers nothing (no kubelet runs here): the API server's log request fails with 5xx.
 */
async function startedPod(name: string, node: string): Promise<void> {
  const labels = { 'sless.kube5s.ru/function': 'talker', 'sless.kube5s.ru/component': 'function' };
  await kit.core.createNamespacedPod({
    namespace: kit.ns,
    body: { metadata: { name, labels }, spec: { nodeName: node, containers: [{ name: 'function', image: 'registry.test/x' }] } },
  });
  await kit.core.replaceNamespacedPodStatus({
    namespace: kit.ns,
    name,
    body: {
      metadata: { name, labels },
      spec: { containers: [{ name: 'function', image: 'registry.test/x' }] },
      status: { phase: 'Running', containerStatuses: [{ name: 'function', ready: true, restartCount: 0, image: 'registry.test/x', imageID: '', state: { running: { startedAt: new Date() } } }] },
    },
  });
}

describe('KubernetesPlatform.readLogs', () => {
  it('answers an empty log for a function without pods', async () => {
    const lines: LogLine[] = [];
    for await (const l of await kit.platform.readLogs(kit.ns, 'talker', { follow: false, signal: new AbortController().signal })) lines.push(l);
    assert.deepEqual(lines, []);
  });

  it('throws not_found for an unknown function, and refuses platform namespaces before reading anything', async () => {
    await assert.rejects(kit.platform.readLogs(kit.ns, 'nope', { follow: false, signal: new AbortController().signal }), (err: unknown) => err instanceof PlatformError && err.code === 'not_found');
    await assert.rejects(kit.platform.readLogs('kube-system', 'talker', { follow: true, signal: new AbortController().signal }), (err: unknown) => err instanceof PlatformError && err.code === 'invalid' && /kube-system/.test(err.message));
  });

  it('while following, reads a pod that starts after the client came (the pod watch), and stops when the client leaves', async (t) => {
    const node = `${kit.ns}-node`;
    await kit.core.createNode({ body: { metadata: { name: node }, status: { addresses: [{ type: 'InternalIP', address: '127.0.0.1' }], daemonEndpoints: { kubeletEndpoint: { Port: 1 } } } } });
    t.after(() => kit.core.deleteNode({ name: node }).catch(() => undefined));
    const abort = new AbortController();
    t.after(() => abort.abort());
    const lines = await kit.platform.readLogs(kit.ns, 'talker', { follow: true, signal: abort.signal });
    const seen: LogLine[] = [];
    const reading = (async () => {
      for await (const l of lines) {
        seen.push(l);
        if (seen.length === 1) break;
      }
    })();
    await new Promise((r) => setTimeout(r, 300));
    const startedAt = Date.now();
    await startedPod('talker-new-pod', node);
    // No kubelet behind this API server: the read of the new pod's log fails, and the reader is told
    // which replica could not be read: proof the watch found it.
    await Promise.race([reading, new Promise((_r, reject) => setTimeout(() => reject(new Error('no line within 10 s')), 10_000))]);
    assert.equal(seen[0]?.replica, 'sless');
    assert.match(seen[0]?.line ?? '', /^replica talker-new-pod: reading the log of pod talker-new-pod failed: HTTP \d+/);
    assert.ok(Date.now() - startedAt < 5000, `found within ${Date.now() - startedAt} ms`);
    abort.abort();
  });
});
