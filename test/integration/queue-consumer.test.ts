// Queue triggers against a real RabbitMQ (test/services/rabbitmq.ts): every message reaches the
// function, poison messages end in the dead-letter queue after exactly retries + 1 calls, a broker
// restart loses nothing, and a stopped consumer takes nothing more.
import assert from 'node:assert/strict';
import { createServer, type IncomingMessage, type Server, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import { after, before, describe, it } from 'node:test';
import { setTimeout as sleep } from 'node:timers/promises';
import { connect, type ChannelModel } from 'amqplib';
import type { QueueTriggerSpec } from '../../src/manifest/types.ts';
import { httpInvoker, type Invoke } from '../../src/platform/queue-invoker.ts';
import { QueueConsumer } from '../../src/queue/queue-consumer.ts';
import { queueDepth as depth } from '../helpers/amqp.ts';
import { startRabbitmq, type RabbitmqServer } from '../services/rabbitmq.ts';

const amqpUrl = process.env.SLESS_TEST_AMQP_URL;

interface Call {
  readonly id: string;
  readonly attempt: number;
  readonly body: string;
  readonly headers: IncomingMessage['headers'];
}

/** A function server: records each call, answers with `answer(call)` (status, or 'hang'). */
async function functionServer(
  answer: (call: Call) => number | 'hang',
): Promise<{ url: string; calls: Call[]; server: Server }> {
  const calls: Call[] = [];
  const server = createServer((req: IncomingMessage, res: ServerResponse) => {
    const chunks: Buffer[] = [];
    req.on('data', (c: Buffer) => chunks.push(c));
    req.on('end', () => {
      const call = {
        id: String(req.headers['ce-id']),
        attempt: Number(req.headers['x-sless-attempt']),
        body: Buffer.concat(chunks).toString(),
        headers: req.headers,
      };
      calls.push(call);
      const status = answer(call);
      if (status === 'hang') return;
      res
        .writeHead(status, { 'content-type': 'application/json' })
        .end(status < 300 ? '{"ok":true}' : '{"error":"handler threw: boom"}');
    });
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  return { url: `http://127.0.0.1:${(server.address() as AddressInfo).port}`, calls, server };
}

const platformFor = (baseUrl: string, timeoutSec = 5) => ({
  resolveEndpoint: async () => ({ kind: 'ready' as const, baseUrl, timeoutSec }),
});
const quiet = { info: () => undefined, warn: () => undefined };
const bare = (url: string) => {
  const u = new URL(url);
  u.username = '';
  u.password = '';
  return u.toString();
};
type ConsumerExtras = Omit<
  ConstructorParameters<typeof QueueConsumer>[0],
  'namespace' | 'function' | 'spec' | 'invoke' | 'log'
>;
const consumerFor = (s: QueueTriggerSpec, invoke: Invoke, extras: ConsumerExtras = {}) =>
  new QueueConsumer({ namespace: 'dev', function: 'orders', spec: s, invoke, log: quiet, ...extras });
let seq = 0;
const uniqueQueue = (what: string) => `t-${what}-${process.pid}-${++seq}`;

function spec(url: string, queue: string, over: Partial<QueueTriggerSpec> = {}): QueueTriggerSpec {
  return {
    name: 'orders',
    url: bare(url),
    queue,
    declare: true,
    prefetch: 20,
    retries: 2,
    deadLetter: `${queue}.dlq`,
    ...over,
  };
}

async function publish(
  conn: ChannelModel,
  queue: string,
  messages: Array<{ id: string; body: string }>,
): Promise<void> {
  const ch = await conn.createConfirmChannel();
  await ch.assertQueue(queue, { durable: true });
  for (const m of messages)
    ch.sendToQueue(queue, Buffer.from(m.body), {
      messageId: m.id,
      persistent: true,
      contentType: 'application/json',
    });
  await ch.waitForConfirms();
  await ch.close();
}


async function until(
  what: string,
  check: () => boolean | Promise<boolean>,
  timeoutMs = 60_000,
): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  while (!(await check())) {
    if (Date.now() > deadline) throw new Error(`timed out waiting until ${what}`);
    await sleep(50);
  }
}

describe('queue consumer on a real RabbitMQ', () => {
  let conn: ChannelModel;
  before(async () => {
    assert.ok(
      amqpUrl,
      'SLESS_TEST_AMQP_URL is not set: run through `npm test` (it starts test/services/rabbitmq.ts)',
    );
    conn = await connect(amqpUrl);
  });
  after(async () => {
    await conn?.close();
  });

  it('1,000 messages: 1,000 successful calls, each id seen once, the queue empty, all acked', async () => {
    const fn = await functionServer(() => 200);
    const queue = uniqueQueue('thousand');
    const consumer = consumerFor(spec(amqpUrl!, queue), httpInvoker(platformFor(fn.url)));
    try {
      consumer.start();
      await until('consuming', () => consumer.status().state === 'consuming');
      const ids = Array.from({ length: 1000 }, (_, i) => `m-${i}`);
      await publish(
        conn,
        queue,
        ids.map((id, i) => ({ id, body: JSON.stringify({ n: i }) })),
      );
      await until('1,000 acked', () => consumer.status().counts.acked === 1000);
      assert.equal(fn.calls.length, 1000);
      assert.deepEqual(new Set(fn.calls.map((c) => c.id)), new Set(ids));
      assert.equal(await depth(conn, queue), 0);
      const first = fn.calls.find((c) => c.id === 'm-7');
      assert.deepEqual(JSON.parse(first?.body ?? ''), { n: 7 });
      assert.equal(first?.headers['ce-specversion'], '1.0');
      assert.equal(first?.headers['ce-source'], `${bare(amqpUrl!).replace(/\/$/, '')}/${queue}`);
      assert.equal(first?.headers['ce-type'], 'ru.kube5s.sless.queue.message');
      assert.ok(!Number.isNaN(Date.parse(String(first?.headers['ce-time']))));
    } finally {
      await consumer.stop();
      fn.server.close();
    }
  });

  it('a message whose handler always fails ends in the dead-letter queue after exactly retries + 1 calls, with the error; the others flow', async () => {
    const fn = await functionServer((call) => (call.body.includes('poison') ? 500 : 200));
    const queue = uniqueQueue('poison');
    const consumer = consumerFor(spec(amqpUrl!, queue, { retries: 3 }), httpInvoker(platformFor(fn.url)), {
      retryDelays: { baseMs: 100, maxMs: 400 },
    });
    try {
      consumer.start();
      await until('consuming', () => consumer.status().state === 'consuming');
      await publish(conn, queue, [
        { id: 'poison-1', body: '{"poison":true}' },
        ...Array.from({ length: 50 }, (_, i) => ({ id: `ok-${i}`, body: `plain text ${i}` })),
      ]);
      await until(
        'the poison message dead-lettered',
        () => consumer.status().counts.dead_lettered === 1,
        30_000,
      );
      await until('the others acked', () => consumer.status().counts.acked === 50);
      const poisonCalls = fn.calls.filter((c) => c.id === 'poison-1');
      assert.deepEqual(
        poisonCalls.map((c) => c.attempt),
        [1, 2, 3, 4],
      );
      assert.equal(consumer.status().counts.retried, 3);
      const ch = await conn.createChannel();
      const dead = await ch.get(`${queue}.dlq`, { noAck: true });
      await ch.close();
      assert.ok(dead, 'a message in the dead-letter queue');
      assert.equal(dead.properties.messageId, 'poison-1');
      assert.equal(dead.content.toString(), '{"poison":true}');
      assert.equal(dead.properties.headers?.['x-sless-attempts'], 4);
      assert.match(String(dead.properties.headers?.['x-sless-error']), /HTTP 500: .*boom/);
      assert.equal(await depth(conn, queue), 0);
      // a body that is not JSON reached the function as the text it is
      assert.ok(fn.calls.some((c) => c.body === 'plain text 3'));
    } finally {
      await consumer.stop();
      fn.server.close();
    }
  });

  it('a call that outlives timeout_sec counts as a failure and is retried', async () => {
    let calls = 0;
    const fn = await functionServer(() => (++calls === 1 ? 'hang' : 200));
    const queue = uniqueQueue('timeout');
    const consumer = consumerFor(spec(amqpUrl!, queue), httpInvoker(platformFor(fn.url, 1)), {
      retryDelays: { baseMs: 100, maxMs: 100 },
    });
    try {
      consumer.start();
      await publish(conn, queue, [{ id: 'slow', body: '{}' }]);
      await until('acked after a retry', () => consumer.status().counts.acked === 1, 20_000);
      assert.deepEqual(consumer.status().counts, { acked: 1, retried: 1, dead_lettered: 0 });
      assert.deepEqual(
        fn.calls.map((c) => c.attempt),
        [1, 2],
      );
    } finally {
      await consumer.stop();
      fn.server.close();
      fn.server.closeAllConnections();
    }
  });

  it('an unreachable function is retried, then dead-lettered with the reason', async () => {
    const queue = uniqueQueue('unreachable');
    const consumer = consumerFor(
      spec(amqpUrl!, queue, { retries: 1 }),
      httpInvoker(platformFor('http://127.0.0.1:1')),
      { retryDelays: { baseMs: 100, maxMs: 100 } },
    );
    try {
      consumer.start();
      await publish(conn, queue, [{ id: 'x', body: '{}' }]);
      await until('dead-lettered', () => consumer.status().counts.dead_lettered === 1, 20_000);
      const ch = await conn.createChannel();
      const dead = await ch.get(`${queue}.dlq`, { noAck: true });
      await ch.close();
      assert.ok(dead);
      assert.equal(dead.properties.headers?.['x-sless-attempts'], 2);
      assert.match(String(dead.properties.headers?.['x-sless-error']), /unreachable: ECONNREFUSED/);
    } finally {
      await consumer.stop();
    }
  });

  it('after stop() nothing more is consumed: new messages stay in the queue', async () => {
    const fn = await functionServer(() => 200);
    const queue = uniqueQueue('stop');
    const consumer = consumerFor(spec(amqpUrl!, queue), httpInvoker(platformFor(fn.url)));
    try {
      consumer.start();
      await publish(conn, queue, [{ id: 'before', body: '{}' }]);
      await until('the first acked', () => consumer.status().counts.acked === 1);
      await consumer.stop();
      assert.equal(consumer.status().state, 'stopped');
      await publish(
        conn,
        queue,
        Array.from({ length: 10 }, (_, i) => ({ id: `after-${i}`, body: '{}' })),
      );
      await sleep(1000);
      assert.deepEqual(
        fn.calls.map((c) => c.id),
        ['before'],
      );
      assert.equal(await depth(conn, queue), 10);
    } finally {
      await consumer.stop();
      fn.server.close();
    }
  });

  it('declare: false and a queue that does not exist: the status says so, and it consumes once the queue exists', async () => {
    const fn = await functionServer(() => 200);
    const queue = uniqueQueue('missing');
    const consumer = consumerFor(spec(amqpUrl!, queue, { declare: false }), httpInvoker(platformFor(fn.url)));
    try {
      consumer.start();
      await until('waiting', () => consumer.status().state === 'waiting');
      assert.match(
        consumer.status().message ?? '',
        new RegExp(
          `queue "${queue}" \\(declare: false\\): does not exist on amqp://127\\.0\\.0\\.1:\\d+/%2f \\(create it, or set declare: true\\)`,
        ),
      );
      const ch = await conn.createChannel();
      await ch.assertQueue(queue, { durable: true });
      await ch.assertQueue(`${queue}.dlq`, { durable: true });
      await ch.close();
      await until('consuming once both queues exist', () => consumer.status().state === 'consuming', 30_000);
    } finally {
      await consumer.stop();
      fn.server.close();
    }
  });

  it('wrong credentials: the status names the refused login, never the password', async () => {
    const queue = uniqueQueue('login');
    const consumer = consumerFor(
      spec(amqpUrl!, queue, { secret: 'rabbit-credentials' }),
      httpInvoker(platformFor('http://127.0.0.1:1')),
      { credentials: { username: 'guest', password: 'not-the-password' } },
    );
    try {
      consumer.start();
      await until('waiting', () => consumer.status().state === 'waiting');
      assert.match(consumer.status().message ?? '', /refused the login of secret rabbit-credentials/);
      assert.doesNotMatch(consumer.status().message ?? '', /not-the-password/);
    } finally {
      await consumer.stop();
    }
  });
});

describe('queue consumer through a broker restart', () => {
  let broker: RabbitmqServer;
  before(async () => {
    broker = await startRabbitmq();
  });
  after(async () => {
    await broker?.destroy();
  });

  it('restarting the broker mid-stream loses nothing (redeliveries counted)', async () => {
    const fn = await functionServer(() => 200);
    const queue = uniqueQueue('restart');
    const consumer = consumerFor(spec(broker.url, queue, { prefetch: 10 }), async (req) => {
      await sleep(2); // a stream slow enough to be mid-way when the broker stops
      return httpInvoker(platformFor(fn.url))(req);
    });
    const conn = await connect(broker.url);
    const ids = Array.from({ length: 1000 }, (_, i) => `r-${i}`);
    try {
      consumer.start();
      await until('consuming', () => consumer.status().state === 'consuming');
      await publish(
        conn,
        queue,
        ids.map((id) => ({ id, body: `{"id":"${id}"}` })),
      );
      await conn.close();
      await until('some acked', () => consumer.status().counts.acked >= 200);
      const ackedBefore = consumer.status().counts.acked;
      assert.ok(ackedBefore < 1000, 'the broker stops mid-stream');
      await broker.stop();
      await broker.start();
      await until('every id seen', () => new Set(fn.calls.map((c) => c.id)).size === 1000, 120_000);
      const conn2 = await connect(broker.url);
      await until(
        'the queue drained',
        async () => (await depth(conn2, queue)) === 0 && consumer.status().inFlight === 0,
        60_000,
      );
      await conn2.close();
      const duplicates = fn.calls.length - 1000;
      console.log(
        `broker restart after ${ackedBefore} acks: ${fn.calls.length} calls for 1000 messages, ${duplicates} repeated, ${consumer.status().redeliveries} redelivered by the broker`,
      );
      assert.deepEqual(new Set(fn.calls.map((c) => c.id)), new Set(ids));
      assert.ok(
        duplicates <= 10 + consumer.status().redeliveries,
        'repeats are only the messages in flight at the restart',
      );
    } finally {
      await consumer.stop();
      fn.server.close();
    }
  });
});
