// Waking a function at zero on Kubernetes (issue 29), against the real API server (no kubelet: no pod
// ever becomes available, so wakes end at their bound; test/e2e-node/scaling.test.ts sees them served).
// Two controller replicas (two KubernetesPlatforms, each with its serving watches) wake the same function
// with 50 held calls between them, their watches a version behind: one scale write 0 → 1 lands (the
// others are refused, 409, and each replica tries once per version it saw at 0), new calls are held meanwhile, and past
// the cold-start bound every wake fails with the reason. A disabled function at 0 is never written.
import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { KubernetesPlatform } from '../../src/platform/kubernetes/kubernetes-platform.ts';
import { DISABLED_ANNOTATION } from '../../src/platform/kubernetes/scaling/workload-replicas.ts';
import { PatchStrategy, setHeaderOptions } from '@kubernetes/client-node';
import { eventually } from '../helpers/kube.ts';
import { GROUP, platformSettings, setupPlatformKit, VERSION, type PlatformKit } from './kube-platform-kit.ts';

describe('wake from zero on Kubernetes', () => {
  let kit: PlatformKit;
  let other: KubernetesPlatform;

  const makeFunction = async (name: string, disabled = false): Promise<void> => {
    await kit.custom.createNamespacedCustomObject({
      group: GROUP,
      version: VERSION,
      namespace: kit.ns,
      plural: 'functions',
      body: { apiVersion: `${GROUP}/${VERSION}`, kind: 'Function', metadata: { name }, spec: { runtime: 'nodejs20', timeoutSec: 30, scale: { min: 0 } } },
    });
    await kit.custom.patchNamespacedCustomObjectStatus({ group: GROUP, version: VERSION, namespace: kit.ns, plural: 'functions', name, body: [{ op: 'add', path: '/status', value: { phase: 'Ready' } }] });
    const labels = { 'app.kubernetes.io/managed-by': 'sless', 'sless.kube5s.ru/function': name };
    await kit.apps.createNamespacedDeployment({
      namespace: kit.ns,
      body: {
        metadata: { name, labels, ...(disabled ? { annotations: { [DISABLED_ANNOTATION]: 'true' } } : {}) },
        spec: { replicas: 0, selector: { matchLabels: labels }, template: { metadata: { labels }, spec: { containers: [{ name: 'function', image: 'registry.test:5000/fn:1' }] } } },
      },
    });
  };

  before(async () => {
    kit = await setupPlatformKit('wake', { coldStartTimeoutMs: 4_000 });
    other = new KubernetesPlatform({ kubeConfig: kit.kc, store: kit.store, settings: platformSettings(kit.store), coldStartTimeoutMs: 4_000 });
    await Promise.all([kit.platform.start(), other.start()]);
  });
  after(async () => {
    await Promise.all([kit.platform.close(), other.close()]);
    await kit.custom.deleteCollectionNamespacedCustomObject({ group: GROUP, version: VERSION, namespace: kit.ns, plural: 'functions' }).catch(() => undefined);
    await kit.dispose();
  });

  it('50 held calls on two replicas: one scale write 0 → 1 wins; no replica in time: every wake fails with the reason', async () => {
    await makeFunction('sleepy');
    await eventually(async () => assert.equal((await kit.platform.resolveEndpoint(kit.ns, 'sleepy')).kind, 'idle'));
    await eventually(async () => assert.equal((await other.resolveEndpoint(kit.ns, 'sleepy')).kind, 'idle'));
    // A change the watches have not seen yet when the calls arrive (as the Deployment controller's status
    // writes under load): a replica's first write meets a newer version, 409, and it looks again.
    const touched = await kit.apps.patchNamespacedDeployment(
      { namespace: kit.ns, name: 'sleepy', body: [{ op: 'add', path: '/metadata/annotations', value: { touched: 'yes' } }] },
      setHeaderOptions('Content-Type', PatchStrategy.JsonPatch),
    );
    const before = touched.metadata?.generation ?? 0;
    const settled: string[] = [];
    const wakes = Array.from({ length: 50 }, (_, i) =>
      (i % 2 ? other : kit.platform).scaling.wake(kit.ns, 'sleepy').then(
        () => settled.push('ok'),
        (err: unknown) => settled.push(String(err)),
      ),
    );
    await eventually(async () => assert.equal((await kit.apps.readNamespacedDeployment({ namespace: kit.ns, name: 'sleepy' })).spec?.replicas, 1));
    await new Promise((r) => setTimeout(r, 500));
    assert.deepEqual(settled, [], 'held while no replica is available');
    assert.equal((await kit.platform.resolveEndpoint(kit.ns, 'sleepy')).kind, 'idle', 'a min-0 function waking still holds new calls');
    await Promise.all(wakes);
    assert.deepEqual([...new Set(settled)], ['Error: no replica became ready within 4 s']);
    const d = await kit.apps.readNamespacedDeployment({ namespace: kit.ns, name: 'sleepy' });
    assert.equal(d.spec?.replicas, 1);
    assert.equal((d.metadata?.generation ?? 0) - before, 1, 'one change of the Deployment');
    const landed = (w: KubernetesPlatform['scaleWrites']): number => w.writes - w.conflicts;
    assert.equal(landed(kit.platform.scaleWrites) + landed(other.scaleWrites), 1, 'one write landed; the others were refused (409)');
    // A replica tries once per version it saw at 0 (the patch above, the Deployment controller's status
    // writes: a few), never once per call (25 each).
    for (const p of [kit.platform, other]) assert.ok(p.scaleWrites.writes <= 4, `${p.scaleWrites.writes} tries on one replica`);
    assert.ok(d.metadata?.managedFields?.some((f) => f.manager === 'sless-autoscaler'), 'written through the scale subresource by sless-autoscaler');
  });

  it('a disabled function at zero is never woken: 503 (disabled), no write', async () => {
    await makeFunction('off', true);
    await eventually(async () => assert.equal((await kit.platform.resolveEndpoint(kit.ns, 'off')).kind, 'disabled'));
    const writes = kit.platform.scaleWrites.writes;
    await assert.rejects(kit.platform.scaling.wake(kit.ns, 'off'), /disabled/);
    assert.equal(kit.platform.scaleWrites.writes, writes);
    assert.equal((await kit.apps.readNamespacedDeployment({ namespace: kit.ns, name: 'off' })).spec?.replicas, 0);
  });
});
