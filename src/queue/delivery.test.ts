import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { attemptsOf, callHeaders, decide, eventId, eventSource, retryQueues, type RetryDelays } from './delivery.ts';

const spec = { queue: 'orders', retries: 3, url: 'amqp://mq.example:5672/%2f' };
const delays: RetryDelays = { baseMs: 1000, maxMs: 3000 };
const fail = { ok: false as const, status: 500, error: 'HTTP 500: boom' };

describe('queue delivery decisions', () => {
  it('acks a 2xx answer whatever the attempts so far', () => {
    assert.deepEqual(decide({ ok: true, status: 204 }, 2, spec, delays), { kind: 'ack' });
  });

  it('retries a failure with a growing delay through the delay queue of that delay', () => {
    assert.deepEqual(decide(fail, 0, spec, delays), { kind: 'retry', attempts: 1, delayMs: 1000, retryQueue: 'orders.retry.1000ms', error: fail.error });
    assert.deepEqual(decide(fail, 1, spec, delays), { kind: 'retry', attempts: 2, delayMs: 2000, retryQueue: 'orders.retry.2000ms', error: fail.error });
    assert.equal(decide(fail, 2, spec, delays).kind, 'retry');
  });

  it('dead-letters after retries + 1 calls, saying how many', () => {
    assert.deepEqual(decide(fail, 3, spec, delays), { kind: 'dead-letter', attempts: 4, error: fail.error });
    assert.deepEqual(decide(fail, 0, { ...spec, retries: 0 }, delays), { kind: 'dead-letter', attempts: 1, error: fail.error });
  });

  it('declares one delay queue per distinct delay (capped delays share one)', () => {
    assert.deepEqual(retryQueues({ queue: 'q', retries: 4 }, delays), [
      { name: 'q.retry.1000ms', delayMs: 1000 },
      { name: 'q.retry.2000ms', delayMs: 2000 },
      { name: 'q.retry.3000ms', delayMs: 3000 },
    ]);
    assert.deepEqual(retryQueues({ queue: 'q', retries: 0 }, delays), []);
  });

  it('reads the attempts header as a number or a string, anything else as a fresh message', () => {
    assert.equal(attemptsOf({ 'x-sless-attempts': 2 }), 2);
    assert.equal(attemptsOf({ 'x-sless-attempts': '3' }), 3);
    assert.equal(attemptsOf({ 'x-sless-attempts': 'x' }), 0);
    assert.equal(attemptsOf({}), 0);
  });

  it('gives CloudEvents binary headers: the message id, the broker and queue as source, the AMQP timestamp', () => {
    const now = new Date('2026-12-06T10:00:00Z');
    const h = callHeaders({ body: Buffer.from('{}'), messageId: 'm-1', timestamp: 1_765_000_000, contentType: 'application/json', headers: { 'x-sless-attempts': 1 } }, eventSource(spec), now);
    assert.deepEqual(h, {
      'content-type': 'application/json',
      'ce-specversion': '1.0',
      'ce-id': 'm-1',
      'ce-source': 'amqp://mq.example:5672/%2f/orders',
      'ce-type': 'ru.kube5s.sless.queue.message',
      'ce-time': new Date(1_765_000_000_000).toISOString(),
      'x-sless-attempt': '2',
    });
  });

  it('without a message id, the id is a digest of the body: the same on every redelivery', () => {
    const a = eventId({ body: Buffer.from('hello') });
    assert.equal(a, eventId({ body: Buffer.from('hello') }));
    assert.match(a, /^sha256:[0-9a-f]{64}$/);
    assert.notEqual(a, eventId({ body: Buffer.from('hello!') }));
  });
});
