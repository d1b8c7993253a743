import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { consumerLimitProblem, effectivePrefetch } from './queue-consumers.ts';
import { credentialsFromSecret, queueOutcome } from './reconcilers/queue-trigger-step.ts';

const counts = { acked: 0, retried: 0, dead_lettered: 0 };

describe('the leader’s queue consumers, per namespace', () => {
  it('fit while the namespace holds fewer than its cap; the refusal names the setting', () => {
    assert.equal(consumerLimitProblem('shop', 19, 20), undefined);
    assert.match(consumerLimitProblem('shop', 20, 20) ?? '', /namespace shop already runs 20 queue consumers.*SLESS_MAX_QUEUE_CONSUMERS_PER_NAMESPACE=20/);
  });
  it('never prefetch more than the namespace may have in flight', () => {
    assert.equal(effectivePrefetch(10, 64), 10);
    assert.equal(effectivePrefetch(1000, 64), 64);
  });
});

describe('a queue Trigger’s credentials and condition', () => {
  it('come from a Secret with username and password; a missing Secret or key is named', () => {
    assert.deepEqual(credentialsFromSecret('shop', 'rabbit', { data: { username: 'u', password: 'p' } }), { username: 'u', password: 'p' });
    assert.match(String(credentialsFromSecret('shop', 'rabbit', undefined)), /Secret shop\/rabbit \(spec\.queue\.secret\) does not exist/);
    assert.match(String(credentialsFromSecret('shop', 'rabbit', { data: { username: 'u' } })), /has no password key/);
  });
  it('is Ready while consuming, Stalled for a missing queue or a refused login, progressing otherwise', () => {
    assert.equal(queueOutcome({ state: 'consuming', inFlight: 0, redeliveries: 0, counts }, 'orders', 'amqp://r/').reason, 'Consuming');
    const missing = queueOutcome({ state: 'waiting', message: 'queue "orders" (declare: false): does not exist on amqp://r/', inFlight: 0, redeliveries: 0, counts }, 'orders', 'amqp://r/');
    assert.deepEqual([missing.kind, missing.reason], ['stalled', 'QueueNotFound']);
    const login = queueOutcome({ state: 'waiting', message: 'the broker at amqp://r/ refused the login of secret s', inFlight: 0, redeliveries: 0, counts }, 'orders', 'amqp://r/');
    assert.deepEqual([login.kind, login.reason], ['stalled', 'LoginRefused']);
    assert.equal(queueOutcome(undefined, 'orders', 'amqp://r/').kind, 'progressing');
  });
});
