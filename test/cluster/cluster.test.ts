// startCluster gives a working apiserver and stop() leaves no process behind.
import assert from 'node:assert/strict';
import { mkdtemp, rm } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { test } from 'node:test';
import { CoreV1Api, KubeConfig, VersionApi } from '@kubernetes/client-node';
import { startCluster } from './cluster.ts';

function alive(pid: number): boolean {
  try {
    process.kill(pid, 0);
    return true;
  } catch {
    return false;
  }
}

test('a cluster of its own answers with its token and stops without leaving processes', async () => {
  const dir = await mkdtemp(path.join(os.tmpdir(), 'sless-cluster-test-'));
  const cluster = await startCluster({ dir });
  try {
    assert.match(cluster.server, /^https:\/\/127\.0\.0\.1:\d+$/);
    assert.deepEqual(cluster.processes.map((p) => p.name), ['etcd', 'kube-apiserver']);
    const kc = new KubeConfig();
    kc.loadFromFile(cluster.kubeconfigPath);
    const version = await kc.makeApiClient(VersionApi).getCode();
    assert.match(version.gitVersion, /^v1\.\d+\.\d+$/, 'build.sh stamps the release into /version');
    const namespaces = await kc.makeApiClient(CoreV1Api).listNamespace();
    assert.ok(namespaces.items.some((n) => n.metadata?.name === 'default'));
  } finally {
    await cluster.stop();
    await rm(dir, { recursive: true, force: true });
  }
  for (const p of cluster.processes) assert.equal(alive(p.pid), false, `${p.name} (${p.pid}) still runs`);
});
