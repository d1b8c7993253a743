// /fn reaching pods directly (issue 29, docs/pod-routing.md) against the real API server: EndpointSlices
// made by hand (as the EndpointSlice controller makes them for a function's Service) point at local
// HTTP servers playing pods (on this machine's own address), one slice per pod since each listens on
// its own port. The function's
// Service name does not resolve here, so every answer shows a pod was called directly.
import assert from 'node:assert/strict';
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import os from 'node:os';
import { after, before, describe, it } from 'node:test';
import { AppsV1Api, CustomObjectsApi, DiscoveryV1Api } from '@kubernetes/client-node';
import { S3ArtifactStore } from '../../src/build/s3-artifact-store.ts';
import { KubernetesPlatform } from '../../src/platform/kubernetes/kubernetes-platform.ts';
import { eventually, freshNamespace, testKubeConfig, type TestNamespace } from '../helpers/kube.ts';
import { markDeploymentAvailable } from '../helpers/kube-harness.ts';
import { listen, testApp } from '../helpers/http-test-kit.ts';
import { testControllerSettings } from '../helpers/controller-settings.ts';

const GROUP = 'sless.kube5s.ru';
const VERSION = 'v1alpha1';

/**
 * Where the pods listen: the API server refuses loopback addresses in an EndpointSlice ("may not be in
 * the loopback range"), so one of this machine's own non-loopback IPv4 addresses.
 */
function podHost(): string {
  const own = Object.values(os.networkInterfaces())
    .flat()
    .find((i) => i && i.family === 'IPv4' && !i.internal);
  if (!own) throw new Error('this test needs a non-loopback IPv4 address on the machine (EndpointSlices refuse 127.0.0.0/8)');
  return own.address;
}
const POD_HOST = podHost();

interface FakePod {
  readonly name: string;
  readonly port: number;
  readonly calls: { health: number; other: number };
  close(): Promise<void>;
}

async function fakePod(name: string, opts: { health?: boolean } = {}): Promise<FakePod> {
  const calls = { health: 0, other: 0 };
  const server: Server = createServer((req, res) => {
    if (req.url === '/health') {
      calls.health++;
      res.writeHead(opts.health === false ? 503 : 200).end('ok');
      return;
    }
    calls.other++;
    res.writeHead(200, { 'content-type': 'application/json' }).end(JSON.stringify({ pod: name }));
  });
  await new Promise<void>((resolve) => server.listen(0, POD_HOST, resolve));
  return {
    name,
    port: (server.address() as AddressInfo).port,
    calls,
    close: () =>
      new Promise<void>((resolve) => {
        server.closeAllConnections();
        server.close(() => resolve());
      }),
  };
}

describe('/fn routes to pods from EndpointSlices (real API server)', () => {
  const kc = testKubeConfig();
  const apps = kc.makeApiClient(AppsV1Api);
  const custom = kc.makeApiClient(CustomObjectsApi);
  const discovery = kc.makeApiClient(DiscoveryV1Api);
  let ns: TestNamespace;
  let platform: KubernetesPlatform;
  let url: string;
  const pods: FakePod[] = [];
  const closeApp: Array<() => Promise<void>> = [];

  const slice = (fn: string, pod: { name: string; port: number }, conditions: { ready: boolean; terminating?: boolean }) => ({
    apiVersion: 'discovery.k8s.io/v1',
    kind: 'EndpointSlice',
    metadata: {
      name: `${fn}-${pod.name}`,
      labels: { 'kubernetes.io/service-name': fn, 'app.kubernetes.io/managed-by': 'sless', 'endpointslice.kubernetes.io/managed-by': 'sless-test' },
    },
    addressType: 'IPv4',
    ports: [{ name: 'http', port: pod.port, protocol: 'TCP' }],
    endpoints: [{ addresses: [POD_HOST], conditions: { ready: conditions.ready, serving: conditions.ready, terminating: conditions.terminating ?? false } }],
  });
  const putSlice = async (fn: string, pod: { name: string; port: number }, conditions: { ready: boolean; terminating?: boolean }) => {
    const body = slice(fn, pod, conditions);
    try {
      await discovery.replaceNamespacedEndpointSlice({ name: body.metadata.name, namespace: ns.name, body });
    } catch {
      await discovery.createNamespacedEndpointSlice({ namespace: ns.name, body });
    }
  };
  const createFunction = async (name: string, available: boolean) => {
    await custom.createNamespacedCustomObject({
      group: GROUP,
      version: VERSION,
      namespace: ns.name,
      plural: 'functions',
      body: { apiVersion: `${GROUP}/${VERSION}`, kind: 'Function', metadata: { name }, spec: { runtime: 'nodejs20', timeoutSec: 7 }, status: { phase: 'Ready' } },
    });
    await apps.createNamespacedDeployment({
      namespace: ns.name,
      body: {
        metadata: { name, labels: { 'app.kubernetes.io/managed-by': 'sless', 'sless.kube5s.ru/function': name } },
        spec: {
          replicas: 1,
          selector: { matchLabels: { app: name } },
          template: { metadata: { labels: { app: name } }, spec: { containers: [{ name: 'function', image: `registry.test/${name}@sha256:${'a'.repeat(64)}` }] } },
        },
      },
    });
    if (available) await markDeploymentAvailable(kc, ns.name, name);
  };
  const call = async (fn: string) => {
    const res = await fetch(`${url}/fn/${ns.name}/${fn}/`);
    const text = await res.text();
    assert.equal(res.status, 200, `${fn}: ${res.status} ${text}`);
    return (JSON.parse(text) as { pod: string }).pod;
  };

  before(async () => {
    ns = await freshNamespace(kc, 'pod-routing');
    platform = new KubernetesPlatform({
      kubeConfig: kc,
      store: new S3ArtifactStore({ bucket: 'unused', endpoint: 'http://127.0.0.1:1', region: 'us-east-1', credentials: { accessKeyId: 'x', secretAccessKey: 'x' } }),
      // A Service URL that cannot resolve: an answer can only come from a pod called directly.
      settings: testControllerSettings({ clusterDomain: 'cluster.invalid', runtimeImagePrefix: 'registry.test/runtimes', s3: { bucket: 'unused', region: 'us-east-1' } }),
      routeToPods: true,
    });
    await platform.start();
    const { app } = await testApp({ platform });
    url = await listen(app);
    closeApp.push(() => app.close());
    await createFunction('hot', true);
  });

  after(async () => {
    for (const close of closeApp) await close();
    await platform?.close();
    await Promise.all(pods.map((p) => p.close()));
    await ns?.cleanup();
  });

  it('a ready pod of the slices serves /fn directly', async () => {
    const old = await fakePod('old');
    pods.push(old);
    await putSlice('hot', old, { ready: true });
    await eventually(async () => assert.equal(await call('hot'), 'old'));
    for (let i = 0; i < 10; i++) assert.equal(await call('hot'), 'old');
    assert.equal(old.calls.health, 0, 'a pod the kubelet calls ready is not probed');
  });

  it('a new pod the kubelet has not called ready yet serves as soon as it answers /fn\'s probe; one that does not answer never gets a call', async () => {
    const fresh = await fakePod('fresh');
    const silent = await fakePod('silent', { health: false });
    pods.push(fresh, silent);
    const t0 = performance.now();
    await putSlice('hot', fresh, { ready: false });
    await putSlice('hot', silent, { ready: false });
    await eventually(async () => assert.ok(platform.podRouting?.pods(ns.name, 'hot')?.rotation().some((p) => p.endsWith(`:${fresh.port}`))), { intervalMs: 5 });
    const ms = performance.now() - t0;
    assert.ok(ms < 1_000, `the fresh pod entered rotation only after ${ms.toFixed(0)} ms`);
    const answers = new Set<string>();
    for (let i = 0; i < 20; i++) answers.add(await call('hot'));
    assert.deepEqual([...answers].sort(), ['fresh', 'old'], 'both the ready and the probed pod take calls');
    assert.ok(fresh.calls.health >= 1);
    assert.ok(silent.calls.health >= 2, 'the silent pod is probed again and again');
    assert.equal(silent.calls.other, 0);
  });

  it('a terminating pod leaves rotation with the slice update: not one more call reaches it', async () => {
    const old = pods.find((p) => p.name === 'old') as FakePod;
    const fresh = pods.find((p) => p.name === 'fresh') as FakePod;
    await putSlice('hot', fresh, { ready: true });
    const t0 = performance.now();
    await putSlice('hot', old, { ready: false, terminating: true });
    await eventually(async () => assert.ok(!platform.podRouting?.pods(ns.name, 'hot')?.rotation().some((p) => p.endsWith(`:${old.port}`))), { intervalMs: 5 });
    const ms = performance.now() - t0;
    assert.ok(ms < 1_000, `the terminating pod left rotation only after ${ms.toFixed(0)} ms`);
    const before = old.calls.other;
    // Keep-alive connections to the old pod stay open (it still answers): they must not carry a call.
    for (let i = 0; i < 20; i++) assert.equal(await call('hot'), 'fresh');
    assert.equal(old.calls.other, before);
  });

  it('a function whose Deployment counts no available replica is served once a pod answers the probe (a start, a wake)', async () => {
    await createFunction('cold', false);
    await eventually(async () => assert.equal((await platform.resolveEndpoint(ns.name, 'cold')).kind, 'not-ready'));
    const first = await fakePod('first');
    pods.push(first);
    const t0 = performance.now();
    await putSlice('cold', first, { ready: false });
    await eventually(async () => assert.equal((await platform.resolveEndpoint(ns.name, 'cold')).kind, 'ready'), { intervalMs: 5 });
    const ms = performance.now() - t0;
    assert.ok(ms < 1_000, `ready only after ${ms.toFixed(0)} ms`);
    assert.equal(await call('cold'), 'first');
    await platform.podRouting?.whenServing(ns.name, 'cold', AbortSignal.timeout(1_000));
  });

  it('slices gone: /fn is back to the Service (no pod known)', async () => {
    await discovery.deleteCollectionNamespacedEndpointSlice({ namespace: ns.name });
    await eventually(async () => assert.equal(platform.podRouting?.pods(ns.name, 'hot'), undefined));
    const endpoint = await platform.resolveEndpoint(ns.name, 'hot');
    assert.deepEqual(endpoint, { kind: 'ready', baseUrl: `http://hot.${ns.name}.svc.cluster.invalid:80`, timeoutSec: 7 });
  });
});
