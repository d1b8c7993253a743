// /fn at a preview URL on Kubernetes, served from the watches (docs/previews.md): the test writes what the
// leader's controller would (a FunctionRepository's status.previews, Functions and Deployments in the
// base and the preview namespace) on the real API server, deploys nothing, and asks a started
// KubernetesPlatform where calls go, through a counting proxy: a function the PR changes answers from
// the preview namespace, one it leaves alone from production (which counts and wakes for it), one it
// deletes or breaks 404, a preview not planned yet 503; no call costs an API request. /v1 lists the
// preview with its expiry, URLs and the phase of what it built.
import assert from 'node:assert/strict';
import type { AddressInfo } from 'node:net';
import { after, before, describe, it } from 'node:test';
import { AppsV1Api, CoreV1Api, CustomObjectsApi } from '@kubernetes/client-node';
import type { FastifyInstance } from 'fastify';
import { SignJWT } from 'jose';
import { Registry } from 'prom-client';
import { buildApp } from '../../src/app/build-app.ts';
import { S3ArtifactStore } from '../../src/build/s3-artifact-store.ts';
import { KubernetesPlatform } from '../../src/platform/kubernetes/kubernetes-platform.ts';
import { createMemoryBuildLog, createMemoryInvocationLog } from '../../src/store/memory-log.ts';
import { startCountingProxy, type CountingProxy } from '../helpers/counting-proxy.ts';
import { testControllerSettings } from '../helpers/controller-settings.ts';
import { markDeploymentAvailable } from '../helpers/kube-harness.ts';
import { eventually, freshNamespace, testKubeConfig, type TestNamespace } from '../helpers/kube.ts';

const GROUP = 'sless.kube5s.ru';
const VERSION = 'v1alpha1';
const SECRET = 'preview-serving-secret-0123456789abcdef';
const HEAD = 'b'.repeat(40);

describe('/fn at a preview URL on Kubernetes, from the watches', () => {
  const kc = testKubeConfig();
  const apps = kc.makeApiClient(AppsV1Api);
  const core = kc.makeApiClient(CoreV1Api);
  const custom = kc.makeApiClient(CustomObjectsApi);
  let ns: TestNamespace;
  let preview: string;
  let proxy: CountingProxy;
  let platform: KubernetesPlatform;
  let app: FastifyInstance;

  const requestsSince = (mark: number) => proxy.since(mark).filter((r) => !r.watch).map((r) => `${r.method} ${r.url}`);

  /** A Function with its Deployment: `replicas` 1 is made available, 0 is scaled to zero (scale.min 0). */
  const fn = async (namespace: string, name: string, replicas: 0 | 1, labels: Record<string, string> = {}): Promise<void> => {
    await custom.createNamespacedCustomObject({
      group: GROUP,
      version: VERSION,
      namespace,
      plural: 'functions',
      body: { apiVersion: `${GROUP}/${VERSION}`, kind: 'Function', metadata: { name, labels }, spec: { runtime: 'nodejs20', timeoutSec: 9, ...(replicas ? {} : { scale: { min: 0 } }) } },
    });
    await custom.patchNamespacedCustomObjectStatus({ group: GROUP, version: VERSION, namespace, plural: 'functions', name, body: [{ op: 'add', path: '/status', value: { phase: 'Ready' } }] });
    const owned = { 'app.kubernetes.io/managed-by': 'sless', 'sless.kube5s.ru/function': name };
    await apps.createNamespacedDeployment({
      namespace,
      body: {
        metadata: { name, labels: owned },
        spec: { replicas, selector: { matchLabels: owned }, template: { metadata: { labels: owned }, spec: { containers: [{ name: 'function', image: 'registry.test:5000/fn:1' }] } } },
      },
    });
    if (replicas) await markDeploymentAvailable(kc, namespace, name);
  };

  const writePreviews = async (previews: unknown[]): Promise<void> => {
    await custom.patchNamespacedCustomObjectStatus({
      group: GROUP,
      version: VERSION,
      namespace: ns.name,
      plural: 'functionrepositories',
      name: 'fns',
      body: [{ op: 'add', path: '/status', value: { previews } }],
    });
  };

  const entry = (over: Record<string, unknown> = {}) => ({
    number: 3,
    namespace: preview,
    branch: 'feature-x',
    head: HEAD,
    updatedAt: '2026-12-06T12:00:00Z',
    planned: true,
    functions: [
      { name: 'changed', state: 'built', path: 'changed' },
      { name: 'same', state: 'production', path: 'same' },
      { name: 'sleepy', state: 'production', path: 'sleepy' },
      { name: 'gone', state: 'removed', path: 'gone' },
      { name: 'broken', state: 'failed', path: 'broken', error: 'broken/function.yaml:1: runtime: required' },
    ],
    ...over,
  });

  const url = (namespace: string, name: string) => `http://${name}.${namespace}.svc.cluster.test:80`;

  before(async () => {
    ns = await freshNamespace(kc, 'pv');
    preview = `${ns.name}-pr-3`;
    await core.createNamespace({ body: { metadata: { name: preview, labels: { 'sless-test': 'true', 'sless.kube5s.ru/preview-of': ns.name } } } });
    proxy = await startCountingProxy(kc);
    platform = new KubernetesPlatform({
      kubeConfig: proxy.kubeConfig(),
      store: new S3ArtifactStore({ bucket: 'unused', endpoint: 'http://127.0.0.1:1', region: 'us-east-1', credentials: { accessKeyId: 'x', secretAccessKey: 'x' } }),
      settings: testControllerSettings({ clusterDomain: 'cluster.test', runtimeImagePrefix: 'registry.test/runtimes', s3: { bucket: 'unused', region: 'us-east-1' }, publicBaseUrl: 'https://fn.example.test' }),
      coldStartTimeoutMs: 1_000,
    });
    await platform.start();
    await fn(ns.name, 'changed', 1);
    await fn(ns.name, 'same', 1);
    await fn(ns.name, 'sleepy', 0);
    await fn(ns.name, 'gone', 1);
    await fn(preview, 'changed', 1);
    await custom.createNamespacedCustomObject({
      group: GROUP,
      version: VERSION,
      namespace: ns.name,
      plural: 'functionrepositories',
      body: { apiVersion: `${GROUP}/${VERSION}`, kind: 'FunctionRepository', metadata: { name: 'fns' }, spec: { url: 'https://git.example.test/fns.git', previews: { enabled: true, ttl: '30m' } } },
    });
    await writePreviews([entry()]);
    app = await buildApp({ platform, invocationLog: createMemoryInvocationLog(), buildLog: createMemoryBuildLog(), auth: { key: { kind: 'hs256', secret: SECRET } }, registry: new Registry(), logger: false });
    await app.listen({ port: 0, host: '127.0.0.1' });
  });

  after(async () => {
    await app?.close();
    await platform?.close();
    await proxy?.close();
    await core.deleteNamespace({ name: preview }).catch(() => undefined);
    await ns?.cleanup();
  });

  it('changed: the preview namespace; left alone: production; deleted or broken: 404 — and no call costs an API request', async () => {
    const expected = {
      changed: { kind: 'ready', baseUrl: url(preview, 'changed'), timeoutSec: 9 },
      same: { kind: 'ready', baseUrl: url(ns.name, 'same'), timeoutSec: 9 },
      gone: { kind: 'not-found' },
      broken: { kind: 'not-found' },
      unknown: { kind: 'not-found' },
    };
    await eventually(async () => assert.deepEqual(await platform.resolveEndpoint(preview, 'same'), expected.same));
    const mark = proxy.requests.length;
    const until = Date.now() + 2_000;
    let rounds = 0;
    while (Date.now() < until) {
      for (const [name, endpoint] of Object.entries(expected)) assert.deepEqual(await platform.resolveEndpoint(preview, name), endpoint, name);
      rounds++;
      await new Promise((r) => setTimeout(r, 10));
    }
    assert.ok(rounds > 30, `only ${rounds} rounds`);
    assert.deepEqual(requestsSince(mark), [], `${rounds * 5} lookups`);
    // Production itself is unchanged by its preview.
    assert.deepEqual(await platform.resolveEndpoint(ns.name, 'changed'), { kind: 'ready', baseUrl: url(ns.name, 'changed'), timeoutSec: 9 });
  });

  it('a call production answers counts for production, and wakes the production function', async () => {
    const ended = platform.scaling.requestBegan(preview, 'same');
    const counts = platform.scalingCounts.report().functions;
    ended();
    assert.equal(counts[`${ns.name}/same`]?.inFlight, 1);
    assert.equal(counts[`${preview}/same`], undefined);
    assert.equal((await platform.resolveEndpoint(preview, 'sleepy')).kind, 'idle');
    // No kubelet here: the wake asks production's Deployment for a replica, then gives up at the 1 s bound.
    await assert.rejects(platform.scaling.wake(preview, 'sleepy'), /no replica became ready/);
    assert.equal((await apps.readNamespacedDeployment({ namespace: ns.name, name: 'sleepy' })).spec?.replicas, 1);
  });

  it('follows status.previews as the watch delivers it: not planned yet 503, a later push that reverts a function sends it to production, removal ends the fall-through and silences what the preview built', async () => {
    await writePreviews([entry({ planned: false, functions: [] })]);
    await eventually(async () =>
      assert.deepEqual(await platform.resolveEndpoint(preview, 'same'), { kind: 'not-ready', reason: 'the preview of pull request #3 is still being read' }),
    );
    // The Function built for an earlier push is still there: it serves until the plan says otherwise.
    assert.equal((await platform.resolveEndpoint(preview, 'changed')).kind, 'ready');
    await writePreviews([entry({ functions: [{ name: 'changed', state: 'production', path: 'changed' }] })]);
    await eventually(async () => assert.deepEqual(await platform.resolveEndpoint(preview, 'changed'), { kind: 'ready', baseUrl: url(ns.name, 'changed'), timeoutSec: 9 }));
    await writePreviews([]);
    // With no open preview the namespace is served as any: its own Function answers, nothing falls through.
    await eventually(async () => assert.deepEqual(await platform.resolveEndpoint(preview, 'changed'), { kind: 'ready', baseUrl: url(preview, 'changed'), timeoutSec: 9 }));
    assert.deepEqual(await platform.resolveEndpoint(preview, 'same'), { kind: 'not-found' });
    // A Function the controller built for the preview (labelled so) answers nothing once its preview is closed.
    await fn(preview, 'leftover', 1, { 'sless.kube5s.ru/preview-of': ns.name });
    await writePreviews([entry({ functions: [{ name: 'leftover', state: 'built', path: 'leftover' }] })]);
    await eventually(async () => assert.equal((await platform.resolveEndpoint(preview, 'leftover')).kind, 'ready'));
    await writePreviews([]);
    await eventually(async () => assert.deepEqual(await platform.resolveEndpoint(preview, 'leftover'), { kind: 'not-found' }));
    assert.deepEqual(await platform.resolveEndpoint(preview, 'changed'), { kind: 'ready', baseUrl: url(preview, 'changed'), timeoutSec: 9 });
    await writePreviews([entry()]);
  });

  it('GET /v1/namespaces/{ns}/previews lists the preview from the watches: expiry, URLs, the phase of what it built', async () => {
    const token = await new SignJWT({ sless_admin: true }).setProtectedHeader({ alg: 'HS256' }).setSubject('ops').setExpirationTime('1h').sign(new TextEncoder().encode(SECRET));
    const base = `http://127.0.0.1:${(app.server.address() as AddressInfo).port}`;
    const list = async () => {
      const res = await fetch(`${base}/v1/namespaces/${ns.name}/previews`, { headers: { authorization: `Bearer ${token}` } });
      assert.equal(res.status, 200);
      return (await res.json()) as unknown[];
    };
    const want = [
      {
        number: 3,
        namespace: preview,
        repository: 'fns',
        branch: 'feature-x',
        head: HEAD,
        url: `https://fn.example.test/fn/${preview}/`,
        expires_at: '2026-12-06T12:30:00.000Z',
        functions: [
          { name: 'changed', state: 'built', phase: 'Ready', url: `https://fn.example.test/fn/${preview}/changed` },
          { name: 'same', state: 'production', url: `https://fn.example.test/fn/${ns.name}/same` },
          { name: 'sleepy', state: 'production', url: `https://fn.example.test/fn/${ns.name}/sleepy` },
          { name: 'gone', state: 'removed' },
          { name: 'broken', state: 'failed' },
        ],
      },
    ];
    await eventually(async () => assert.deepEqual(await list(), want));
    const mark = proxy.requests.length;
    await list();
    assert.deepEqual(requestsSince(mark), [], 'the list is read from the watches');
    const other = await fetch(`${base}/v1/namespaces/${preview}/previews`, { headers: { authorization: `Bearer ${token}` } });
    assert.deepEqual(await other.json(), []);
  });
});
