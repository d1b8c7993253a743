// The old system's client flow (its Terraform provider) against a real `sless controller` (the real
// API server, S3, reconcilers); what a kubelet and kaniko would do is played by the harness, so the
// function itself never answers here: the flow is checked through the objects and /fn's status codes.
import assert from 'node:assert/strict';
import { PassThrough } from 'node:stream';
import { after, before, describe, it } from 'node:test';
import { AppsV1Api, BatchV1Api, CoreV1Api, CustomObjectsApi } from '@kubernetes/client-node';
import { SignJWT } from 'jose';
import { namespaceForSubject } from '../../src/auth/namespace-for-subject.ts';
import { startControllerServer, type ControllerServer } from '../../src/cli/controller.ts';
import { loadControllerConfig } from '../../src/config/config.ts';
import { writeZip } from '../../src/http/write-zip.ts';
import type { FunctionResource } from '../../src/platform/kubernetes/objects/resources.ts';
import { eventually, freshNamespace, testKubeConfig, type TestNamespace } from '../helpers/kube.ts';
import { markDeploymentAvailable, markJobSucceeded } from '../helpers/kube-harness.ts';
import { controllerTestEnv, GROUP, NODE_CODE, testKubeconfigPath, VERSION } from './kube-platform-kit.ts';

const SECRET = 'old-client-test-secret-0123456789abcdef';
const SUB = `terraform-${Date.now()}@example.com`;
const NS = namespaceForSubject(SUB);
const DIGEST = `sha256:${'c'.repeat(64)}`;

describe('the old client flow against sless controller', () => {
  const kc = testKubeConfig();
  const apps = kc.makeApiClient(AppsV1Api);
  const batch = kc.makeApiClient(BatchV1Api);
  let buildNs: TestNamespace;
  let server: ControllerServer;
  let token: string;

  before(async () => {
    buildNs = await freshNamespace(kc, 'old-client-builds');
    const config = loadControllerConfig(['--port', '0', '--metrics-port', '0', '--kubeconfig', testKubeconfigPath()], controllerTestEnv(SECRET, buildNs.name));
    server = await startControllerServer(config, { stdout: new PassThrough().resume(), stderr: new PassThrough().resume() }, {
      host: '127.0.0.1',
      leaderElection: { namespace: buildNs.name, identity: 'old-client', leaseDurationMs: 3_000, renewIntervalMs: 200, renewDeadlineMs: 2_000 },
      controller: { backoff: { baseMs: 200, maxMs: 2_000 } },
      endpointTtl: { readyMs: 0, otherMs: 0 },
    });
    token = await new SignJWT({}).setProtectedHeader({ alg: 'HS256' }).setSubject(SUB).setExpirationTime('1h').sign(new TextEncoder().encode(SECRET));
  });

  after(async () => {
    await server?.close();
    const custom = kc.makeApiClient(CustomObjectsApi);
    const list = (await custom.listNamespacedCustomObject({ group: GROUP, version: VERSION, namespace: NS, plural: 'functions' }).catch(() => ({ items: [] }))) as {
      items: FunctionResource[];
    };
    for (const f of list.items) {
      await custom
        .patchNamespacedCustomObject({ group: GROUP, version: VERSION, namespace: NS, plural: 'functions', name: f.metadata?.name ?? '', body: [{ op: 'remove', path: '/metadata/finalizers' }] })
        .catch(() => undefined);
    }
    await kc.makeApiClient(CoreV1Api).deleteNamespace({ name: NS }).catch(() => undefined);
    await buildNs?.cleanup();
  });

  /** As the Go client does it: JSON content type on every request. */
  const api = async (method: string, path: string, body?: unknown, contentType = 'application/json') => {
    const res = await fetch(`${server.url}/v1/namespaces/${NS}${path}`, {
      method,
      headers: { authorization: `Bearer ${token}`, 'content-type': contentType },
      ...(body === undefined ? {} : { body: Buffer.isBuffer(body) ? body : JSON.stringify(body) }),
    });
    const text = await res.text();
    return { status: res.status, headers: res.headers, json: (text ? JSON.parse(text) : {}) as Record<string, unknown> };
  };
  const replicas = async () => (await apps.readNamespacedDeployment({ name: 'tf-hello', namespace: NS })).spec?.replicas;

  it('ensure, create, upload, build, poll until Ready', async () => {
    assert.equal((await api('POST', '/ensure')).status, 200);
    const created = await api('POST', '/functions', { name: 'tf-hello', runtime: 'nodejs20', env_vars: { GREETING: 'hello' }, description: 'x' });
    assert.equal(created.status, 201, JSON.stringify(created.json));
    assert.match(created.headers.get('warning') ?? '', /description/);
    const uploaded = await api('POST', '/functions/tf-hello/upload', writeZip(NODE_CODE), 'application/octet-stream');
    assert.equal(uploaded.status, 200, JSON.stringify(uploaded.json));
    const [job] = await eventually(async () => {
      const list = await batch.listNamespacedJob({ namespace: buildNs.name, labelSelector: 'sless.kube5s.ru/function=tf-hello' });
      assert.equal(list.items.length, 1);
      return list.items;
    }, { timeoutMs: 60_000 });
    await markJobSucceeded(kc, buildNs.name, job?.metadata?.name ?? '', { terminationMessage: DIGEST });
    await eventually(async () => assert.ok(await replicas()), { timeoutMs: 60_000 });
    await markDeploymentAvailable(kc, NS, 'tf-hello');
    const ready = await eventually(async () => {
      const fn = (await api('GET', '/functions/tf-hello')).json;
      assert.equal(fn.phase, 'Ready');
      return fn;
    }, { timeoutMs: 60_000 });
    assert.ok(ready.last_built_at, 'a Ready function has last_built_at');
  });

  it('an http trigger named <fn>-http and a cron trigger; a job with run_id 1 reports its message; the same job again is 409', async () => {
    assert.equal((await api('POST', '/triggers', { name: 'tf-hello-http', type: 'http', function_ref: 'tf-hello' })).status, 201);
    assert.equal((await api('POST', '/triggers', { name: 'tf-hello-nightly', type: 'cron', function_ref: 'tf-hello', schedule: '0 3 * * *' })).status, 201);
    const job = { name: 'tf-hello-sum', function_ref: 'tf-hello', run_id: 1, event_json: { input: [100, 200, 300] } };
    assert.equal((await api('POST', '/jobs', job)).status, 201);
    const [run] = await eventually(async () => {
      const list = await batch.listNamespacedJob({ namespace: NS, labelSelector: 'sless.kube5s.ru/function-job=tf-hello-sum' });
      assert.equal(list.items.length, 1);
      return list.items;
    }, { timeoutMs: 60_000 });
    await markJobSucceeded(kc, NS, run?.metadata?.name ?? '', { terminationMessage: '{"input":[100,200,300],"sum":600}' });
    const done = await eventually(async () => {
      const j = (await api('GET', '/jobs/tf-hello-sum')).json;
      assert.equal(j.phase, 'Succeeded');
      return j;
    }, { timeoutMs: 60_000 });
    assert.deepEqual(JSON.parse(String(done.message)), { input: [100, 200, 300], sum: 600 });
    const listed = await api('GET', '/jobs');
    assert.equal(listed.status, 200);
    assert.deepEqual((listed.json as unknown as Record<string, unknown>[]).find((j) => j.name === 'tf-hello-sum'), done, 'a listed job is the job as GET answers it');
    assert.equal((await api('POST', '/jobs', job)).status, 409);
  });

  it('PATCH the http trigger off: 0 replicas and /fn 503; on again: 1 replica', async () => {
    assert.equal((await api('PATCH', '/triggers/tf-hello-http', { enabled: false })).status, 200);
    await eventually(async () => assert.equal(await replicas(), 0), { timeoutMs: 60_000 });
    assert.equal((await fetch(`${server.url}/fn/${NS}/tf-hello`)).status, 503);
    assert.equal((await api('GET', '/functions/tf-hello')).json.http_enabled, false);
    assert.equal((await api('PATCH', '/triggers/tf-hello-http', { enabled: true })).status, 200);
    await eventually(async () => assert.equal(await replicas(), 1), { timeoutMs: 60_000 });
  });

  it('PUT env without runtime reaches the Deployment; deletes answer 204 with empty JSON bodies', async () => {
    const put = await api('PUT', '/functions/tf-hello', { env_vars: { GREETING: 'bye' } });
    assert.equal(put.status, 200, JSON.stringify(put.json));
    assert.equal(put.json.runtime, 'nodejs20');
    await eventually(async () => {
      const d = await apps.readNamespacedDeployment({ name: 'tf-hello', namespace: NS });
      assert.equal(d.spec?.template.spec?.containers[0]?.env?.find((e) => e.name === 'GREETING')?.value, 'bye');
    }, { timeoutMs: 60_000 });
    for (const p of ['/triggers/tf-hello-http', '/triggers/tf-hello-nightly', '/jobs/tf-hello-sum', '/functions/tf-hello']) {
      assert.equal((await api('DELETE', p)).status, 204, p);
    }
    // The Function goes once the controller has removed its finalizer (its objects first).
    await eventually(async () => assert.equal((await api('GET', '/functions/tf-hello')).status, 404), { timeoutMs: 60_000 });
  });
});
