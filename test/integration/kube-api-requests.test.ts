// The controller counts every request it sends to the API server (sless_kube_requests_total on /metrics,
// by verb and resource): a `sless controller` talks to the real API server through the counting proxy of
// test/helpers, and what /metrics says must be what the proxy saw, the informers' LISTs and WATCHes and the
// leader election's Lease requests included (not only the reconcilers' writes that KubeClient counts).
import assert from 'node:assert/strict';
import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { PassThrough } from 'node:stream';
import { after, before, describe, it } from 'node:test';
import { CustomObjectsApi } from '@kubernetes/client-node';
import { startControllerServer, type ControllerServer } from '../../src/cli/controller.ts';
import { loadControllerConfig } from '../../src/config/config.ts';
import { apiRequestKind } from '../../src/platform/kubernetes/api-client/api-request-kind.ts';
import { startCountingProxy, type CountingProxy } from '../helpers/counting-proxy.ts';
import { eventually, freshNamespace, testKubeConfig, type TestNamespace } from '../helpers/kube.ts';
import { controllerTestEnv, dropFunctionFinalizers, GROUP, VERSION } from './kube-platform-kit.ts';

const VERBS = new Set(['GET', 'LIST', 'WATCH', 'POST', 'PUT', 'PATCH', 'DELETE']);

/** `VERB resource` → count, from the sless_kube_requests_total samples of a /metrics text. */
function scraped(text: string): Map<string, number> {
  const out = new Map<string, number>();
  for (const line of text.split('\n')) {
    const m = /^sless_kube_requests_total\{(.*)\} (\S+)$/.exec(line);
    if (!m) continue;
    const labels = Object.fromEntries([...m[1]!.matchAll(/(\w+)="([^"]*)"/g)].map((l) => [l[1], l[2]]));
    assert.deepEqual(Object.keys(labels).sort(), ['resource', 'verb'], line);
    out.set(`${labels.verb} ${labels.resource}`, Number(m[2]));
  }
  return out;
}

describe('sless_kube_requests_total', () => {
  const kc = testKubeConfig();
  const custom = kc.makeApiClient(CustomObjectsApi);
  let ns: TestNamespace;
  let buildNs: TestNamespace;
  let dir: string;
  let proxy: CountingProxy;
  let server: ControllerServer;

  /** What the proxy has seen so far, classified as the controller should. */
  const proxied = () => {
    const out = new Map<string, number>();
    for (const r of proxy.requests) {
      const { verb, resource } = apiRequestKind(r.method, r.url);
      out.set(`${verb} ${resource}`, (out.get(`${verb} ${resource}`) ?? 0) + 1);
    }
    return out;
  };
  const metrics = async () => scraped(await (await fetch(`${server.metricsUrl}/metrics`)).text());

  before(async () => {
    ns = await freshNamespace(kc, 'apireq');
    buildNs = await freshNamespace(kc, 'apireq-builds');
    dir = await mkdtemp(path.join(os.tmpdir(), 'sless-apireq-'));
    proxy = await startCountingProxy(kc);
    const file = path.join(dir, 'kubeconfig');
    await writeFile(file, proxy.kubeConfig().exportConfig());
    const config = loadControllerConfig(['--port', '0', '--metrics-port', '0', '--kubeconfig', file], controllerTestEnv('apireq-secret-0123456789abcdef-0123456789', buildNs.name));
    server = await startControllerServer(config, { stdout: new PassThrough().resume(), stderr: new PassThrough().resume() }, {
      host: '127.0.0.1',
      leaderElection: { namespace: ns.name, identity: 'apireq', leaseDurationMs: 3_000, renewIntervalMs: 200, renewDeadlineMs: 2_000 },
      controller: { watchNamespace: ns.name },
    });
  });

  after(async () => {
    await server?.close();
    await proxy?.close();
    await dropFunctionFinalizers(kc, ns.name);
    await ns.cleanup();
    await buildNs.cleanup();
    await rm(dir, { recursive: true, force: true });
  });

  it('counts every request the controller sent, by verb and resource, as the API server received them', async () => {
    await eventually(() => assert.ok(server.controller, 'leads'), { timeoutMs: 30_000 });
    await custom.createNamespacedCustomObject({
      group: GROUP,
      version: VERSION,
      namespace: ns.name,
      plural: 'functions',
      body: { apiVersion: `${GROUP}/${VERSION}`, kind: 'Function', metadata: { name: 'counted' }, spec: { runtime: 'nodejs20' } },
    });
    // The Function's reconcile has written its status: a reconciler's write among the informers' reads.
    await eventually(() => assert.ok((proxied().get('PATCH functions/status') ?? 0) >= 1, [...proxied()].join(', ')), { timeoutMs: 30_000 });

    const low = proxied();
    const counted = await metrics();
    // Requests sent before the scrape may reach the proxy just after it (a Lease renewal every 200 ms):
    // the proxy's count before the scrape is a lower bound, its count once they arrived the upper one.
    await eventually(
      () => {
        const high = proxied();
        for (const key of new Set([...low.keys(), ...counted.keys(), ...high.keys()])) {
          const n = counted.get(key) ?? 0;
          assert.ok(n >= (low.get(key) ?? 0) && n <= (high.get(key) ?? 0), `${key}: /metrics ${n}, the proxy ${low.get(key) ?? 0}..${high.get(key) ?? 0}`);
        }
      },
      { timeoutMs: 5_000, intervalMs: 100 },
    );
    for (const key of ['LIST functions', 'WATCH functions', 'WATCH functionrepositories', 'WATCH pods', 'PATCH functions/status']) {
      assert.ok((counted.get(key) ?? 0) >= 1, `${key} counted: ${[...counted].join(', ')}`);
    }
    // The leader election's (a GET and a POST when it took the Lease, a PUT per renewal).
    assert.ok([...counted.keys()].some((k) => k.endsWith(' leases')), `Lease requests counted: ${[...counted].join(', ')}`);
    // Bounded labels: a verb of the seven, a plural (and subresource), never a namespace or a name.
    for (const key of counted.keys()) {
      const [verb, resource] = key.split(' ') as [string, string];
      assert.ok(VERBS.has(verb), key);
      assert.match(resource, /^([a-z0-9.-]+(\/[a-z0-9.-]+)?)$/, key);
      for (const name of [ns.name, buildNs.name, 'counted', 'apireq']) assert.ok(!resource.includes(name), key);
    }
  });
});
