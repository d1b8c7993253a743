// Two `sless controller` replicas (startControllerServer, in this process) against the real API server
// and S3: both serve /v1 and /fn over the KubernetesPlatform, exactly one runs the reconcilers, and the
// other takes over when it stops.
import assert from 'node:assert/strict';
import { createHmac } from 'node:crypto';
import { PassThrough } from 'node:stream';
import { after, before, describe, it } from 'node:test';
import { BatchV1Api, CustomObjectsApi } from '@kubernetes/client-node';
import { SignJWT } from 'jose';
import { startControllerServer, type ControllerServer } from '../../src/cli/controller.ts';
import { loadControllerConfig } from '../../src/config/config.ts';
import { writeZip } from '../../src/http/write-zip.ts';
import { hashFiles } from '../../src/source/code-hash.ts';
import { eventually, freshNamespace, testKubeConfig, type TestNamespace } from '../helpers/kube.ts';
import { controllerTestEnv, dropFunctionFinalizers, GROUP, NODE_CODE, testKubeconfigPath, VERSION } from './kube-platform-kit.ts';

const SECRET = 'controller-test-secret-0123456789abcdef';

describe('sless controller replicas', () => {
  let ns: TestNamespace;
  let buildNs: TestNamespace;
  const replicas: ControllerServer[] = [];
  let token: string;

  const start = async (identity: string): Promise<ControllerServer> => {
    const config = loadControllerConfig(['--port', '0', '--metrics-port', '0', '--kubeconfig', testKubeconfigPath()], {
      ...controllerTestEnv(SECRET, buildNs.name),
      SLESS_PUBLIC_URL: 'https://fn.example.test',
    });
    const server = await startControllerServer(config, { stdout: new PassThrough().resume(), stderr: new PassThrough().resume() }, {
      host: '127.0.0.1',
      leaderElection: { namespace: ns.name, identity, leaseDurationMs: 3_000, renewIntervalMs: 200, renewDeadlineMs: 2_000 },
      controller: { watchNamespace: ns.name, backoff: { baseMs: 200, maxMs: 2_000 } },
      endpointTtl: { readyMs: 0, otherMs: 0 },
    });
    replicas.push(server);
    return server;
  };

  const call = async (server: ControllerServer, method: string, path: string, body?: unknown, contentType = 'application/json') => {
    const res = await fetch(`${server.url}${path}`, {
      method,
      headers: { authorization: `Bearer ${token}`, ...(body !== undefined ? { 'content-type': contentType } : {}) },
      ...(body !== undefined ? { body: Buffer.isBuffer(body) ? body : JSON.stringify(body) } : {}),
    });
    const text = await res.text();
    return { status: res.status, json: text && res.headers.get('content-type')?.includes('json') ? (JSON.parse(text) as Record<string, unknown>) : undefined, text };
  };

  before(async () => {
    const kc = testKubeConfig();
    ns = await freshNamespace(kc, 'replicas');
    buildNs = await freshNamespace(kc, 'replicas-builds');
    token = await new SignJWT({ sless_admin: true }).setProtectedHeader({ alg: 'HS256' }).setSubject('ops').setExpirationTime('1h').sign(new TextEncoder().encode(SECRET));
    await start('replica-a');
    await start('replica-b');
  });

  after(async () => {
    await Promise.all(replicas.map((r) => r.close()));
    await dropFunctionFinalizers(testKubeConfig(), ns.name);
    await ns.cleanup();
    await buildNs.cleanup();
  });

  it('elect one leader; both serve health and readiness', async () => {
    await eventually(() => assert.equal(replicas.filter((r) => r.controller).length, 1));
    for (const r of replicas) {
      assert.equal((await fetch(`${r.url}/healthz`)).status, 200);
      assert.equal((await fetch(`${r.url}/readyz`)).status, 200);
    }
  });

  it('serve /metrics on the metrics port only: the public port does not list tenants’ functions (issue 31 item 12)', async () => {
    const [replica] = replicas;
    assert.ok(replica);
    const publicPort = await fetch(`${replica.url}/metrics`);
    assert.equal(publicPort.status, 404, 'the public listener has no /metrics');
    const metrics = await fetch(`${replica.metricsUrl}/metrics`);
    assert.equal(metrics.status, 200);
    assert.match(await metrics.text(), /^sless_kube_requests_total\{/m);
    assert.equal((await fetch(`${replica.metricsUrl}/v1/namespaces/x/functions`)).status, 404, 'the metrics port serves nothing else');
  });

  it('serve /v1 on any replica: create, upload a zip, read the source back', async () => {
    const [a, b] = replicas as [ControllerServer, ControllerServer];
    const created = await call(a, 'POST', `/v1/namespaces/${ns.name}/functions`, { name: 'hello', runtime: 'nodejs20', env_vars: { GREETING: 'hi' } });
    assert.equal(created.status, 201, created.text);
    assert.equal(created.json?.managed_by, 'api');
    assert.equal(created.json?.url, `https://fn.example.test/fn/${ns.name}/hello`);

    const uploaded = await call(b, 'POST', `/v1/namespaces/${ns.name}/functions/hello/upload`, writeZip(NODE_CODE), 'application/zip');
    assert.equal(uploaded.status, 200, uploaded.text);
    assert.equal(uploaded.json?.code_hash, hashFiles(NODE_CODE));

    const source = await fetch(`${a.url}/v1/namespaces/${ns.name}/functions/hello/source`, { headers: { authorization: `Bearer ${token}`, accept: 'application/zip' } });
    assert.equal(source.status, 200);
    assert.equal(source.headers.get('content-type'), 'application/zip');
    const zip = Buffer.from(await source.arrayBuffer());
    for (const f of NODE_CODE) assert.ok(zip.includes(Buffer.from(f.path)), `${f.path} in the zip`);

    const listed = await call(b, 'GET', `/v1/namespaces/${ns.name}/functions`);
    assert.deepEqual((listed.json as unknown as Array<{ name: string }>).map((f) => f.name), ['hello']);
  });

  it('the leader builds what was uploaded; /fn answers 503 until it runs', async () => {
    const kc = testKubeConfig();
    const batch = kc.makeApiClient(BatchV1Api);
    const jobs = await eventually(
      async () => {
        const list = await batch.listNamespacedJob({ namespace: buildNs.name, labelSelector: `sless.kube5s.ru/function=hello` });
        assert.equal(list.items.length, 1, 'one build Job');
        return list.items;
      },
      { timeoutMs: 20_000 },
    );
    // Code without dependency files is appended to its base image as one layer (no kaniko step).
    assert.equal(jobs[0]?.spec?.template.spec?.containers[0]?.args?.[0], 'append');
    const fn = await call(replicas[1]!, 'GET', `/v1/namespaces/${ns.name}/functions/hello`);
    assert.equal(fn.json?.phase, 'Building');
    const invoke = await fetch(`${replicas[0]!.url}/fn/${ns.name}/hello`);
    assert.equal(invoke.status, 503);
    assert.equal(((await invoke.json()) as { code: string }).code, 'function_not_ready');
    assert.equal((await fetch(`${replicas[0]!.url}/fn/${ns.name}/nope`)).status, 404);
  });

  it('keep repository credentials out of every answer; a sync request is accepted by any replica', async () => {
    const body = { name: 'shop', url: 'https://git.example.test/shop.git', credentials: { token: 'tok-never-returned' }, webhook_secret: 'whs-never-returned' };
    const created = await call(replicas[0]!, 'POST', `/v1/namespaces/${ns.name}/repositories`, body);
    assert.equal(created.status, 201, created.text);
    assert.equal(created.json?.secret_name, 'shop-credentials');
    const sync = await call(replicas[1]!, 'POST', `/v1/namespaces/${ns.name}/repositories/shop/sync`);
    assert.equal(sync.status, 202, sync.text);
    for (const r of replicas) {
      const all = await call(r, 'GET', `/v1/namespaces/${ns.name}/repositories`);
      assert.doesNotMatch(all.text, /never-returned/);
    }
    const gitManaged = await call(replicas[0]!, 'DELETE', `/v1/namespaces/${ns.name}/functions/nope`);
    assert.equal(gitManaged.status, 404);
  });

  it('accept a signed push webhook on any replica by annotating the repository; refuse a bad signature', async () => {
    const body = Buffer.from(JSON.stringify({ ref: 'refs/heads/main', after: 'a'.repeat(40), commits: [] }));
    const sign = (secret: string) => `sha256=${createHmac('sha256', secret).update(body).digest('hex')}`;
    const hook = (server: ControllerServer, signature: string) =>
      fetch(`${server.url}/hooks/${ns.name}/shop`, {
        method: 'POST',
        headers: { 'content-type': 'application/json', 'x-github-event': 'push', 'x-github-delivery': 'd-1', 'x-hub-signature-256': signature },
        body,
      });
    const custom = testKubeConfig().makeApiClient(CustomObjectsApi);
    const annotations = async () =>
      ((await custom.getNamespacedCustomObject({ group: GROUP, version: VERSION, namespace: ns.name, plural: 'functionrepositories', name: 'shop' })) as {
        metadata: { annotations?: Record<string, string> };
      }).metadata.annotations ?? {};
    const annotation = async () => (await annotations())['sless.kube5s.ru/requestedAt'];
    const before = await annotation();
    assert.equal((await hook(replicas[1]!, sign('wrong-secret'))).status, 401);
    assert.equal(await annotation(), before, 'a bad signature starts nothing');
    await new Promise((r) => setTimeout(r, 5));
    const accepted = await hook(replicas[1]!, sign('whs-never-returned'));
    assert.equal(accepted.status, 202, await accepted.text());
    const after = await annotation();
    assert.ok(after && after !== before, `requestedAt moved from ${before} to ${after}`);
    assert.equal((await annotations())['sless.kube5s.ru/requestedRevision'], 'a'.repeat(40), "the push's head goes with the request, as the sync's hint");
    assert.equal((await fetch(`${replicas[0]!.url}/hooks/${ns.name}/nope`, { method: 'POST', body: '{}' })).status, 404);
  });

  it('when the leader stops, the other replica takes over at once', async () => {
    const leader = replicas.find((r) => r.controller)!;
    const other = replicas.find((r) => r !== leader)!;
    const t0 = Date.now();
    await leader.close();
    await eventually(() => assert.ok(other.controller, 'the other replica leads'), { timeoutMs: 3_000, intervalMs: 50 });
    assert.ok(Date.now() - t0 < 3_000, `took over after ${Date.now() - t0} ms`);
    assert.equal((await fetch(`${other.url}/readyz`)).status, 200);
  });
});
