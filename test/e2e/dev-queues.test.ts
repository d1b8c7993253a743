// `sless dev` with a queue trigger (function.yaml `queues:`) against the real RabbitMQ of the test
// run: the real dev process, the real Node runtime, credentials from --secrets-dir. Every message is
// one call, a message the handler always fails on ends in the dead-letter queue after retries + 1
// calls, the calls show in /metrics and the invocation log, and removing the trigger stops consumption.
import assert from 'node:assert/strict';
import { mkdir, mkdtemp, readFile, rm, writeFile } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { after, before, test } from 'node:test';
import { setTimeout as sleep } from 'node:timers/promises';
import type { ChannelModel } from 'amqplib';
import { devAmqp, queueDepth, type DevAmqp } from '../helpers/amqp.ts';
import { eventually, startDevProcess, type DevProcess } from './dev-harness.ts';

const queue = `dev-orders-${process.pid}`;
let folder: string;
let secrets: string;
let out: string;
let dev: DevProcess;
let conn: ChannelModel;
let amqp: DevAmqp;

const handler = `import { appendFileSync } from 'node:fs';
export async function handle(event, context) {
  if (event && event.slow) await new Promise((resolve) => setTimeout(resolve, 400));
  appendFileSync(process.env.OUT_FILE, \`\${context.headers['ce-id']} \${context.headers['x-sless-attempt']} \${typeof event}\\n\`);
  if (event && event.poison) throw new Error('poison message: ' + context.headers['ce-id']);
  return { ok: true };
}
`;

function manifest(withQueue: boolean, scaledToZero: boolean | string = false): string {
  return [
    'runtime: nodejs22',
    'entrypoint: handler.mjs.handle',
    `env: {OUT_FILE: ${JSON.stringify(out)}}`,
    ...(scaledToZero ? [typeof scaledToZero === 'string' ? `scale: ${scaledToZero}` : 'scale: {min: 0, idle: 10s}'] : []),
    ...(withQueue
      ? ['queues:', '  - name: orders', `    url: ${amqp.bareUrl}`, '    secret: rabbit', `    queue: ${queue}`, '    declare: true', '    prefetch: 20', '    retries: 1']
      : []),
    '',
  ].join('\n');
}

async function lines(): Promise<string[][]> {
  const text = await readFile(out, 'utf8').catch(() => '');
  return text
    .split('\n')
    .filter(Boolean)
    .map((l) => l.split(' '));
}

async function publish(messages: Array<{ id: string; body: string }>): Promise<void> {
  const ch = await conn.createConfirmChannel();
  for (const m of messages) ch.sendToQueue(queue, Buffer.from(m.body), { messageId: m.id, persistent: true });
  await ch.waitForConfirms();
  await ch.close();
}

const depth = (name: string): Promise<number> => queueDepth(conn, name);

async function sync(): Promise<void> {
  const res = await fetch(`${dev.url}/v1/namespaces/dev/repositories/local/sync`, { method: 'POST', headers: { authorization: `Bearer ${await dev.adminToken()}` } });
  assert.ok(res.status === 202 || res.status === 200, `sync answered ${res.status}`);
}

before(async () => {
  amqp = await devAmqp();
  conn = amqp.conn;
  folder = await mkdtemp(path.join(os.tmpdir(), 'sless-dev-queues-'));
  secrets = amqp.secretsDir;
  out = path.join(folder, 'calls.txt');
  await mkdir(path.join(folder, 'fns/worker'), { recursive: true });
  await writeFile(path.join(folder, 'fns/worker/function.yaml'), manifest(true));
  await writeFile(path.join(folder, 'fns/worker/handler.mjs'), handler);
  dev = await startDevProcess({ repo: path.join(folder, 'fns'), extraArgs: ['--secrets-dir', secrets] });
  await dev.waitForLog(/worker: ready at/, { timeoutMs: 120_000 });
  // Consuming, so the queue exists (declare: true): a message published before would be unroutable.
  await dev.waitForLog(/dev\/worker queue trigger orders .*: consuming$/, { timeoutMs: 30_000 });
});

after(async () => {
  await dev?.stop('SIGTERM');
  await dev?.dispose();
  await amqp?.close();
  await rm(folder, { recursive: true, force: true });
});

test('1,000 messages: 1,000 successful calls of the function, each id seen, none lost', async () => {
  const ids = Array.from({ length: 1000 }, (_, i) => `m-${i}`);
  await publish(ids.map((id, i) => ({ id, body: JSON.stringify({ n: i }) })));
  await eventually(async () => new Set((await lines()).map((l) => l[0])).size >= 1000 || undefined, '1,000 ids seen', 120_000).catch(async (err: unknown) => {
    const seen = await lines();
    throw new Error(`${(err as Error).message}: ${new Set(seen.map((l) => l[0])).size} ids in ${seen.length} calls, queue depth ${await depth(queue)}; dev's log:\n${dev.log().slice(-3000)}`);
  });
  const seen = await lines();
  assert.deepEqual(new Set(seen.map((l) => l[0])), new Set(ids));
  assert.ok(seen.every((l) => l[2] === 'object'), 'JSON bodies reach the handler as parsed events');
  await eventually(async () => ((await depth(queue)) === 0 ? true : undefined), 'the queue drained');
  const metrics = await (await fetch(`${dev.url}/metrics`)).text();
  assert.match(metrics, /sless_queue_messages_total\{namespace="dev",function="worker",trigger="orders",outcome="acked"\} 1000/);
  const invocations = (await (
    await fetch(`${dev.url}/v1/namespaces/dev/functions/worker/invocations?limit=5`, { headers: { authorization: `Bearer ${await dev.adminToken()}` } })
  ).json()) as Array<{ method: string; path: string; status: number }>;
  assert.deepEqual(invocations[0] && { method: invocations[0].method, path: invocations[0].path, status: invocations[0].status }, { method: 'QUEUE', path: '/queues/orders', status: 200 });
});

test('a message the handler always throws on ends in the dead-letter queue after retries + 1 calls, with the error; the others flow', async () => {
  const before = (await lines()).length;
  await publish([{ id: 'poison-1', body: '{"poison": true}' }, ...Array.from({ length: 20 }, (_, i) => ({ id: `after-${i}`, body: `text ${i}` }))]);
  await eventually(async () => ((await depth(`${queue}.dlq`)) === 1 ? true : undefined), 'the poison message in the dead-letter queue', 30_000);
  const calls = (await lines()).slice(before);
  assert.deepEqual(calls.filter((l) => l[0] === 'poison-1').map((l) => l[1]), ['1', '2']);
  assert.equal(calls.filter((l) => l[0]?.startsWith('after-')).length, 20);
  assert.ok(calls.filter((l) => l[0]?.startsWith('after-')).every((l) => l[2] === 'string'), 'a body that is not JSON reaches the handler as a string');
  const ch = await conn.createChannel();
  const dead = await ch.get(`${queue}.dlq`, { noAck: true });
  await ch.close();
  assert.ok(dead);
  assert.equal(dead.properties.messageId, 'poison-1');
  assert.equal(dead.properties.headers?.['x-sless-attempts'], 2);
  assert.match(String(dead.properties.headers?.['x-sless-error']), /HTTP 500: .*poison message: poison-1/);
});

test('/v1 and the console list the queue trigger with its readings; it is changed in function.yaml, not through /v1', async () => {
  const auth = { authorization: `Bearer ${await dev.adminToken()}` };
  type Body = { name: string; type: string; function_ref: string; active: boolean; queue?: { queue: string; prefetch: number; dead_letter: string }; lag?: number; in_flight?: number; dead_lettered?: number; managed_by: string };
  const listed = async (): Promise<Body | undefined> =>
    ((await (await fetch(`${dev.url}/v1/namespaces/dev/triggers`, { headers: auth })).json()) as Body[]).find((t) => t.name === 'worker-queue-orders');
  // The consumer reads the queues every few seconds; a message set aside in the dead-letter queue shows.
  const ch = await conn.createConfirmChannel();
  ch.sendToQueue(`${queue}.dlq`, Buffer.from('{}'), { messageId: 'set-aside', persistent: true });
  await ch.waitForConfirms();
  await ch.close();
  let last: Body | undefined;
  const t = await eventually(async () => ((last = await listed())?.dead_lettered === 1 ? last : undefined), 'the trigger listed with its dead letter', 30_000).catch((err: unknown) => {
    throw new Error(`${(err as Error).message}; listed: ${JSON.stringify(last)}`);
  });
  assert.deepEqual(
    t && { type: t.type, function_ref: t.function_ref, active: t.active, queue: t.queue?.queue, prefetch: t.queue?.prefetch, dead_letter: t.queue?.dead_letter, lag: t.lag, managed_by: t.managed_by },
    { type: 'queue', function_ref: 'worker', active: true, queue, prefetch: 20, dead_letter: `${queue}.dlq`, lag: 0, managed_by: 'git:local' },
  );
  assert.equal(typeof t?.in_flight, 'number');
  const one = await fetch(`${dev.url}/v1/namespaces/dev/triggers/worker-queue-orders`, { headers: auth });
  assert.equal(one.status, 200);
  const patch = await fetch(`${dev.url}/v1/namespaces/dev/triggers/worker-queue-orders`, {
    method: 'PATCH',
    headers: { ...auth, 'content-type': 'application/json' },
    body: JSON.stringify({ enabled: false }),
  });
  assert.equal(patch.status, 409);
  assert.match(((await patch.json()) as { error: string }).error, /comes from function\.yaml of worker .*change its queues: there/);
  const page = await (await fetch(`${dev.url}/funcs/dev/functions/worker`, { headers: { ...auth, accept: 'text/html' } })).text();
  assert.match(page, /<h2 id="queues-h">Queues<\/h2>/);
  assert.ok(page.includes(queue), 'the function page shows the queue it consumes');
  const back = await conn.createChannel();
  await back.get(`${queue}.dlq`, { noAck: true });
  await back.close();
});

test('a function scaled to zero wakes for a message (issue 34 with scale.min 0)', async () => {
  await writeFile(path.join(folder, 'fns/worker/function.yaml'), manifest(true, true));
  await sync();
  const ready = async () => /sless_function_replicas\{namespace="dev",function="worker",state="ready"\} (\d+)/.exec(await (await fetch(`${dev.url}/metrics`)).text())?.[1];
  await eventually(async () => ((await ready()) === '0' ? true : undefined), 'the worker scaled to zero after idle', 60_000);
  const before = (await lines()).length;
  await publish([{ id: 'wake-1', body: '{"n": 1}' }]);
  await eventually(async () => ((await lines()).slice(before).some((l) => l[0] === 'wake-1') ? true : undefined), 'the message handled after a wake', 60_000);
  assert.equal(await depth(`${queue}.dlq`), 0, 'the wake is not a failed delivery');
  assert.notEqual(await ready(), '0');
});

test('a backlog scales the function out, and once the queue is empty it returns to zero (issue 34 item 2)', async () => {
  await writeFile(path.join(folder, 'fns/worker/function.yaml'), manifest(true, '{min: 0, max: 3, concurrency: 1, idle: 10s}'));
  await sync();
  const auth = { authorization: `Bearer ${await dev.adminToken()}` };
  await eventually(
    async () => (((await (await fetch(`${dev.url}/v1/namespaces/dev/functions/worker`, { headers: auth })).json()) as { scale?: { max?: number } }).scale?.max === 3 ? true : undefined),
    'the new scale applied',
    60_000,
  );
  const metric = async (state: 'desired' | 'ready') =>
    Number(new RegExp(`sless_function_replicas\\{namespace="dev",function="worker",state="${state}"\\} (\\d+)`).exec(await (await fetch(`${dev.url}/metrics`)).text())?.[1] ?? -1);
  const before = (await lines()).length;
  // 400 deliveries of 400 ms with prefetch 20: 20 in flight for ~8 s against a target of 1 per process.
  await publish(Array.from({ length: 400 }, (_, i) => ({ id: `slow-${i}`, body: '{"slow": true}' })));
  let most = 0;
  await eventually(
    async () => {
      most = Math.max(most, await metric('ready'));
      return (await lines()).slice(before).length >= 400 ? true : undefined;
    },
    'the backlog handled',
    120_000,
  );
  assert.ok(most >= 2, `the backlog ran on more than one process (at most ${most} ready)`);
  assert.equal(await depth(`${queue}.dlq`), 0, 'scaling out fails no delivery');
  await eventually(async () => ((await metric('ready')) === 0 ? true : undefined), 'back to zero once the queue is empty and idle', 60_000);
});

test('removing the trigger from function.yaml stops consumption', async () => {
  await writeFile(path.join(folder, 'fns/worker/function.yaml'), manifest(false));
  const offset = dev.log().length;
  await sync();
  await dev.waitForLog(/dev\/worker\/orders: queue trigger stopped/, { fromOffset: offset, timeoutMs: 60_000 });
  const before = (await lines()).length;
  await publish(Array.from({ length: 5 }, (_, i) => ({ id: `late-${i}`, body: '{}' })));
  await sleep(2000);
  assert.equal((await lines()).length, before);
  assert.equal(await depth(queue), 5);
});
