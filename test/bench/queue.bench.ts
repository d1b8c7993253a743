// Queue triggers: messages per second through a trivial function, sless's consumer (src/queue/)
// next to a bare amqplib consumer calling the same function directly (consume -> POST -> ack), in the
// same run against the same private RabbitMQ (each timed from its first call to its last ack: the
// connection set-up is left out of both); then the lag (ready messages) under a burst of 10,000.
//
//   flock /work/.bench.lock node --import tsx test/bench/queue.bench.ts [--messages 5000] [--rounds 3] [--prefetch 20] [--burst 10000]
import { spawn } from 'node:child_process';
import { once } from 'node:events';
import os from 'node:os';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { parseArgs } from 'node:util';
import { setTimeout as sleep } from 'node:timers/promises';
import { connect, type ChannelModel } from 'amqplib';
import { Agent, request } from 'undici';
import type { QueueTriggerSpec } from '../../src/manifest/types.ts';
import { httpInvoker } from '../../src/platform/queue-invoker.ts';
import { QueueConsumer } from '../../src/queue/queue-consumer.ts';
import { queueDepth as depth } from '../helpers/amqp.ts';
import { startRabbitmq } from '../services/rabbitmq.ts';

const { values } = parseArgs({
  options: {
    messages: { type: 'string', default: '5000' },
    rounds: { type: 'string', default: '3' },
    prefetch: { type: 'string', default: '20' },
    burst: { type: 'string', default: '10000' },
  },
});
const messages = Number(values.messages);
const rounds = Number(values.rounds);
const prefetch = Number(values.prefetch);
const burst = Number(values.burst);
const here = path.dirname(fileURLToPath(import.meta.url));

async function startUpstream(): Promise<{ url: string; stop: () => void }> {
  const child = spawn(process.execPath, ['--import', 'tsx', path.join(here, 'bench-upstream.ts')], { stdio: ['ignore', 'pipe', 'inherit'] });
  const [line] = (await once(child.stdout, 'data')) as [Buffer];
  const { port } = JSON.parse(line.toString()) as { port: number };
  return { url: `http://127.0.0.1:${port}`, stop: () => child.kill() };
}

async function fill(conn: ChannelModel, queue: string, n: number): Promise<void> {
  const ch = await conn.createConfirmChannel();
  await ch.assertQueue(queue, { durable: true });
  await ch.assertQueue(`${queue}.dlq`, { durable: true });
  const body = Buffer.from(JSON.stringify({ order: 42, items: ['a', 'b'] }));
  for (let i = 0; i < n; i++) {
    if (!ch.sendToQueue(queue, body, { messageId: `m-${i}`, persistent: true, contentType: 'application/json' })) await once(ch, 'drain');
  }
  await ch.waitForConfirms();
  await ch.close();
}


async function until(check: () => boolean): Promise<void> {
  while (!check()) await sleep(5);
}

/** consume -> POST the body to the function -> ack on 2xx (nack + requeue otherwise): the floor. */
interface RunFigures {
  readonly rate: number;
  /** CPU time of this process (the consumer's side) per message, in microseconds. */
  readonly cpuUs: number;
}

async function bareRun(amqpUrl: string, fnUrl: string, queue: string, n: number): Promise<RunFigures> {
  const conn = await connect(amqpUrl);
  const ch = await conn.createChannel();
  await ch.prefetch(prefetch);
  const agent = new Agent({ keepAliveTimeout: 30_000, connections: 256 });
  let done = 0;
  let t0 = 0;
  let cpu0 = process.cpuUsage();
  await ch.consume(queue, (msg) => {
    if (!msg) return;
    if (t0 === 0) {
      t0 = performance.now();
      cpu0 = process.cpuUsage();
    }
    void (async () => {
      const res = await request(`${fnUrl}/`, { method: 'POST', body: msg.content, headers: { 'content-type': 'application/json', 'ce-id': String(msg.properties.messageId) }, dispatcher: agent });
      await res.body.arrayBuffer();
      if (res.statusCode < 300) {
        ch.ack(msg);
        done++;
      } else ch.nack(msg);
    })();
  });
  await until(() => done >= n);
  const figures = measured(t0, cpu0, n);
  await conn.close();
  await agent.close();
  return figures;
}

function measured(t0: number, cpu0: NodeJS.CpuUsage, n: number): RunFigures {
  const seconds = (performance.now() - t0) / 1000;
  const cpu = process.cpuUsage(cpu0);
  return { rate: n / seconds, cpuUs: (cpu.user + cpu.system) / n };
}

function spec(amqpBare: string, queue: string): QueueTriggerSpec {
  return { name: 'bench', url: amqpBare, queue, declare: false, prefetch, retries: 5, deadLetter: `${queue}.dlq` };
}

async function slessRun(amqpBare: string, fnUrl: string, queue: string, n: number): Promise<RunFigures> {
  const invoke = httpInvoker({ resolveEndpoint: async () => ({ kind: 'ready', baseUrl: fnUrl, timeoutSec: 30 }) });
  let t0 = 0;
  let cpu0 = process.cpuUsage();
  const consumer = new QueueConsumer({
    namespace: 'bench',
    function: 'trivial',
    spec: spec(amqpBare, queue),
    invoke: (req) => {
      if (t0 === 0) {
        t0 = performance.now();
        cpu0 = process.cpuUsage();
      }
      return invoke(req);
    },
    log: { info: () => undefined, warn: (m) => console.warn(m) },
  });
  consumer.start();
  await until(() => consumer.status().counts.acked >= n);
  const figures = measured(t0, cpu0, n);
  await consumer.stop();
  return figures;
}

const median = (xs: number[]): number => {
  const s = [...xs].sort((a, b) => a - b);
  return s[Math.floor(s.length / 2)] as number;
};

async function main(): Promise<void> {
  const broker = await startRabbitmq();
  const upstream = await startUpstream();
  const conn = await connect(broker.url);
  try {
    console.log(`queue bench: ${messages} messages per run, prefetch ${prefetch}, ${rounds} rounds, load average ${os.loadavg().map((l) => l.toFixed(2)).join(' ')}`);
    const bare: RunFigures[] = [];
    const sless: RunFigures[] = [];
    for (let r = 0; r < rounds; r++) {
      // Alternate which goes first, so a warmer broker or a quieter moment favours neither.
      const order = r % 2 === 0 ? (['bare', 'sless'] as const) : (['sless', 'bare'] as const);
      for (const kind of order) {
        const queue = `bench-${kind}-${r}`;
        await fill(conn, queue, messages);
        const run = kind === 'bare' ? await bareRun(broker.url, upstream.url, queue, messages) : await slessRun(broker.bareUrl, upstream.url, queue, messages);
        (kind === 'bare' ? bare : sless).push(run);
        console.log(`  round ${r + 1} ${kind.padEnd(5)} ${run.rate.toFixed(0)} messages/s, ${run.cpuUs.toFixed(0)} µs CPU per message in the consumer`);
      }
    }
    const rate = (runs: RunFigures[]) => median(runs.map((x) => x.rate));
    const cpu = (runs: RunFigures[]) => median(runs.map((x) => x.cpuUs));
    console.log(
      `median: sless ${rate(sless).toFixed(0)} messages/s, bare amqplib ${rate(bare).toFixed(0)} messages/s: ${(rate(sless) / rate(bare)).toFixed(2)}x (goal >= 0.8x); ` +
        `CPU per message ${cpu(sless).toFixed(0)} µs vs ${cpu(bare).toFixed(0)} µs`,
    );

    // Lag under a burst: the consumer runs, then `burst` messages are published as fast as possible.
    const queue = 'bench-burst';
    await fill(conn, queue, 0);
    const consumer = new QueueConsumer({
      namespace: 'bench',
      function: 'trivial',
      spec: spec(broker.bareUrl, queue),
      invoke: httpInvoker({ resolveEndpoint: async () => ({ kind: 'ready', baseUrl: upstream.url, timeoutSec: 30 }) }),
      log: { info: () => undefined, warn: (m) => console.warn(m) },
    });
    consumer.start();
    await until(() => consumer.status().state === 'consuming');
    let maxLag = 0;
    let sampling = true;
    const sampler = (async () => {
      while (sampling) {
        maxLag = Math.max(maxLag, await depth(conn, queue));
        await sleep(100);
      }
    })();
    const t0 = performance.now();
    await fill(conn, queue, burst);
    const published = (performance.now() - t0) / 1000;
    await until(() => consumer.status().counts.acked >= burst);
    const drained = (performance.now() - t0) / 1000;
    sampling = false;
    await sampler;
    await consumer.stop();
    console.log(
      `burst of ${burst}: published in ${published.toFixed(2)} s, all acked ${drained.toFixed(2)} s after the first publish (${(burst / drained).toFixed(0)} messages/s), max lag ${maxLag} ready messages (sampled every 100 ms); load average ${os.loadavg().map((l) => l.toFixed(2)).join(' ')}`,
    );
  } finally {
    await conn.close();
    upstream.stop();
    await broker.destroy();
  }
}

await main();
