// Public traffic does not turn into API server load (issue 11 item 6): a started KubernetesPlatform
// answers /fn lookups and /hooks targets from watches, so in steady state a call costs no API request,
// an unknown name neither, and a Function switched off answers "disabled" (503) as soon as its
// Deployment scales to 0. Every request the platform makes goes through a counting proxy in front of the
// real API server (service `kube`).
import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { AppsV1Api, CoreV1Api, CustomObjectsApi } from '@kubernetes/client-node';
import { S3ArtifactStore } from '../../src/build/s3-artifact-store.ts';
import { KubernetesPlatform } from '../../src/platform/kubernetes/kubernetes-platform.ts';
import { startCountingProxy, type CountingProxy } from '../helpers/counting-proxy.ts';
import { eventually, freshNamespace, testKubeConfig, type TestNamespace } from '../helpers/kube.ts';
import { markDeploymentAvailable } from '../helpers/kube-harness.ts';
import { testControllerSettings } from '../helpers/controller-settings.ts';

const GROUP = 'sless.kube5s.ru';
const VERSION = 'v1alpha1';
const LABELS = { 'app.kubernetes.io/managed-by': 'sless', 'sless.kube5s.ru/function': 'hot' };

const deployment = (namespace: string, replicas: number, disabled = false) => ({
  apiVersion: 'apps/v1',
  kind: 'Deployment',
  // The reconciler marks a switched-off Deployment (an unmarked one at 0 is scaled to zero: idle).
  metadata: { name: 'hot', namespace, labels: LABELS, ...(disabled ? { annotations: { 'sless.kube5s.ru/http-disabled': 'true' } } : {}) },
  spec: {
    replicas,
    selector: { matchLabels: { app: 'hot' } },
    template: { metadata: { labels: { app: 'hot' } }, spec: { containers: [{ name: 'function', image: `registry.test/hot@sha256:${'a'.repeat(64)}` }] } },
  },
});

describe('KubernetesPlatform lookups come from watches', () => {
  const kc = testKubeConfig();
  const apps = kc.makeApiClient(AppsV1Api);
  const core = kc.makeApiClient(CoreV1Api);
  const custom = kc.makeApiClient(CustomObjectsApi);
  let ns: TestNamespace;
  let proxy: CountingProxy;
  let platform: KubernetesPlatform;

  /** API requests the platform made since `mark`, long-lived watches left out (they are one request each, not one per event). */
  const requestsSince = (mark: number) => proxy.since(mark).filter((r) => !r.watch).map((r) => `${r.method} ${r.url}`);

  before(async () => {
    ns = await freshNamespace(kc, 'serving-cache');
    proxy = await startCountingProxy(kc);
    platform = new KubernetesPlatform({
      kubeConfig: proxy.kubeConfig(),
      // Never used here: lookups touch no build context.
      store: new S3ArtifactStore({ bucket: 'unused', endpoint: 'http://127.0.0.1:1', region: 'us-east-1', credentials: { accessKeyId: 'x', secretAccessKey: 'x' } }),
      settings: testControllerSettings({ clusterDomain: 'cluster.test', runtimeImagePrefix: 'registry.test/runtimes', s3: { bucket: 'unused', region: 'us-east-1' } }),
      webhookSecretTtl: { refreshMs: 1_000 },
    });
    await platform.start();
    await custom.createNamespacedCustomObject({
      group: GROUP,
      version: VERSION,
      namespace: ns.name,
      plural: 'functions',
      body: { apiVersion: `${GROUP}/${VERSION}`, kind: 'Function', metadata: { name: 'hot' }, spec: { runtime: 'nodejs20', timeoutSec: 7 } },
    });
    await apps.createNamespacedDeployment({ namespace: ns.name, body: deployment(ns.name, 1) });
    await markDeploymentAvailable(kc, ns.name, 'hot');
  });

  after(async () => {
    await platform?.close();
    await proxy?.close();
    await ns?.cleanup();
  });

  it('a hot function costs no API request per call, and an unknown name none either', async () => {
    const ready = { kind: 'ready', baseUrl: `http://hot.${ns.name}.svc.cluster.test:80`, timeoutSec: 7 };
    await eventually(async () => assert.deepEqual(await platform.resolveEndpoint(ns.name, 'hot'), ready));
    const mark = proxy.requests.length;
    // Three seconds of traffic: longer than any TTL the lookups had before.
    const until = Date.now() + 3_000;
    let calls = 0;
    while (Date.now() < until) {
      assert.deepEqual(await platform.resolveEndpoint(ns.name, 'hot'), ready);
      assert.deepEqual(await platform.resolveEndpoint(ns.name, `nope-${calls}`), { kind: 'not-found' });
      assert.deepEqual(await platform.resolveEndpoint(`${ns.name}-elsewhere`, 'hot'), { kind: 'not-found' });
      calls++;
      await new Promise((r) => setTimeout(r, 10));
    }
    assert.ok(calls > 50, `only ${calls} rounds of calls`);
    assert.deepEqual(requestsSince(mark), [], `${calls * 3} lookups`);
  });

  it('a Function switched off answers disabled as soon as its Deployment scales to 0', async () => {
    await eventually(async () => assert.equal((await platform.resolveEndpoint(ns.name, 'hot')).kind, 'ready'));
    await apps.replaceNamespacedDeployment({ name: 'hot', namespace: ns.name, body: deployment(ns.name, 0, true) });
    const t0 = Date.now();
    await eventually(async () => assert.deepEqual(await platform.resolveEndpoint(ns.name, 'hot'), { kind: 'disabled' }), { intervalMs: 10, timeoutMs: 5_000 });
    const ms = Date.now() - t0;
    // The watch delivers within milliseconds; a cached "ready" answer (2 s TTL before) would still send traffic to pods going away.
    assert.ok(ms < 500, `disabled only after ${ms} ms`);
  });

  it('a webhook target is read from the watch: no request for an unknown repository, its Secret read once', async () => {
    await core.createNamespacedSecret({
      namespace: ns.name,
      body: { metadata: { name: 'git' }, type: `${GROUP}/git-credentials`, stringData: { webhookSecret: 's3cret' } },
    });
    await custom.createNamespacedCustomObject({
      group: GROUP,
      version: VERSION,
      namespace: ns.name,
      plural: 'functionrepositories',
      body: { apiVersion: `${GROUP}/${VERSION}`, kind: 'FunctionRepository', metadata: { name: 'shop' }, spec: { url: 'https://git.example.test/shop.git', branch: 'prod', secretRef: { name: 'git' } } },
    });
    await eventually(async () => assert.deepEqual(await platform.webhookTarget(ns.name, 'shop'), { branch: 'prod', secret: 's3cret' }));
    const mark = proxy.requests.length;
    for (let i = 0; i < 100; i++) {
      assert.deepEqual(await platform.webhookTarget(ns.name, 'shop'), { branch: 'prod', secret: 's3cret' });
      assert.equal(await platform.webhookTarget(ns.name, `nope-${i}`), undefined);
    }
    assert.deepEqual(requestsSince(mark), []);

    // A signature that does not match asks for a fresh read, at most once per Secret every refreshMs (1 s
    // here, 5 s by default): a flood of forged deliveries costs one Secret read, and a rotated secret is seen.
    await core.replaceNamespacedSecret({
      name: 'git',
      namespace: ns.name,
      body: { metadata: { name: 'git' }, type: `${GROUP}/git-credentials`, stringData: { webhookSecret: 'rotated' } },
    });
    await new Promise((r) => setTimeout(r, 1_100));
    const flood = proxy.requests.length;
    const fresh = await Promise.all(Array.from({ length: 50 }, () => platform.webhookTarget(ns.name, 'shop', { refresh: true })));
    for (let i = 0; i < 50; i++) fresh.push(await platform.webhookTarget(ns.name, 'shop', { refresh: true }));
    assert.ok(fresh.every((t) => t?.secret === 'rotated'));
    assert.equal(requestsSince(flood).length, 1, requestsSince(flood).join('\n'));
  });
});
