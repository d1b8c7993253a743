// KubeClient's writes against the real API server: server-side apply, create-if-absent, merge patches of
// objects and of sless status subresources, deletes. Each answers the API server's JSON as it came (no
// model classes: a timestamp stays the string the server sent), goes over the KubeConfig's dispatcher (so
// it is counted where every other request is), and keeps its meaning on failure: 409 is "exists", 404 is
// "missing" or "already deleted", anything else an error naming the object and the server's message.
import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { AppsV1Api, CustomObjectsApi, type KubeConfig, type V1Deployment } from '@kubernetes/client-node';
import { API_VERSION } from '../../src/platform/kubernetes/crd-types.ts';
import { KubeClient } from '../../src/platform/kubernetes/api-client/kube-client.ts';
import { reuseConnections } from '../../src/platform/kubernetes/api-client/reuse-connections.ts';
import { freshNamespace, getCustom, testKubeConfig, type TestNamespace } from '../helpers/kube.ts';

const deployment = (ns: string, name: string, image: string): V1Deployment => ({
  apiVersion: 'apps/v1',
  kind: 'Deployment',
  metadata: { name, namespace: ns, labels: { app: name } },
  spec: {
    replicas: 1,
    selector: { matchLabels: { app: name } },
    template: { metadata: { labels: { app: name } }, spec: { containers: [{ name: 'fn', image }] } },
  },
});

describe('KubeClient writes', () => {
  let kc: KubeConfig;
  let ns: TestNamespace;
  let kube: KubeClient;
  const seen: string[] = [];
  before(async () => {
    kc = reuseConnections(testKubeConfig(), (verb, resource) => seen.push(`${verb} ${resource}`));
    ns = await freshNamespace(kc, 'kube-client-json');
    kube = new KubeClient(kc);
  });
  after(async () => ns?.cleanup());

  it("applies an absent object and answers the server's JSON as it is (timestamps stay strings)", async () => {
    seen.length = 0;
    const applied = await kube.apply(deployment(ns.name, 'alpha', 'registry.test/alpha:1'));
    assert.equal(applied.metadata?.name, 'alpha');
    assert.equal(typeof applied.metadata?.creationTimestamp, 'string', 'the answer is the JSON the server sent, not model classes');
    assert.ok(applied.metadata?.managedFields?.some((m) => m.manager === 'sless' && m.operation === 'Apply'), 'applied by field manager sless');
    assert.deepEqual(seen, ['PATCH deployments'], 'one request, through the KubeConfig dispatcher');
  });

  it('applies a change and drops the fields it no longer sends', async () => {
    const withEnv = deployment(ns.name, 'beta', 'registry.test/beta:1');
    withEnv.spec!.template.spec!.containers[0]!.env = [{ name: 'MODE', value: 'x' }];
    await kube.apply(withEnv);
    const changed = await kube.apply(deployment(ns.name, 'beta', 'registry.test/beta:2'));
    assert.equal(changed.metadata?.generation, 2);
    const live = await kc.makeApiClient(AppsV1Api).readNamespacedDeployment({ name: 'beta', namespace: ns.name });
    assert.equal(live.spec?.template.spec?.containers[0]?.image, 'registry.test/beta:2');
    assert.equal(live.spec?.template.spec?.containers[0]?.env, undefined);
  });

  it("refuses an invalid object with an error naming it and carrying the server's message", async () => {
    const bad = deployment(ns.name, 'gamma', 'registry.test/gamma:1');
    bad.spec!.selector = { matchLabels: { app: 'other' } };
    await assert.rejects(kube.apply(bad), (err: Error) => {
      assert.match(err.message, new RegExp(`^apply Deployment ${ns.name}/gamma failed: .*selector.*\\(HTTP 422\\)$`));
      return true;
    });
  });

  it('creates an absent object once, and answers "exists" the second time', async () => {
    const job = {
      apiVersion: 'batch/v1',
      kind: 'Job',
      metadata: { name: 'build-1', namespace: ns.name },
      spec: { template: { spec: { restartPolicy: 'Never', containers: [{ name: 'k', image: 'registry.test/kaniko:1' }] } } },
    };
    assert.equal(await kube.createIfAbsent(job), 'created');
    assert.equal(await kube.createIfAbsent(job), 'exists');
  });

  it('merge-patches an object and its status subresource; a missing object is "missing" or ignored', async () => {
    const fn = {
      apiVersion: API_VERSION,
      kind: 'Function',
      metadata: { name: 'hello', namespace: ns.name },
      spec: { runtime: 'nodejs20', entrypoint: 'handler.handle', codeHash: `sha256:${'a'.repeat(64)}`, s3Bucket: 'b', s3Key: 'k' },
    };
    await kube.apply(fn);
    assert.equal(await kube.mergePatch(fn, { metadata: { annotations: { note: 'kept' } } }), 'patched');
    await kube.patchStatus('Function', ns.name, 'hello', { phase: 'Building', message: 'building' });
    const live = await getCustom<{ metadata: { annotations?: Record<string, string> }; status?: { phase?: string } }>(
      kc.makeApiClient(CustomObjectsApi),
      ns.name,
      'functions',
      'hello',
    );
    assert.equal(live?.metadata.annotations?.note, 'kept');
    assert.equal(live?.status?.phase, 'Building');
    assert.equal(await kube.mergePatch({ ...fn, metadata: { name: 'nobody', namespace: ns.name } }, { metadata: { labels: { a: 'b' } } }), 'missing');
    await kube.patchStatus('Function', ns.name, 'nobody', { phase: 'Ready' });
  });

  it('deletes an object in the background, and a missing one counts as deleted', async () => {
    await kube.delete({ apiVersion: 'apps/v1', kind: 'Deployment', metadata: { name: 'alpha', namespace: ns.name } });
    await kube.delete({ apiVersion: 'apps/v1', kind: 'Deployment', metadata: { name: 'alpha', namespace: ns.name } });
    const left = await kc.makeApiClient(AppsV1Api).listNamespacedDeployment({ namespace: ns.name });
    assert.ok(!left.items.some((d) => d.metadata?.name === 'alpha' && !d.metadata.deletionTimestamp));
  });

  it('still writes kinds it has no path for, through client-node', async () => {
    const cm = { apiVersion: 'v1', kind: 'ServiceAccount', metadata: { name: 'extra', namespace: ns.name } };
    await kube.apply(cm);
    assert.equal(await kube.createIfAbsent(cm), 'exists');
  });
});
