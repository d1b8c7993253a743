// The set of queue triggers a process runs (src/queue/queue-triggers.ts) against the real RabbitMQ:
// a new trigger starts consuming, a changed one is restarted with its new definition, a removed one
// stops, and one whose secret cannot be read waits with the reason until it can.
import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { setTimeout as sleep } from 'node:timers/promises';
import { Registry } from 'prom-client';
import type { QueueTriggerSpec } from '../../src/manifest/types.ts';
import { QueueTriggers, type QueueTriggerTarget } from '../../src/queue/queue-triggers.ts';

const amqpUrl = process.env.SLESS_TEST_AMQP_URL;

async function until(what: string, check: () => boolean, timeoutMs = 30_000): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  while (!check()) {
    if (Date.now() > deadline) throw new Error(`timed out waiting until ${what}`);
    await sleep(50);
  }
}

describe('queue triggers set', () => {
  let credentials: { username: string; password: string } | undefined;
  let triggers: QueueTriggers;
  const logs: string[] = [];
  const registry = new Registry();

  before(() => {
    assert.ok(amqpUrl, 'SLESS_TEST_AMQP_URL is not set: run through `npm test` (it starts test/services/rabbitmq.ts)');
    triggers = new QueueTriggers({
      invoke: async () => ({ outcome: { ok: true, status: 200 }, responseBytes: 0 }),
      credentialsOf: async (_ns, secret) => {
        if (!credentials) throw new Error(`secret "${secret}" not found`);
        return credentials;
      },
      registry,
      log: { info: (m) => logs.push(m), warn: (m) => logs.push(m), error: (m) => logs.push(m) },
    });
  });
  after(() => triggers?.close());

  const url = () => {
    const u = new URL(amqpUrl as string);
    u.username = '';
    u.password = '';
    return u.toString();
  };
  const target = (over: Partial<QueueTriggerSpec> = {}): QueueTriggerTarget => ({
    namespace: 'dev',
    function: 'worker',
    spec: { name: 'orders', url: url(), queue: `set-${process.pid}`, declare: true, prefetch: 5, retries: 1, deadLetter: `set-${process.pid}.dlq`, ...over },
  });
  const only = () => {
    const [s] = triggers.statuses();
    assert.ok(s, 'one trigger');
    return s;
  };

  it('starts a new trigger, restarts a changed one, stops a removed one', async () => {
    await triggers.apply([target()]);
    await until('consuming', () => only().status.state === 'consuming');
    await triggers.apply([target()]); // the same definition: left running
    assert.equal(logs.filter((l) => l.includes('queue trigger stopped')).length, 0);
    await triggers.apply([target({ prefetch: 7 })]);
    assert.equal(only().target.spec.prefetch, 7);
    assert.equal(logs.filter((l) => l.includes('dev/worker/orders: queue trigger stopped (changed)')).length, 1);
    await until('consuming again', () => only().status.state === 'consuming');
    await triggers.apply([]);
    assert.deepEqual(triggers.statuses(), []);
    assert.ok(logs.some((l) => l === 'dev/worker/orders: queue trigger stopped'));
  });

  it('a trigger whose secret cannot be read waits with the reason, logged once, and starts once it can', async () => {
    const withSecret = target({ name: 'secured', secret: 'rabbit' });
    await triggers.apply([withSecret]);
    await triggers.apply([withSecret]);
    assert.equal(only().status.state, 'waiting');
    assert.equal(only().status.message, 'dev/worker/secured: secret "rabbit" not found');
    assert.equal(logs.filter((l) => l.includes('secret "rabbit" not found')).length, 1);
    const u = new URL(amqpUrl as string);
    credentials = { username: decodeURIComponent(u.username), password: decodeURIComponent(u.password) };
    await triggers.apply([withSecret]);
    await until('consuming with the credentials', () => only().status.state === 'consuming');
    await triggers.apply([]);
  });
});
