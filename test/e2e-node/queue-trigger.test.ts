// A queue trigger end to end on the real node (issue 34): a queue-only function (http.enabled: false
// beside queues:) pushed to git, built and run in a pod; the leading `sless controller` (a host
// process) consumes the RabbitMQ queue of the test run on loopback with the username/password of the
// tenant's Secret and calls the pod through the function's Service. Every message is a call (the
// invocation log has them), a message the handler throws on is dead-lettered with the pod's own error,
// the Trigger's status shows the readings, and /fn answers 503 (no public route).
//   flock /work/.node.lock env SLESS_TEST_SERVICES=node,git,s3,rabbitmq npm run test:node -- test/e2e-node/queue-trigger.test.ts
import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { AppsV1Api, CoreV1Api, CustomObjectsApi } from '@kubernetes/client-node';
import { connect, type ChannelModel } from 'amqplib';
import { UnsecuredJWT } from 'jose';
import type { TriggerResource } from '../../src/platform/kubernetes/objects/resources.ts';
import { queueDepth } from '../helpers/amqp.ts';
import { eventually, getCustom } from '../helpers/kube.ts';
import { setupNodeKit, type NodeKit } from './sless-kit.ts';

const amqpUrl = process.env.SLESS_TEST_AMQP_URL;
const queue = `node-jobs-${process.pid}`;

describe('a queue trigger on the real node', { timeout: 900_000, skip: amqpUrl ? false : 'needs the rabbitmq test service (SLESS_TEST_SERVICES=node,git,s3,rabbitmq)' }, () => {
  let kit: NodeKit;
  let amqp: ChannelModel;
  const bare = () => {
    const u = new URL(amqpUrl ?? '');
    u.username = '';
    u.password = '';
    return u.toString();
  };
  const manifest = () =>
    [
      'name: worker',
      'runtime: nodejs20',
      'entrypoint: handler.handle',
      'http: {enabled: false}',
      'queues:',
      '  - name: jobs',
      `    url: ${bare()}`,
      '    secret: rabbit',
      `    queue: ${queue}`,
      '    declare: true',
      '    retries: 1',
      '',
    ].join('\n');
  const handler = `exports.handle = async (event) => {
  if (event && event.poison) throw new Error('poison seen by ' + require('node:os').hostname());
  return { ok: true };
};
`;

  before(async () => {
    kit = await setupNodeKit('e2e-node-queue');
    amqp = await connect(amqpUrl ?? '');
    const u = new URL(amqpUrl ?? '');
    await kit.kc.makeApiClient(CoreV1Api).createNamespacedSecret({
      namespace: kit.ns,
      body: { metadata: { name: 'rabbit' }, stringData: { username: decodeURIComponent(u.username), password: decodeURIComponent(u.password) } },
    });
    await kit.startController();
    await kit.push({ 'functions/worker/function.yaml': manifest(), 'functions/worker/handler.js': handler }, 'worker');
    await kit.createRepository('fns');
  });
  after(async () => {
    await amqp?.close().catch(() => undefined);
    await kit?.dispose();
  });

  it('delivers every message to the pod of a queue-only function; a poison message is dead-lettered with the pod’s error', async () => {
    await kit.waitFunction('worker', (f) => f.status?.phase === 'Ready', 600_000);
    const custom = kit.kc.makeApiClient(CustomObjectsApi);
    const trigger = () => getCustom<TriggerResource>(custom, kit.ns, 'triggers', 'worker-queue-jobs');
    await eventually(async () => assert.equal((await trigger())?.status?.conditions?.find((c) => c.type === 'Ready')?.reason, 'Consuming'), { timeoutMs: 180_000, intervalMs: 1000 });
    const deployment = await kit.kc.makeApiClient(AppsV1Api).readNamespacedDeployment({ namespace: kit.ns, name: 'worker' });
    assert.ok((deployment.spec?.replicas ?? 0) >= 1, 'http is off, yet the function runs for its queue');

    const ids = Array.from({ length: 20 }, (_, i) => `n-${i}`);
    const ch = await amqp.createConfirmChannel();
    for (const id of ids) ch.sendToQueue(queue, Buffer.from(JSON.stringify({ id })), { messageId: id, persistent: true, contentType: 'application/json' });
    ch.sendToQueue(queue, Buffer.from('{"poison": true}'), { messageId: 'poison', persistent: true, contentType: 'application/json' });
    await ch.waitForConfirms();
    await ch.close();

    await eventually(async () => assert.equal(await queueDepth(amqp, `${queue}.dlq`), 1), { timeoutMs: 120_000, intervalMs: 1000 });
    const get = await amqp.createChannel();
    const dead = await get.get(`${queue}.dlq`, { noAck: true });
    await get.close();
    assert.ok(dead);
    assert.equal(dead.properties.headers?.['x-sless-attempts'], 2);
    assert.match(String(dead.properties.headers?.['x-sless-error']), /poison seen by worker-/, 'the error is the pod’s own');

    const token = new UnsecuredJWT({ sless_admin: true }).setSubject('node-test').setExpirationTime('1h').encode();
    const calls = await eventually(
      async () => {
        const res = await fetch(`${kit.url()}/v1/namespaces/${kit.ns}/functions/worker/invocations?limit=100`, { headers: { authorization: `Bearer ${token}` } });
        const list = (await res.json()) as Array<{ method: string; path: string; status: number }>;
        const ok = list.filter((c) => c.method === 'QUEUE' && c.path === '/queues/worker-queue-jobs' && c.status === 200);
        assert.equal(ok.length, ids.length, JSON.stringify(list.slice(0, 3)));
        return ok;
      },
      { timeoutMs: 60_000, intervalMs: 1000 },
    );
    assert.equal(calls.length, 20);
    assert.equal(await queueDepth(amqp, queue), 0);
    await eventually(async () => assert.deepEqual((await trigger())?.status?.queueStats, { lag: 0, inFlight: 0, deadLettered: 0 }), { timeoutMs: 60_000, intervalMs: 1000 });

    const res = await kit.callFn('worker');
    assert.equal(res.status, 503, 'no public route: http.enabled is false');
  });
});
