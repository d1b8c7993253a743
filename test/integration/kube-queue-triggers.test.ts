// Queue Triggers on Kubernetes (issue 34): two `sless controller` replicas against the real API server
// and a real RabbitMQ. The leader consumes what a queue Trigger names, with the username/password of a
// Secret of the Trigger's namespace; the other replica takes over when the leader goes (the broker
// redelivers what was unacked); removing or disabling the Trigger stops consumption; bad input is a 400
// of /v1 or a Stalled condition with the reason. The test cluster runs no pods: the Function and its
// Deployment are real objects (the harness marks the Deployment available), the platform's own
// resolveEndpoint decides where a delivery goes, and only its ready answer's address is swapped for a
// local HTTP server standing in for the pod (the real-node test, test/e2e-node/queue-trigger.test.ts,
// runs a built function).
import assert from 'node:assert/strict';
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { PassThrough } from 'node:stream';
import { after, before, describe, it } from 'node:test';
import { setTimeout as sleep } from 'node:timers/promises';
import { AppsV1Api, CoreV1Api, CustomObjectsApi } from '@kubernetes/client-node';
import { connect, type ChannelModel } from 'amqplib';
import { SignJWT } from 'jose';
import { startControllerServer, type ControllerServer } from '../../src/cli/controller.ts';
import { loadControllerConfig } from '../../src/config/config.ts';
import type { TriggerResource } from '../../src/platform/kubernetes/objects/resources.ts';
import type { Platform } from '../../src/platform/types.ts';
import { queueDepth } from '../helpers/amqp.ts';
import { eventually, freshNamespace, getCustom, testKubeConfig, type TestNamespace } from '../helpers/kube.ts';
import { markDeploymentAvailable } from '../helpers/kube-harness.ts';
import { controllerTestEnv, dropFunctionFinalizers, GROUP, testKubeconfigPath, VERSION } from './kube-platform-kit.ts';

const SECRET = 'queue-test-secret-0123456789abcdef';
const amqpUrl = process.env.SLESS_TEST_AMQP_URL;
const FN = 'worker';

describe('queue Triggers on Kubernetes', { skip: amqpUrl ? false : 'needs the rabbitmq test service (SLESS_TEST_SERVICES=kube,s3,rabbitmq)' }, () => {
  const kc = testKubeConfig();
  const custom = kc.makeApiClient(CustomObjectsApi);
  let ns: TestNamespace;
  let buildNs: TestNamespace;
  const replicas: ControllerServer[] = [];
  let token: string;
  let amqp: ChannelModel;
  let server: Server;
  let local: string;
  /** ce-id of every call the stand-in function answered, in order. */
  const seen: string[] = [];
  const bare = () => {
    const u = new URL(amqpUrl ?? '');
    u.username = '';
    u.password = '';
    return u.toString();
  };

  const start = async (identity: string): Promise<ControllerServer> => {
    const config = loadControllerConfig(['--port', '0', '--metrics-port', '0', '--kubeconfig', testKubeconfigPath()], controllerTestEnv(SECRET, buildNs.name));
    const replica = await startControllerServer(config, { stdout: new PassThrough().resume(), stderr: new PassThrough().resume() }, {
      host: '127.0.0.1',
      leaderElection: { namespace: ns.name, identity, leaseDurationMs: 3_000, renewIntervalMs: 200, renewDeadlineMs: 2_000 },
      controller: { watchNamespace: ns.name, backoff: { baseMs: 200, maxMs: 2_000 }, queueRetryDelays: { baseMs: 100, maxMs: 400 }, settings: { limits: { queueConsumersPerNamespace: 4 } } },
      endpointTtl: { readyMs: 0, otherMs: 0 },
      reachFunctions: (platform: Pick<Platform, 'resolveEndpoint' | 'scaling'>) => ({
        resolveEndpoint: async (namespace, name) => {
          const endpoint = await platform.resolveEndpoint(namespace, name);
          return endpoint.kind === 'ready' ? { ...endpoint, baseUrl: local } : endpoint;
        },
        ...(platform.scaling ? { scaling: platform.scaling } : {}),
      }),
    });
    replicas.push(replica);
    return replica;
  };

  const v1 = async (method: string, path: string, body?: unknown) => {
    const res = await fetch(`${replicas.at(-1)!.url}/v1/namespaces/${ns.name}${path}`, {
      method,
      headers: { authorization: `Bearer ${token}`, ...(body !== undefined ? { 'content-type': 'application/json' } : {}) },
      ...(body !== undefined ? { body: JSON.stringify(body) } : {}),
    });
    const text = await res.text();
    return { status: res.status, json: text ? (JSON.parse(text) as Record<string, unknown>) : undefined };
  };
  const trigger = (name: string) => getCustom<TriggerResource>(custom, ns.name, 'triggers', name);
  const ready = async (name: string) => (await trigger(name))?.status?.conditions?.find((c) => c.type === 'Ready');
  const leader = () => replicas.find((r) => r.controller);
  const publish = async (queue: string, ids: string[]) => {
    const ch = await amqp.createConfirmChannel();
    for (const id of ids) ch.sendToQueue(queue, Buffer.from(JSON.stringify({ id })), { messageId: id, persistent: true, contentType: 'application/json' });
    await ch.waitForConfirms();
    await ch.close();
  };
  const queueTrigger = (name: string, queue: Record<string, unknown>) => ({ name, type: 'queue', function_ref: FN, queue: { url: bare(), ...queue } });

  before(async () => {
    ns = await freshNamespace(kc, 'queues');
    buildNs = await freshNamespace(kc, 'queues-builds');
    token = await new SignJWT({ sless_admin: true }).setProtectedHeader({ alg: 'HS256' }).setSubject('ops').setExpirationTime('1h').sign(new TextEncoder().encode(SECRET));
    server = createServer((req, res) => {
      req.resume().on('end', () => {
        seen.push(String(req.headers['ce-id']));
        res.writeHead(200, { 'content-type': 'application/json' }).end('{"ok":true}');
      });
    });
    await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
    local = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
    amqp = await connect(amqpUrl ?? '');
    // The tenant's credentials: RabbitMQ's guest account, which logs in from loopback.
    await kc.makeApiClient(CoreV1Api).createNamespacedSecret({ namespace: ns.name, body: { metadata: { name: 'rabbit' }, stringData: { username: 'guest', password: 'guest' } } });
    await custom.createNamespacedCustomObject({
      group: GROUP,
      version: VERSION,
      namespace: ns.name,
      plural: 'functions',
      body: { apiVersion: `${GROUP}/${VERSION}`, kind: 'Function', metadata: { name: FN }, spec: { runtime: 'nodejs20', timeoutSec: 5 } },
    });
    await kc.makeApiClient(AppsV1Api).createNamespacedDeployment({
      namespace: ns.name,
      body: {
        metadata: { name: FN, labels: { 'app.kubernetes.io/managed-by': 'sless', 'sless.kube5s.ru/function': FN } },
        spec: {
          replicas: 1,
          selector: { matchLabels: { app: FN } },
          template: { metadata: { labels: { app: FN } }, spec: { containers: [{ name: 'function', image: `registry.test/${FN}@sha256:${'a'.repeat(64)}` }] } },
        },
      },
    });
    await markDeploymentAvailable(kc, ns.name, FN);
    await start('replica-a');
    await start('replica-b');
    await eventually(() => assert.ok(leader()));
  });

  after(async () => {
    await Promise.all(replicas.map((r) => r.close()));
    await amqp?.close().catch(() => undefined);
    server?.close();
    await dropFunctionFinalizers(kc, ns.name);
    await ns?.cleanup();
    await buildNs?.cleanup();
  });

  it('refuses bad input with a 400 that names the field: credentials in the URL, prefetch 0, unknown fields, no queue', async () => {
    const withCredentials = await v1('POST', '/triggers', { ...queueTrigger('bad1', { queue: 'q' }), queue: { url: 'amqp://user:pw@rabbit:5672/%2f', queue: 'q' } });
    assert.equal(withCredentials.status, 400);
    assert.match(String(withCredentials.json?.error), /credentials/);
    assert.doesNotMatch(String(withCredentials.json?.error), /pw/, 'the password is never repeated');
    const prefetch0 = await v1('POST', '/triggers', queueTrigger('bad2', { queue: 'q', prefetch: 0 }));
    assert.equal(prefetch0.status, 400);
    assert.match(String(prefetch0.json?.error), /prefetch/);
    const unknown = await v1('POST', '/triggers', queueTrigger('bad3', { queue: 'q', exchange: 'x' }));
    assert.equal(unknown.status, 400);
    assert.match(String(unknown.json?.error), /exchange/);
    const none = await v1('POST', '/triggers', { name: 'bad4', type: 'queue', function_ref: FN });
    assert.equal(none.status, 400);
    assert.match(String(none.json?.error), /queue/);
    const same = await v1('POST', '/triggers', queueTrigger('bad5', { queue: 'q', dead_letter: 'q' }));
    assert.equal(same.status, 400);
    assert.match(String(same.json?.error), /dead_letter/);
  });

  it('the leader consumes a queue Trigger made through /v1 with the tenant Secret; status shows lag, in flight and dead letters', async () => {
    const created = await v1('POST', '/triggers', queueTrigger('orders', { queue: 'k-orders', secret: 'rabbit', declare: true, prefetch: 5, retries: 1 }));
    assert.equal(created.status, 201, JSON.stringify(created.json));
    assert.deepEqual(created.json?.queue, { url: bare(), secret: 'rabbit', queue: 'k-orders', declare: true, prefetch: 5, retries: 1, dead_letter: 'k-orders.dlq' });
    await eventually(async () => assert.equal((await ready('orders'))?.reason, 'Consuming'), { timeoutMs: 20_000 });
    const ids = Array.from({ length: 100 }, (_, i) => `a-${i}`);
    await publish('k-orders', ids);
    await eventually(() => assert.deepEqual(new Set(seen.filter((id) => id.startsWith('a-'))), new Set(ids)), { timeoutMs: 20_000 });
    const t = await eventually(async () => {
      const got = await trigger('orders');
      assert.deepEqual(got?.status?.queueStats, { lag: 0, inFlight: 0, deadLettered: 0 });
      return got;
    }, { timeoutMs: 25_000 });
    assert.equal(t?.status?.active, true);
    const listed = await v1('GET', '/triggers/orders');
    assert.deepEqual([listed.json?.lag, listed.json?.in_flight, listed.json?.dead_lettered], [0, 0, 0]);
  });

  it('an unknown Secret, or one the platform keeps, stalls the Trigger with the reason; a missing queue with declare: false too', async () => {
    assert.equal((await v1('POST', '/triggers', queueTrigger('nosecret', { queue: 'k-orders', secret: 'nope' }))).status, 201);
    await eventually(async () => {
      const c = await ready('nosecret');
      assert.equal(c?.reason, 'SecretNotFound');
      assert.match(c?.message ?? '', /Secret .*\/nope .*does not exist/);
    });
    assert.equal((await v1('POST', '/triggers', queueTrigger('noqueue', { queue: 'k-missing', secret: 'rabbit' }))).status, 201);
    await eventually(async () => {
      const c = await ready('noqueue');
      assert.equal(c?.reason, 'QueueNotFound');
      assert.match(c?.message ?? '', /k-missing.*does not exist/);
    }, { timeoutMs: 20_000 });
    // Repository credentials stay with the platform (the env_from_secrets rules).
    await kc.makeApiClient(CoreV1Api).createNamespacedSecret({
      namespace: ns.name,
      body: { metadata: { name: 'repo-creds' }, type: 'sless.kube5s.ru/git-credentials', stringData: { username: 'guest', password: 'guest' } },
    });
    assert.equal((await v1('POST', '/triggers', queueTrigger('gitsecret', { queue: 'k-orders', secret: 'repo-creds' }))).status, 201);
    await eventually(async () => {
      const c = await ready('gitsecret');
      assert.equal(c?.reason, 'SecretNotAllowed');
      assert.match(c?.message ?? '', /spec\.queue\.secret: Secret .*repo-creds has type sless\.kube5s\.ru\/git-credentials/);
    });
    assert.equal((await v1('DELETE', '/triggers/gitsecret')).status, 204);
    assert.equal((await v1('DELETE', '/triggers/nosecret')).status, 204);
    assert.equal((await v1('DELETE', '/triggers/noqueue')).status, 204);
  });

  it('more consumers than the namespace may run: the extra Trigger is Stalled with QueueConsumerLimit', async () => {
    // orders runs; three more fill the cap of 4, the fifth is refused.
    for (const n of ['c1', 'c2', 'c3', 'c4']) assert.equal((await v1('POST', '/triggers', queueTrigger(n, { queue: `k-${n}`, declare: true }))).status, 201);
    await eventually(async () => {
      const reasons = await Promise.all(['c1', 'c2', 'c3', 'c4'].map(async (n) => (await ready(n))?.reason));
      assert.deepEqual(reasons.filter((r) => r === 'QueueConsumerLimit').length, 1, reasons.join(','));
      assert.deepEqual(reasons.filter((r) => r === 'Consuming').length, 3, reasons.join(','));
    }, { timeoutMs: 20_000 });
    for (const n of ['c1', 'c2', 'c3', 'c4']) assert.equal((await v1('DELETE', `/triggers/${n}`)).status, 204);
  });

  it('keeps consuming through a leader change: the new leader starts the consumer, nothing is lost', async () => {
    const before = leader();
    assert.ok(before);
    const ids = Array.from({ length: 50 }, (_, i) => `b-${i}`);
    await publish('k-orders', ids.slice(0, 25));
    await before.close();
    replicas.splice(replicas.indexOf(before), 1);
    await publish('k-orders', ids.slice(25));
    await eventually(() => assert.ok(leader()), { timeoutMs: 15_000 });
    await eventually(() => assert.deepEqual(new Set(seen.filter((id) => id.startsWith('b-'))), new Set(ids)), { timeoutMs: 30_000 });
    await start('replica-c');
  });

  it('stops consuming when the Trigger is disabled, and when it is removed', async () => {
    const patched = await v1('PATCH', '/triggers/orders', { enabled: false });
    assert.equal(patched.status, 200);
    await eventually(async () => assert.equal((await ready('orders'))?.reason, 'Disabled'));
    const count = seen.length;
    await publish('k-orders', ['c-0', 'c-1']);
    await sleep(2_000);
    assert.equal(seen.length, count, 'a disabled trigger takes nothing');
    assert.equal(await queueDepth(amqp, 'k-orders'), 2);
    assert.equal((await v1('PATCH', '/triggers/orders', { enabled: true })).status, 200);
    await eventually(() => assert.ok(seen.includes('c-1')), { timeoutMs: 20_000 });
    assert.equal((await v1('DELETE', '/triggers/orders')).status, 204);
    await eventually(async () => assert.equal(await trigger('orders'), undefined));
    await sleep(1_000);
    const after = seen.length;
    await publish('k-orders', ['d-0']);
    await sleep(2_000);
    assert.equal(seen.length, after, 'a removed trigger takes nothing');
    assert.equal(await queueDepth(amqp, 'k-orders'), 1);
  });
});
